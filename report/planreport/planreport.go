// Package planreport renders step plans with their xDS predictions: a text
// table for terminals (at most 100 columns), JSON for tools (field names
// documented in docs/plan.md), Markdown and Mermaid for pull-request comments.
package planreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// SchemaVersion is bumped when a JSON field changes meaning or disappears.
const SchemaVersion = 1

// Width is the widest line the text format writes.
const Width = 100

// Document is the JSON output of `rolloutlint plan`.
type Document struct {
	SchemaVersion int    `json:"schemaVersion"`
	IstioVersion  string `json:"istioVersion"`
	// Verified names the istiod the model was checked against.
	Verified xds.Verification `json:"verified"`
	Rollouts []Rollout        `json:"rollouts"`
}

// Rollout is one Rollout's plan and prediction.
type Rollout struct {
	Rollout   plan.Object `json:"rollout"`
	File      string      `json:"file"`
	Line      int         `json:"line"`
	Strategy  string      `json:"strategy"`
	Split     plan.Split  `json:"split"`
	Replicas  int32       `json:"replicas"`
	States    []State     `json:"states"`
	AbortFrom int         `json:"abortFrom"`
	Abort     []State     `json:"abort"`
	Summary   xds.Summary `json:"summary"`
	// NotInBundle are the objects the Rollout names that the input does not
	// hold: the plan lists its writes to them but cannot know their state.
	NotInBundle []Reference `json:"notInBundle"`
	// Rejected are the spec errors for which Argo Rollouts refuses the Rollout
	// (condition InvalidSpec): such a Rollout runs no step, so it is not
	// played out and States, Abort and Summary are empty.
	Rejected []Rejection `json:"rejected"`
	// Live is the live state the plan starts from (plan --cluster).
	Live *plan.Live `json:"live,omitempty"`
	// Unit is the deployable unit the Rollout was rendered in (a
	// Kustomize root, a Helm chart, an Argo CD Application's source);
	// omitted for files read as written. File and Line then point into the
	// file the user wrote, not into the rendered output.
	Unit *Unit `json:"unit,omitempty"`
}

// Unit names the deployable unit a Rollout was rendered in.
type Unit struct {
	// Kind is kustomize, helm or directory (an Application's directory
	// source).
	Kind string `json:"kind"`
	// Dir is the kustomization root, the chart or the directory, as
	// discovered from the paths given.
	Dir string `json:"dir"`
	// Application is namespace/name of the Argo CD Application that
	// renders the unit, when one does.
	Application string `json:"application,omitempty"`
}

// String is the unit in a few words: "kustomize overlays/prod", with
// "(Application argocd/app)" when an Application renders it.
func (u *Unit) String() string {
	s := u.Kind + " " + u.Dir
	if u.Application != "" {
		s += " (Application " + u.Application + ")"
	}
	return s
}

// Bundle is the Rollouts of one bundle: N plans from At (as in Write),
// predicted with the bundle's Scoper and listed with its rejections.
type Bundle struct {
	N        int
	At       func(i int, pl *plan.Planner) *plan.Plan
	Scoper   *xds.Scoper
	Rejected map[plan.Object][]Rejection
	// Origin, when set, gives a plan's unit (nil for none) and the
	// position of its Rollout in the files the user wrote (file "" keeps
	// the Rollout's own file and name line).
	Origin func(p *plan.Plan) (u *Unit, file string, line int)
}

// Reference is an object a Rollout names that is not in the bundle.
type Reference struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Path is the Rollout field that names it.
	Path string `json:"path"`
	// Effect says what the plan cannot predict without it.
	Effect string `json:"effect"`
}

// Rejection is one finding that makes Argo Rollouts refuse a Rollout.
type Rejection struct {
	RuleID  string `json:"ruleId"`
	Message string `json:"message"`
	// Detail is the finding's detail (what follows, how to fix it), as in
	// lint's JSON; empty when the rule has no more to say.
	Detail string `json:"detail,omitempty"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

// State is a plan state with the pushes that lead into it.
type State struct {
	plan.State
	Pushes []xds.Push `json:"pushes"`
	// PushesIfLate replace Pushes when an EndpointSlice update that follows
	// a selector write lands after the debounce window (omitted when the
	// timing makes no difference).
	PushesIfLate []xds.Push `json:"pushesIfLate,omitempty"`
}

// Build assembles the document for plans predicted with one model. rejected
// holds, by Rollout, the spec errors Argo Rollouts refuses it for: those
// Rollouts are listed with the reasons and not played out.
func Build(m *xds.Model, sc *xds.Scoper, plans []*plan.Plan, rejected map[plan.Object][]Rejection) *Document {
	doc := head(m)
	for _, p := range plans {
		doc.Rollouts = append(doc.Rollouts, rolloutOf(m, sc, p, rejected))
	}
	return doc
}

// BuildBundles is Build over the plans of several bundles, in order, each
// predicted with its own bundle's Scoper and rejections.
func BuildBundles(m *xds.Model, bundles []Bundle) *Document {
	doc := head(m)
	for i := range bundles {
		b := &bundles[i]
		for j := range b.N {
			if p := b.At(j, nil); p != nil {
				doc.Rollouts = append(doc.Rollouts, b.rolloutOf(nil, m, p))
			}
		}
	}
	return doc
}

// rolloutOf is one plan's entry, with the bundle's Scoper, rejections and
// origin, in u's memory (nil: its own).
func (b *Bundle) rolloutOf(u *reuse, m *xds.Model, p *plan.Plan) Rollout {
	r := u.rolloutOf(m, b.Scoper, p, b.Rejected)
	if b.Origin != nil {
		unit, file, line := b.Origin(p)
		r.Unit = unit
		if file != "" {
			r.File, r.Line = file, line
		}
	}
	return r
}

// head is the document without Rollouts.
func head(m *xds.Model) *Document {
	return &Document{SchemaVersion: SchemaVersion, IstioVersion: m.Version, Verified: m.Verified, Rollouts: []Rollout{}}
}

// rolloutOf is one plan's entry of the document, its pushes predicted.
func rolloutOf(m *xds.Model, sc *xds.Scoper, p *plan.Plan, rejected map[plan.Object][]Rejection) Rollout {
	return (*reuse)(nil).rolloutOf(m, sc, p, rejected)
}

// reuse is the memory of a goroutine that formats Rollouts one after
// another and drops each: the Rollout its rolloutOf returns is valid until
// its next call. A nil *reuse allocates every Rollout anew.
type reuse struct {
	pd            xds.Predictor
	states, abort []State
}

// statesOf returns a slice of n states in *buf (nil u: a new one), never nil.
func (u *reuse) statesOf(buf *[]State, n int) []State {
	if u == nil || cap(*buf) < n || cap(*buf) == 0 {
		s := make([]State, n, max(n, 1))
		if u != nil {
			*buf = s
		}
		return s
	}
	return (*buf)[:n]
}

func (u *reuse) rolloutOf(m *xds.Model, sc *xds.Scoper, p *plan.Plan, rejected map[plan.Object][]Rejection) Rollout {
	r := Rollout{Rollout: p.Rollout, Strategy: p.Strategy, Split: p.Split, Replicas: p.Replicas,
		States: []State{}, Abort: []State{}, NotInBundle: notInBundle(p), Rejected: []Rejection{}, Live: p.Live}
	if p.Resource != nil {
		r.File, r.Line = p.Resource.File, p.Resource.NameLine()
	}
	if rj := rejected[p.Rollout]; len(rj) > 0 {
		r.Rejected = rj
		return r
	}
	var pr *xds.Prediction
	if u == nil {
		pr = xds.Predict(m, sc, p)
	} else {
		pr = u.pd.Predict(m, sc, p)
	}
	r.AbortFrom, r.Summary = p.AbortFrom, pr.Summary
	var sb, ab *[]State
	if u != nil {
		sb, ab = &u.states, &u.abort
	}
	r.States = u.statesOf(sb, len(p.States))
	for i, s := range p.States {
		r.States[i] = State{State: s, Pushes: nonNil(pr.States[i].Pushes), PushesIfLate: pr.States[i].IfLate}
	}
	r.Abort = u.statesOf(ab, len(p.Abort))
	for i, s := range p.Abort {
		r.Abort[i] = State{State: s, Pushes: nonNil(pr.Abort[i].Pushes), PushesIfLate: pr.Abort[i].IfLate}
	}
	return r
}

// jsonOpening is the indented JSON of a document without Rollouts, up to
// and not including the "rollouts" array's opening bracket.
func jsonOpening(doc *Document) ([]byte, error) {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	const tail = "[]\n}"
	if !bytes.HasSuffix(b, []byte(tail)) {
		return nil, fmt.Errorf("plan JSON: unexpected document shape")
	}
	return b[:len(b)-len(tail)], nil
}

// notInBundle lists the Services, VirtualServices, DestinationRule and
// analysis templates the Rollout names that did not resolve, in field order.
func notInBundle(p *plan.Plan) []Reference {
	out := []Reference{}
	rr := p.Refs
	if rr == nil {
		return out
	}
	ns := p.Rollout.Namespace
	for _, s := range rr.Services {
		if s.Target == nil && s.Name != "" {
			out = append(out, Reference{Kind: "Service", Namespace: ns, Name: s.Name, Path: s.Path,
				Effect: "its selector writes are listed; whether it exists, and the endpoint pushes its pods cause, are not known"})
		}
	}
	for _, vs := range rr.VirtualServices {
		if vs.Target == nil {
			out = append(out, Reference{Kind: "VirtualService", Namespace: vs.Namespace, Name: vs.Name, Path: vs.Path,
				Effect: "its routes' weights and the pushes they cause are not predicted"})
		}
	}
	if dr := rr.DestinationRule; dr != nil && dr.Target == nil {
		out = append(out, Reference{Kind: "DestinationRule", Namespace: dr.Namespace, Name: dr.Name, Path: dr.Path,
			Effect: "its subset label writes are listed; the subsets' current labels are not known"})
	}
	for _, t := range rr.Templates {
		if t.Target == nil {
			kind := "AnalysisTemplate"
			tns := ns
			if t.Cluster {
				kind, tns = "ClusterAnalysisTemplate", ""
			}
			out = append(out, Reference{Kind: kind, Namespace: tns, Name: t.Name, Path: t.Path,
				Effect: "the analysis it runs is not known"})
		}
	}
	return out
}

// refText is a reference in one line: kind ns/name (field).
func refText(r Reference) string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + r.Name
	}
	return fmt.Sprintf("%s %s (%s): %s", r.Kind, name, r.Path, r.Effect)
}

// rejectionText is a rejection in one line: file:line:col RLxxxx message.
func rejectionText(r Rejection) string {
	return fmt.Sprintf("%s:%d:%d: %s %s", r.File, r.Line, r.Column, r.RuleID, r.Message)
}

func nonNil(p []xds.Push) []xds.Push {
	if p == nil {
		return []xds.Push{}
	}
	return p
}

// Writer writes a document in one format.
type Writer func(w io.Writer, doc *Document) error

// Formats are the output formats by name.
var Formats = map[string]Writer{"text": Text, "json": JSON, "markdown": Markdown, "mermaid": Mermaid}

// FormatNames returns the format names, sorted.
func FormatNames() []string {
	out := make([]string, 0, len(Formats))
	for k := range Formats {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// JSON writes the document, indented.
func JSON(w io.Writer, doc *Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// stepLabel names a state for tables.
func stepLabel(s plan.State) string {
	if s.Step >= 0 {
		return "step " + strconv.Itoa(s.Step)
	}
	return string(s.Phase)
}

// appendStepLabel appends stepLabel(s) to dst.
func appendStepLabel(dst []byte, s plan.State) []byte {
	if s.Step >= 0 {
		return strconv.AppendInt(append(dst, "step "...), int64(s.Step), 10)
	}
	return append(dst, s.Phase...)
}

// weights renders the routes' weights: "primary s50 c50 a20".
func weights(s plan.State) string { return string(appendWeights(nil, s)) }

// appendWeights appends weights(s) to dst: each route's name and weights,
// then the managed routes, joined by "; ".
func appendWeights(dst []byte, s plan.State) []byte {
	if len(s.Routes) == 0 {
		return append(dst, '-')
	}
	for i, rt := range s.Routes {
		if i > 0 {
			dst = append(dst, "; "...)
		}
		if rt.Name != "" {
			dst = append(dst, rt.Name...)
		} else {
			dst = append(append(append(append(dst, rt.Kind...), '['), strconv.Itoa(rt.Index)...), ']')
		}
		dst = append(dst, ' ')
		for j, d := range rt.Dests {
			if j > 0 {
				dst = append(dst, ' ')
			}
			dst = strconv.AppendInt(append(dst, roleLetter(d.Role)), int64(d.Weight), 10)
			if d.Clamped {
				dst = append(dst, '!')
			}
		}
	}
	for _, m := range s.Managed {
		dst = append(append(dst, "; +"...), m.Name...)
	}
	return dst
}

func roleLetter(r plan.Role) byte {
	switch r {
	case plan.RoleStable:
		return 's'
	case plan.RoleCanary:
		return 'c'
	case plan.RoleAdditional:
		return 'a'
	case plan.RoleExperiment:
		return 'x'
	}
	return '?'
}

func writeText(w plan.Write) string { return string(appendWriteText(nil, w)) }

// appendWriteText appends a write in one line: object field: old → new.
func appendWriteText(dst []byte, w plan.Write) []byte {
	dst = append(append(append(append(append(dst, w.Object.Kind...), '/'), w.Object.Namespace...), '/'), w.Object.Name...)
	dst = append(append(append(append(dst, ' '), w.Field...), ": "...), w.Old...)
	return append(append(dst, " → "...), w.New...)
}

func types(ts []xds.Type) string { return string(appendTypes(nil, ts)) }

// appendTypes appends the types joined by commas, "-" when there are none.
func appendTypes(dst []byte, ts []xds.Type) []byte {
	if len(ts) == 0 {
		return append(dst, '-')
	}
	for i, t := range ts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, t...)
	}
	return dst
}

// pushText is the one-line summary of a push.
func pushText(p xds.Push) string {
	return fmt.Sprintf("%s: sent sidecar %s / gateway %s; changes %s", p.Class, types(p.SidecarTypes), types(p.GatewayTypes), types(p.Effective))
}

func splitName(p Rollout) string {
	switch p.Split {
	case plan.SplitHost:
		return "host-level split"
	case plan.SplitSubset:
		return "subset-level split"
	}
	return "no traffic routing"
}

// keyOf renders a rollout key for headings.
func keyOf(o plan.Object) string { return o.Namespace + "/" + o.Name }
