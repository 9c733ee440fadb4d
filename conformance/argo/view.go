package argoconformance

import (
	"fmt"
	"sort"
	"strings"
)

// View is one state reduced to what both the plan and the controller can
// say about it: the replica counts, each managed route's destination
// weights, the header/mirror routes present, the revision each
// selector/subset label selects, and the API writes that led into the state,
// in order. Both sides render to the same strings, so the comparison is
// plain equality. The recorded observations under
// testdata/conformance/argo/observed are Views; semantics/plan renders its
// states the same way in its conformance test.
type View struct {
	Phase string `json:"phase"`
	Step  int    `json:"step"`
	// Action describes the state (the plan's words; empty in observations).
	Action string `json:"action,omitempty"`
	// Fields maps a field key to its value:
	//   "pods"                                  "<stable>/<canary>" desired replicas
	//   "route VirtualService/ns/name http/NAME" "host[/subset] weight, ..." (NAME, or #i when unnamed)
	//   "managed VirtualService/ns/name"         "name type[ percentage], ..." sorted by name
	//   "label Kind/ns/name FIELD"               the symbolic hash
	Fields map[string]string `json:"fields"`
	// Writes are "kind Kind/ns/name field: old → new", in the order made.
	Writes []string `json:"writes"`
}

// Field keys.
const keyPods = "pods"

func routeKey(vs Object, kind, name string, index int) string {
	if name == "" {
		name = fmt.Sprintf("#%d", index)
	}
	return fmt.Sprintf("route %s %s/%s", vs, kind, name)
}

func managedKey(vs Object) string { return "managed " + vs.String() }

func labelKey(o Object, field string) string { return "label " + o.String() + " " + field }

func destText(host, subset string, w int32) string {
	if subset != "" {
		host += "/" + subset
	}
	return fmt.Sprintf("%s %d", host, w)
}

func managedText(ms []ManagedRoute) string {
	ms = append([]ManagedRoute(nil), ms...)
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	var parts []string
	for _, m := range ms {
		s := m.Name + " " + m.Type
		if m.Type == "mirror" {
			s += fmt.Sprintf(" %d", m.Percentage)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// writeText renders a write. Header/mirror route writes keep only the route
// name: the plan's description of the match is its own prose.
func writeText(w Write) string {
	old, nw := w.Old, w.New
	if w.Kind == "vs-route-add" || w.Kind == "vs-route-remove" {
		old, nw = routeWord(old), routeWord(nw)
	}
	return fmt.Sprintf("%s %s %s: %s → %s", w.Kind, w.Object, w.Field, old, nw)
}

// routeWord cuts "route NAME (description)" to "route NAME".
func routeWord(s string) string {
	if i := strings.Index(s, " ("); i >= 0 && strings.HasPrefix(s, "route ") {
		return s[:i]
	}
	return s
}

// PlanView renders a plan state.
func PlanView(s PlanState) View {
	v := View{Phase: s.Phase, Step: s.Step, Action: s.Action, Fields: map[string]string{}}
	v.Fields[keyPods] = fmt.Sprintf("%d/%d", s.StableReplicas, s.CanaryReplicas)
	httpVS := map[Object]bool{}
	for _, rt := range s.Routes {
		var ds []string
		for _, d := range rt.Dests {
			ds = append(ds, destText(d.Host, d.Subset, d.Weight))
		}
		v.Fields[routeKey(rt.VS, rt.Kind, rt.Name, rt.Index)] = strings.Join(ds, ", ")
		if rt.Kind == "http" {
			httpVS[rt.VS] = true
		}
	}
	// The plan's header/mirror routes are on every managed VirtualService
	// with an http route.
	if len(s.Managed) > 0 {
		for vs := range httpVS {
			v.Fields[managedKey(vs)] = managedText(s.Managed)
		}
	}
	for _, l := range s.Labels {
		v.Fields[labelKey(l.Object, l.Field)] = l.Hash
	}
	v.Writes = RenderWrites(s.Writes)
	return v
}

// RenderWrites renders a state's writes in order. A field written back and
// forth between two values within the state (A → B, B → A, ...) renders
// once, at its first write, as "A ⇄ B (back and forth)": how often the
// controller flips it depends on its reconcile timing (argo-rollouts#3078,
// the canary selector during an abort), so only the pattern is compared.
func RenderWrites(ws []Write) []string {
	type key struct {
		kind, field string
		obj         Object
	}
	byKey := map[key][]int{}
	for i, w := range ws {
		k := key{w.Kind, w.Field, w.Object}
		byKey[k] = append(byKey[k], i)
	}
	skip := map[int]bool{}
	flaps := map[int]bool{}
	for _, idx := range byKey {
		if len(idx) < 2 {
			continue
		}
		alternates := true
		for j := 1; j < len(idx); j++ {
			a, b := ws[idx[j-1]], ws[idx[j]]
			if b.Old != a.New || b.New != a.Old {
				alternates = false
			}
		}
		if alternates {
			flaps[idx[0]] = true
			for _, i := range idx[1:] {
				skip[i] = true
			}
		}
	}
	var out []string
	for i, w := range ws {
		switch {
		case skip[i]:
		case flaps[i]:
			out = append(out, fmt.Sprintf("%s %s %s: %s ⇄ %s (back and forth)", w.Kind, w.Object, w.Field, w.Old, w.New))
		default:
			out = append(out, writeText(w))
		}
	}
	return out
}

// Row is one line of the comparison table.
type Row struct {
	State      string // "step 2 setWeight 50"
	Field      string
	Plan       string
	Controller string
}

// Differs reports whether the row is a difference.
func (r Row) Differs() bool { return r.Plan != r.Controller }

// Compare lines up the plan's views with the observed ones, state by state,
// and returns every compared row. States are matched in order; a state on
// one side only is a difference.
func Compare(plan, observed []View) []Row {
	var rows []Row
	n := max(len(plan), len(observed))
	for i := range n {
		var p, o *View
		if i < len(plan) {
			p = &plan[i]
		}
		if i < len(observed) {
			o = &observed[i]
		}
		label := stateLabel(p, o)
		if p == nil || o == nil || p.Phase != o.Phase || p.Step != o.Step {
			rows = append(rows, Row{State: label, Field: "state", Plan: phaseText(p), Controller: phaseText(o)})
			if p == nil || o == nil {
				continue
			}
		}
		keys := map[string]bool{}
		for k := range p.Fields {
			keys[k] = true
		}
		for k := range o.Fields {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			rows = append(rows, Row{State: label, Field: k, Plan: orNone(p.Fields[k]), Controller: orNone(o.Fields[k])})
		}
		for j := range max(len(p.Writes), len(o.Writes)) {
			r := Row{State: label, Field: fmt.Sprintf("write %d", j+1), Plan: "(none)", Controller: "(none)"}
			if j < len(p.Writes) {
				r.Plan = p.Writes[j]
			}
			if j < len(o.Writes) {
				r.Controller = o.Writes[j]
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func phaseText(v *View) string {
	if v == nil {
		return "(no state)"
	}
	return fmt.Sprintf("%s %d", v.Phase, v.Step)
}

func stateLabel(p, o *View) string {
	v := p
	if v == nil {
		v = o
	}
	s := v.Phase
	if v.Step >= 0 {
		s = fmt.Sprintf("%s %d", v.Phase, v.Step)
	}
	if p != nil && p.Action != "" {
		s += " (" + p.Action + ")"
	}
	return s
}

// Table renders rows grouped by state: every row when all is true, else
// only the differences. An agreeing row prints its value once; a differing
// one prints the plan's and the controller's.
func Table(rows []Row, all bool) string {
	var b strings.Builder
	w := 0
	for _, r := range rows {
		if all || r.Differs() {
			w = max(w, len(r.Field))
		}
	}
	state := ""
	for _, r := range rows {
		if !all && !r.Differs() {
			continue
		}
		if r.State != state {
			state = r.State
			fmt.Fprintf(&b, "%s\n", state)
		}
		if !r.Differs() {
			fmt.Fprintf(&b, "  ok %-*s  %s\n", w, r.Field, r.Plan)
			continue
		}
		fmt.Fprintf(&b, "  ✗  %-*s  plan:       %s\n", w, r.Field, r.Plan)
		fmt.Fprintf(&b, "     %-*s  controller: %s\n", w, "", r.Controller)
	}
	return b.String()
}
