package repo

import (
	"bytes"
	"sort"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render"
)

// clusterTemplates indexes the ClusterAnalysisTemplates every bundle of a
// repository defines. A cluster-scoped object is in the cluster for every
// unit, whichever unit deploys it, so a Rollout of one bundle may run a
// template another bundle holds (a plain directory of shared templates, an
// overlay's Rollout naming one of them).
type clusterTemplates struct {
	byName map[string][]sharedTemplate
}

// sharedTemplate is one ClusterAnalysisTemplate's document, as an input of
// its own: its file with every other document blanked (lines kept, so that
// positions, and the mapper of a rendered file, stay those of the file).
type sharedTemplate struct {
	from   *bundleInputs
	input  load.Input
	mapper *render.Mapper // of the defining bundle, for a rendered input
}

var clusterTemplateKind = []byte(kinds.ClusterAnalysisTemplate)

// indexClusterTemplates finds the ClusterAnalysisTemplates of the bundles.
// Only inputs whose text names the kind are loaded again, one at a time.
func indexClusterTemplates(bundles []*bundleInputs, lo load.Options) *clusterTemplates {
	x := &clusterTemplates{byName: map[string][]sharedTemplate{}}
	if len(bundles) < 2 {
		return x
	}
	for _, b := range bundles {
		lo := lo
		lo.Namespace = b.ns
		for _, in := range b.inputs {
			if in.Role == load.RoleSource || in.Skipped != "" || !bytes.Contains(in.Data, clusterTemplateKind) {
				continue
			}
			g := load.Inputs([]load.Input{in}, lo)
			for _, r := range g.OfKind(kinds.ClusterAnalysisTemplate) {
				one := in
				one.Data = onlyDocuments(in.Data, map[int]bool{r.Doc: true})
				if !holdsOnly(one, lo, r.Name) {
					continue // the document could not be cut out alone: not shared
				}
				st := sharedTemplate{from: b, input: one}
				if in.Role == load.RoleRendered {
					st.mapper = b.mapper
				}
				x.byName[r.Name] = append(x.byName[r.Name], st)
			}
		}
	}
	return x
}

// holdsOnly reports whether an input loads as exactly one
// ClusterAnalysisTemplate of that name, without problems.
func holdsOnly(in load.Input, lo load.Options, name string) bool {
	g := load.Inputs([]load.Input{in}, lo)
	return len(g.Resources) == 1 && len(g.Problems) == 0 &&
		g.Resources[0].Kind == kinds.ClusterAnalysisTemplate && g.Resources[0].Name == name
}

// missingFrom returns, for a bundle's graph, the inputs of the
// ClusterAnalysisTemplates its Rollouts and Experiments run that it does
// not define but other bundles do (each name from the first bundle in
// order that defines it), the mappers their rendered inputs need, and how
// many templates that is.
func (x *clusterTemplates) missingFrom(b *bundleInputs, g *graph.Graph) ([]load.Input, []*render.Mapper, int) {
	if len(x.byName) == 0 {
		return nil, nil, 0
	}
	want := map[string]bool{}
	ask := func(name string) {
		if name != "" && len(x.byName[name]) > 0 && g.Get(kinds.ClusterAnalysisTemplate, "", name) == nil {
			want[name] = true
		}
	}
	for _, rr := range g.Refs().Rollouts {
		for _, t := range rr.Templates {
			if t.Cluster && t.Target == nil {
				ask(t.Name)
			}
		}
	}
	for _, r := range g.OfKind(kinds.Experiment) {
		if ex := r.Experiment(); ex != nil {
			for i := range ex.Spec.Analyses {
				if a := &ex.Spec.Analyses[i]; a.IsClusterScope() {
					ask(a.TemplateName)
				}
			}
		}
	}
	if len(want) == 0 {
		return nil, nil, 0 // the common case: the bundle defines what it runs
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	own := make(map[string]bool, len(b.inputs))
	for _, in := range b.inputs {
		own[in.Path] = true
	}
	var ins []load.Input
	var mappers []*render.Mapper
	for _, n := range names {
		for _, st := range x.byName[n] {
			if st.from == b || own[st.input.Path] {
				continue // a file the bundle reads already (as a patch, say) is not loaded twice
			}
			ins = append(ins, st.input)
			if st.mapper != nil {
				mappers = append(mappers, st.mapper)
			}
			break
		}
	}
	return ins, mappers, len(ins)
}
