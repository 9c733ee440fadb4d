package xdsconformance

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// Row is one push compared: predicted against observed.
type Row struct {
	Scenario, Version, Rollout, Path, Timing string
	// State labels the plan state ("step 2", "promote").
	State string
	// Index is the push's order within the state (1-based).
	Index               int
	Predicted, Observed string
	Match               bool
	// Why lists the fields that differ.
	Why []string
}

// Result is the comparison of one observation set with the model.
type Result struct {
	Rows []Row
	// Writes counts the plan writes played; Pushes the rows compared.
	Writes, Pushes, Matched int
	// Stale lists runs whose recorded writes differ from the plan's today.
	Stale []string
}

// Compare predicts every scenario of the observations under the model the
// observation names and compares push by push. root is the repository root
// the bundle paths are relative to.
func Compare(root string, obs []*Observation) (*Result, error) {
	res := &Result{}
	for _, o := range obs {
		if err := compareOne(root, o, res); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", o.Scenario, o.Istio.Version, err)
		}
	}
	return res, nil
}

func compareOne(root string, o *Observation, res *Result) error {
	g, err := load.Paths([]string{filepath.Join(root, filepath.FromSlash(o.Bundle))}, load.Options{})
	if err != nil {
		return err
	}
	m, err := xds.ForVersion(o.Istio.Model)
	if err != nil {
		return err
	}
	sc := xds.NewScoper(g)
	plans := map[string]*plan.Plan{}
	for _, p := range plan.Build(g) {
		plans[p.Rollout.Namespace+"/"+p.Rollout.Name] = p
	}
	for _, run := range o.Runs {
		p := plans[run.Rollout]
		if p == nil {
			return fmt.Errorf("no plan for Rollout %s", run.Rollout)
		}
		pr := xds.Predict(m, sc, p)
		states, pushes := p.States[1:], pr.States[1:]
		if run.Path == "abort" {
			states, pushes = p.Abort, pr.Abort
		}
		id := fmt.Sprintf("%s %s %s %s", o.Scenario, run.Rollout, run.Path, run.Timing)
		if len(states) != len(run.States) {
			res.Stale = append(res.Stale, fmt.Sprintf("%s: plan has %d states, the record %d", id, len(states), len(run.States)))
			continue
		}
		stale := false
		for i, s := range states {
			if !sameWrites(s.Writes, run.States[i].Writes) {
				res.Stale = append(res.Stale, fmt.Sprintf("%s %s: the plan's writes changed since the record", id, label(s)))
				stale = true
			}
		}
		if stale {
			continue
		}
		for i, s := range states {
			res.Writes += len(s.Writes)
			want := pushes[i].Pushes
			if run.Timing == "after" && pushes[i].IfLate != nil {
				want = pushes[i].IfLate
			}
			got := run.States[i].Pushes
			for j := 0; j < max(len(want), len(got)); j++ {
				row := Row{Scenario: o.Scenario, Version: o.Istio.Version, Rollout: run.Rollout, Path: run.Path, Timing: run.Timing, State: label(s), Index: j + 1}
				var wp *xds.Push
				var gp *Push
				if j < len(want) {
					wp = &want[j]
				}
				if j < len(got) {
					gp = &got[j]
				}
				row.Predicted, row.Observed, row.Why = comparePush(wp, gp, o.Proxies)
				row.Match = len(row.Why) == 0
				res.Rows = append(res.Rows, row)
				res.Pushes++
				if row.Match {
					res.Matched++
				}
			}
		}
	}
	return nil
}

func label(s plan.State) string {
	if s.Step >= 0 {
		return fmt.Sprintf("step %d", s.Step)
	}
	return string(s.Phase)
}

func sameWrites(ws []plan.Write, refs []WriteRef) bool {
	if len(ws) != len(refs) {
		return false
	}
	for i, w := range ws {
		r := refs[i]
		if string(w.Kind) != r.Kind || w.Object.String() != r.Object || w.Field != r.Field || w.Old != r.Old || w.New != r.New || w.Batch != r.Batch {
			return false
		}
	}
	return true
}

// view is the comparable shape of one push, predicted or observed.
type view struct {
	class    string
	keys     []string
	eds      string
	reached  map[string][]string // proxy → types sent (absent: not pushed)
	proxyEDS map[string]string   // proxy → its EDS: none, partial, all
	changed  []string
}

func (v view) String() string {
	var px []string
	for _, n := range sortedNames(v.reached) {
		px = append(px, n+"="+strings.Join(v.reached[n], ","))
	}
	if len(px) == 0 {
		px = []string{"no proxy"}
	}
	ch := strings.Join(v.changed, ",")
	if ch == "" {
		ch = "-"
	}
	return fmt.Sprintf("%s eds=%s changes %s; %s; keys %s", v.class, v.eds, ch, strings.Join(px, " "), strings.Join(v.keys, " "))
}

func sortedNames(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func comparePush(wp *xds.Push, gp *Push, proxies []Proxy) (pred, obs string, why []string) {
	var w, g *view
	if wp != nil {
		v := predictedView(wp, proxies)
		w = &v
		pred = v.String()
	} else {
		pred = "(no push)"
	}
	if gp != nil {
		v := observedView(gp)
		if w != nil {
			// A type a proxy subscribes to nothing of cannot be sent to it
			// (a gateway no Gateway configures has no route to receive).
			for name, ts := range w.reached {
				got := gp.Proxies[name]
				w.reached[name] = slices.DeleteFunc(slices.Clone(ts), func(t string) bool {
					return t == "RDS" && got.RDSWatched == 0 || t == "EDS" && got.EDSWatched == 0
				})
			}
			pred = w.String()
		}
		g = &v
		obs = v.String()
	} else {
		obs = "(no push)"
	}
	if w == nil || g == nil {
		return pred, obs, []string{"push count"}
	}
	if w.class != g.class {
		why = append(why, "class")
	}
	if !slices.Equal(w.keys, g.keys) {
		why = append(why, "keys")
	}
	if w.eds != g.eds {
		why = append(why, "eds")
	}
	if !slices.Equal(w.changed, g.changed) {
		why = append(why, "changes")
	}
	for _, p := range proxies {
		wt, win := w.reached[p.Name]
		gt, gin := g.reached[p.Name]
		switch {
		case win != gin:
			why = append(why, "scope "+p.Name)
		case !slices.Equal(wt, gt):
			why = append(why, "types "+p.Name)
		case win && w.proxyEDS[p.Name] != g.proxyEDS[p.Name]:
			why = append(why, "eds "+p.Name)
		}
	}
	return pred, obs, why
}

func typeStrings(ts []xds.Type) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, string(t))
	}
	return out
}

func predictedView(p *xds.Push, proxies []Proxy) view {
	v := view{class: string(p.Class), keys: slices.Clone(p.Keys), eds: string(p.EDS), reached: map[string][]string{}, proxyEDS: map[string]string{}, changed: typeStrings(p.Effective)}
	sort.Strings(v.keys)
	for _, px := range proxies {
		ok, types, eds := p.ForProxy(xds.ProxyKind(px.Kind), px.Namespace)
		if !ok {
			continue
		}
		v.reached[px.Name] = typeStrings(types)
		v.proxyEDS[px.Name] = string(eds)
	}
	return v
}

// InScope reports whether a predicted scope reaches a connected proxy.
func InScope(s xds.Scope, p Proxy) bool { return s.Reaches(xds.ProxyKind(p.Kind), p.Namespace) }

var typeRank = map[string]int{"CDS": 0, "EDS": 1, "LDS": 2, "RDS": 3}

func observedView(p *Push) view {
	v := view{keys: slices.Clone(p.Keys), reached: map[string][]string{}, proxyEDS: map[string]string{}}
	sort.Strings(v.keys)
	changed := map[string]bool{}
	edsAny, edsPartial := false, false
	for name, got := range p.Proxies {
		// Reached: ProxyNeedsPush said yes and the generators sent something
		// (a gateway considered for a host it cannot see gets nothing).
		if !got.Pushed || len(got.Sent) == 0 {
			continue
		}
		v.reached[name] = slices.Clone(got.Sent)
		for _, t := range got.Changed {
			changed[t] = true
		}
		v.proxyEDS[name] = "none"
		if slices.Contains(got.Sent, "EDS") {
			edsAny = true
			v.proxyEDS[name] = "all"
			if got.EDSSent < got.EDSWatched {
				edsPartial = true
				v.proxyEDS[name] = "partial"
			}
		}
	}
	for t := range changed {
		v.changed = append(v.changed, t)
	}
	sort.Slice(v.changed, func(i, j int) bool { return typeRank[v.changed[i]] < typeRank[v.changed[j]] })
	if v.changed == nil {
		v.changed = []string{}
	}
	switch {
	case !edsAny:
		v.eds = "none"
	case edsPartial:
		v.eds = "partial"
	default:
		v.eds = "all"
	}
	onlyEndpoints := len(p.Keys) > 0
	for _, k := range p.Keys {
		if !strings.HasPrefix(k, "Endpoints/") {
			onlyEndpoints = false
		}
	}
	switch {
	case p.Full == nil && onlyEndpoints:
		v.class = "endpoints-only"
	case p.Full == nil:
		v.class = "config"
	case !*p.Full:
		v.class = "incremental-eds"
	case v.eds == "partial":
		v.class = "partial-full-eds"
	default:
		v.class = "full"
	}
	return v
}

// ID names a row the way known-differences.txt lists it:
// "<version> <scenario> <rollout> <path>/<timing> <state> #<push>".
func (r Row) ID() string {
	return fmt.Sprintf("%s %s %s %s/%s %s #%d", r.Version, r.Scenario, r.Rollout, r.Path, r.Timing, r.State, r.Index)
}

// LoadKnown reads a known-differences file: one row ID per line, then two
// spaces and the fields that differ; # starts a comment.
func LoadKnown(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range strings.Split(string(raw), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		id, why, _ := strings.Cut(l, "  ")
		out[strings.TrimSpace(id)] = strings.TrimSpace(why)
	}
	return out, nil
}

// Table renders rows as predicted | observed | match.
func Table(rows []Row, onlyMismatches bool) string {
	var b strings.Builder
	for _, r := range rows {
		if onlyMismatches && r.Match {
			continue
		}
		mark := "yes"
		if !r.Match {
			mark = "NO (" + strings.Join(r.Why, ", ") + ")"
		}
		fmt.Fprintf(&b, "%s %s %s %s/%s %s #%d\n  predicted | %s\n  observed  | %s\n  match     | %s\n",
			r.Version, r.Scenario, r.Rollout, r.Path, r.Timing, r.State, r.Index, r.Predicted, r.Observed, mark)
	}
	return b.String()
}
