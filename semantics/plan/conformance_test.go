package plan_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// observed is a file of testdata/conformance/argo/observed: what the real
// Argo Rollouts controller did with a scenario bundle, recorded by
// `make conformance-argo RECORD=1` (conformance/argo). Each state is a view:
// field keys and values, and the writes in order, rendered the way the
// harness renders the plan's JSON (conformance/argo/view.go).
type observed struct {
	Controller string         `json:"controller"`
	Bundle     string         `json:"bundle"`
	Rollout    string         `json:"rollout"`
	States     []observedView `json:"states"`
	AbortFrom  int            `json:"abortFrom"`
	Abort      []observedView `json:"abort"`
}

type observedView struct {
	Phase  string            `json:"phase"`
	Step   int               `json:"step"`
	Fields map[string]string `json:"fields"`
	Writes []string          `json:"writes"`
}

// TestControllerObservations compares the planner, state by state, with
// what Argo Rollouts did on a real kube-apiserver, so that `make test`
// catches a planner change that departs from the controller without
// running it. A difference here means either the planner regressed, or the
// controller's behaviour was re-recorded: re-run make conformance-argo.
func TestControllerObservations(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "testdata", "conformance", "argo", "observed", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded controller observations")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var obs observed
			if err := json.Unmarshal(b, &obs); err != nil {
				t.Fatal(err)
			}
			g, err := load.Paths([]string{filepath.Join(root, filepath.FromSlash(obs.Bundle))}, load.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var p *plan.Plan
			for _, x := range plan.Build(g) {
				if x.Rollout.Namespace+"/"+x.Rollout.Name == obs.Rollout {
					p = x
				}
			}
			if p == nil {
				t.Fatalf("%s: no plan for Rollout %s", obs.Bundle, obs.Rollout)
			}
			diffs, rows := compareViews(views(p.States), obs.States)
			if len(obs.Abort) > 0 {
				if p.AbortFrom != obs.AbortFrom {
					t.Errorf("abort path starts from state %d, the recorded abort run left at state %d", p.AbortFrom, obs.AbortFrom)
				}
				d, r := compareViews(views(p.Abort), obs.Abort)
				diffs, rows = append(diffs, d...), rows+r
			}
			if len(diffs) > 0 {
				t.Errorf("%s (%s): %d of %d fields differ from the controller:\n%s", obs.Bundle, obs.Controller, len(diffs), rows, strings.Join(diffs, "\n"))
			}
		})
	}
}

// views renders plan states as the conformance harness does.
func views(states []plan.State) []observedView {
	var out []observedView
	for _, s := range states {
		v := observedView{Phase: string(s.Phase), Step: s.Step, Fields: map[string]string{}}
		v.Fields["pods"] = fmt.Sprintf("%d/%d", s.StableReplicas, s.CanaryReplicas)
		httpVS := map[string]bool{}
		for _, rt := range s.Routes {
			var ds []string
			for _, d := range rt.Dests {
				h := d.Host
				if d.Subset != "" {
					h += "/" + d.Subset
				}
				ds = append(ds, fmt.Sprintf("%s %d", h, d.Weight))
			}
			name := rt.Name
			if name == "" {
				name = fmt.Sprintf("#%d", rt.Index)
			}
			v.Fields[fmt.Sprintf("route %s %s/%s", rt.VS, rt.Kind, name)] = strings.Join(ds, ", ")
			if rt.Kind == "http" {
				httpVS[rt.VS.String()] = true
			}
		}
		if len(s.Managed) > 0 {
			ms := append([]plan.ManagedRoute(nil), s.Managed...)
			sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
			var parts []string
			for _, m := range ms {
				p := m.Name + " " + m.Type
				if m.Type == "mirror" {
					p += fmt.Sprintf(" %d", m.Percentage)
				}
				parts = append(parts, p)
			}
			for vs := range httpVS {
				v.Fields["managed "+vs] = strings.Join(parts, ", ")
			}
		}
		for _, l := range s.Labels {
			v.Fields["label "+l.Object.String()+" "+l.Field] = l.Hash
		}
		v.Writes = renderWrites(s.Writes)
		out = append(out, v)
	}
	return out
}

// renderWrites renders writes in order; a field written back and forth
// between two values within a state renders once, as the harness does
// (the count of flips is the controller's reconcile timing).
func renderWrites(ws []plan.Write) []string {
	type key struct{ kind, obj, field string }
	byKey := map[key][]int{}
	for i, w := range ws {
		k := key{string(w.Kind), w.Object.String(), w.Field}
		byKey[k] = append(byKey[k], i)
	}
	skip, flaps := map[int]bool{}, map[int]bool{}
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
		old, nw := w.Old, w.New
		if w.Kind == plan.WriteVSRouteAdd || w.Kind == plan.WriteVSRouteRemove {
			old, nw = routeWord(old), routeWord(nw)
		}
		switch {
		case skip[i]:
		case flaps[i]:
			out = append(out, fmt.Sprintf("%s %s %s: %s ⇄ %s (back and forth)", w.Kind, w.Object, w.Field, w.Old, w.New))
		default:
			out = append(out, fmt.Sprintf("%s %s %s: %s → %s", w.Kind, w.Object, w.Field, old, nw))
		}
	}
	return out
}

func routeWord(s string) string {
	if i := strings.Index(s, " ("); i >= 0 && strings.HasPrefix(s, "route ") {
		return s[:i]
	}
	return s
}

// compareViews returns one line per difference and the number of fields compared.
func compareViews(plan, obs []observedView) ([]string, int) {
	var diffs []string
	rows := 0
	for i := range max(len(plan), len(obs)) {
		if i >= len(plan) || i >= len(obs) {
			diffs = append(diffs, fmt.Sprintf("state %d: the plan has %d states, the controller %d", i, len(plan), len(obs)))
			rows++
			continue
		}
		p, o := plan[i], obs[i]
		at := fmt.Sprintf("%s %d", p.Phase, p.Step)
		if p.Phase != o.Phase || p.Step != o.Step {
			diffs = append(diffs, fmt.Sprintf("state %d: plan %s, controller %s %d", i, at, o.Phase, o.Step))
		}
		keys := map[string]bool{}
		for k := range p.Fields {
			keys[k] = true
		}
		for k := range o.Fields {
			keys[k] = true
		}
		for k := range keys {
			rows++
			if p.Fields[k] != o.Fields[k] {
				diffs = append(diffs, fmt.Sprintf("%s %s: plan %q, controller %q", at, k, p.Fields[k], o.Fields[k]))
			}
		}
		for j := range max(len(p.Writes), len(o.Writes)) {
			rows++
			var pw, ow string
			if j < len(p.Writes) {
				pw = p.Writes[j]
			}
			if j < len(o.Writes) {
				ow = o.Writes[j]
			}
			if pw != ow {
				diffs = append(diffs, fmt.Sprintf("%s write %d: plan %q, controller %q", at, j+1, pw, ow))
			}
		}
	}
	sort.Strings(diffs)
	return diffs, rows
}

// TestFromLiveAgainstControllerObservations plans from every pause the
// controller rested at in a recorded run, as plan --cluster does from a
// Rollout paused there: the live state is what the controller left (its
// pods and the route weights of the recorded view), and the states that
// follow, and the abort path when the recorded abort run left from that
// pause, must be the controller's.
func TestFromLiveAgainstControllerObservations(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "testdata", "conformance", "argo", "observed", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var obs observed
		if err := json.Unmarshal(b, &obs); err != nil {
			t.Fatal(err)
		}
		g, err := load.Paths([]string{filepath.Join(root, filepath.FromSlash(obs.Bundle))}, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var committed *plan.Plan
		for _, x := range plan.Build(g) {
			if x.Rollout.Namespace+"/"+x.Rollout.Name == obs.Rollout {
				committed = x
			}
		}
		if committed == nil || committed.Strategy != "canary" {
			continue
		}
		steps := committed.Refs.Spec.Spec.Strategy.Canary.Steps
		for k, o := range obs.States {
			if o.Phase != string(plan.PhaseStep) || steps[o.Step].Pause == nil {
				continue
			}
			name := fmt.Sprintf("%s/pause-%d", strings.TrimSuffix(filepath.Base(f), ".json"), o.Step)
			t.Run(name, func(t *testing.T) {
				checked++
				l := liveFromView(t, committed, o)
				p := plan.FromLive(g, committed.Refs, l)
				got := views(p.States)
				if len(got) < 2 {
					t.Fatalf("plan from the live state has %d states", len(got))
				}
				// The live state and the pause resting there are the
				// recorded state, without the writes that led into it.
				rest := o
				rest.Writes = nil
				diffs, rows := compareViews(got[1:2], []observedView{rest})
				d, r := compareViews(got[2:], obs.States[k+1:])
				diffs, rows = append(diffs, d...), rows+r
				if len(obs.Abort) > 0 && obs.AbortFrom == k {
					d, r := compareViews(views(p.Abort), obs.Abort)
					diffs, rows = append(diffs, d...), rows+r
				}
				if len(diffs) > 0 {
					t.Errorf("%s from the pause at step %d: %d of %d fields differ from the controller:\n%s", obs.Bundle, o.Step, len(diffs), rows, strings.Join(diffs, "\n"))
				}
			})
		}
	}
	if checked == 0 {
		t.Fatal("no recorded canary pause to plan from")
	}
}

// liveFromView is the live state of a Rollout resting in the recorded view
// o: its pods, and the weights of its routes (the routes of the committed
// state, weighted as the view says). The hashes are the symbolic ones, so
// that the plan compares with the recorded views.
func liveFromView(t *testing.T, committed *plan.Plan, o observedView) *plan.Live {
	t.Helper()
	l := &plan.Live{Step: o.Step, Paused: true, StableHash: plan.OldHash, CanaryHash: plan.NewHash}
	if _, err := fmt.Sscanf(o.Fields["pods"], "%d/%d", &l.StableReplicas, &l.CanaryReplicas); err != nil {
		t.Fatalf("pods %q: %v", o.Fields["pods"], err)
	}
	for _, rt := range committed.States[0].Routes {
		name := rt.Name
		if name == "" {
			name = fmt.Sprintf("#%d", rt.Index)
		}
		val, ok := o.Fields[fmt.Sprintf("route %s %s/%s", rt.VS, rt.Kind, name)]
		if !ok {
			t.Fatalf("no recorded weights of route %s %s/%s", rt.VS, rt.Kind, name)
		}
		weights := map[string]int32{}
		for _, part := range strings.Split(val, ", ") {
			i := strings.LastIndex(part, " ")
			w, err := strconv.Atoi(part[i+1:])
			if err != nil {
				t.Fatalf("route weights %q: %v", val, err)
			}
			weights[part[:i]] = int32(w)
		}
		dests := append([]plan.Destination(nil), rt.Dests...)
		for j := range dests {
			h := dests[j].Host
			if dests[j].Subset != "" {
				h += "/" + dests[j].Subset
			}
			dests[j].Weight = weights[h]
		}
		rt.Dests = dests
		l.Routes = append(l.Routes, rt)
	}
	// The header and mirror routes the view holds ("name type[ percentage], ...").
	for k, val := range o.Fields {
		if !strings.HasPrefix(k, "managed ") || len(l.Managed) > 0 {
			continue
		}
		for _, part := range strings.Split(val, ", ") {
			f := strings.Fields(part)
			m := plan.ManagedRoute{Name: f[0], Type: f[1]}
			if len(f) > 2 {
				n, err := strconv.Atoi(f[2])
				if err != nil {
					t.Fatalf("managed routes %q: %v", val, err)
				}
				m.Percentage = int32(n)
			}
			l.Managed = append(l.Managed, m)
		}
	}
	s := plan.State{Routes: l.Routes}
	l.CanaryWeight = s.CanaryWeight()
	return l
}
