package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	aplan "github.com/rolloutlint/rolloutlint/semantics/plan"
)

// TestPlanRoutesOnlyCommittedDestinations checks what mayMiss relies on:
// every destination of a planned state's routes, but the experiments', is a
// destination of the route as committed, at the same index.
func TestPlanRoutesOnlyCommittedDestinations(t *testing.T) {
	dirs, _ := filepath.Glob("../../testdata/rules/RL[126]*")
	dirs = append(dirs, "../../testdata/plan")
	type key struct {
		vs         aplan.Object
		kind       graph.RouteKind
		route, idx int
		host, sub  string
	}
	checked := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		g, err := load.Paths([]string{dir}, load.Options{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, rr := range g.Refs().Rollouts {
			committed := map[key]bool{}
			for _, vs := range rr.VirtualServices {
				if vs.Target == nil || vs.Target.VirtualService() == nil {
					continue
				}
				obj := aplan.Object{Kind: "VirtualService", Namespace: vs.Target.Namespace, Name: vs.Target.Name}
				for _, rt := range vs.Routes {
					for j, d := range graph.RouteDestinations(&vs.Target.VirtualService().Spec, rt.Kind, rt.Index) {
						committed[key{obj, rt.Kind, rt.Index, j, d.Host, d.Subset}] = true
					}
				}
			}
			pl := aplan.StatesOf(g, rr)
			if pl == nil {
				continue
			}
			for _, s := range pl.States {
				for _, rt := range s.Routes {
					for _, d := range rt.Dests {
						checked++
						if d.Role != aplan.RoleExperiment && !committed[key{rt.VS, rt.Kind, rt.Index, d.Index, d.Host, d.Subset}] {
							t.Errorf("%s: Rollout %s %s routes to %s/%s (index %d), not a committed destination of %s[%d]",
								dir, rr.Rollout.Name, s.Path, d.Host, d.Subset, d.Index, rt.Kind, rt.Index)
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no planned destination was checked")
	}
}
