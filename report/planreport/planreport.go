// Package planreport renders step plans with their xDS predictions: a text
// table for terminals (at most 100 columns), JSON for tools (field names
// documented in docs/plan.md), Markdown and Mermaid for pull-request comments.
package planreport

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

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

// Build assembles the document for plans predicted with one model.
func Build(m *xds.Model, sc *xds.Scoper, plans []*plan.Plan) *Document {
	doc := &Document{SchemaVersion: SchemaVersion, IstioVersion: m.Version, Verified: m.Verified, Rollouts: []Rollout{}}
	for _, p := range plans {
		pr := xds.Predict(m, sc, p)
		r := Rollout{Rollout: p.Rollout, Strategy: p.Strategy, Split: p.Split, Replicas: p.Replicas,
			AbortFrom: p.AbortFrom, Summary: pr.Summary, States: []State{}, Abort: []State{}}
		if p.Resource != nil {
			pos := p.Resource.Pos("metadata.name")
			r.File, r.Line = p.Resource.File, pos.Line
		}
		for i, s := range p.States {
			r.States = append(r.States, State{State: s, Pushes: nonNil(pr.States[i].Pushes), PushesIfLate: pr.States[i].IfLate})
		}
		for i, s := range p.Abort {
			r.Abort = append(r.Abort, State{State: s, Pushes: nonNil(pr.Abort[i].Pushes), PushesIfLate: pr.Abort[i].IfLate})
		}
		doc.Rollouts = append(doc.Rollouts, r)
	}
	return doc
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
		return fmt.Sprintf("step %d", s.Step)
	}
	return string(s.Phase)
}

// weights renders the routes' weights: "primary s50 c50 a20".
func weights(s plan.State) string {
	if len(s.Routes) == 0 {
		return "-"
	}
	var parts []string
	for _, rt := range s.Routes {
		name := rt.Name
		if name == "" {
			name = fmt.Sprintf("%s[%d]", rt.Kind, rt.Index)
		}
		var ws []string
		for _, d := range rt.Dests {
			mark := ""
			if d.Clamped {
				mark = "!"
			}
			ws = append(ws, fmt.Sprintf("%c%d%s", roleLetter(d.Role), d.Weight, mark))
		}
		parts = append(parts, name+" "+strings.Join(ws, " "))
	}
	for _, m := range s.Managed {
		parts = append(parts, "+"+m.Name)
	}
	return strings.Join(parts, "; ")
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

func writeText(w plan.Write) string {
	return fmt.Sprintf("%s %s: %s → %s", w.Object, w.Field, w.Old, w.New)
}

func types(ts []xds.Type) string {
	if len(ts) == 0 {
		return "-"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ",")
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
