package repo

import (
	"path/filepath"
	"sort"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// Loaded is one bundle of a repository loaded as Lint loads it, but not
// linted: its units and its graph, whose Mapper moves positions in
// rendered files into the files the user wrote (`rolloutlint plan` plays
// the Rollouts of each bundle out).
type Loaded struct {
	// Units are the bundle's units (none for the files given alone outside
	// every unit).
	Units []*units.Unit
	// Graph is the bundle, with the ClusterAnalysisTemplates of other
	// bundles its Rollouts name.
	Graph *graph.Graph
	// Plain is set for the bundle of the plain directories and of the
	// files in no unit: what is read as written.
	Plain bool

	unitOf   map[string]*units.Unit
	mapper   *render.Mapper
	reported map[string]bool // nil: everything
	ofFiles  map[*units.Unit]bool
	base     string // Options.Load.Dir: paths are named relative to it
}

// UnitOf returns the unit a resource of the bundle was rendered or read
// from, or nil (a file given alone outside every unit, a borrowed
// template).
func (l *Loaded) UnitOf(r *graph.Resource) *units.Unit {
	return l.unitOf[r.File]
}

// Selected reports whether the paths given select the resource: always
// when directories alone were given; with files, when it is at one of
// them, in a given directory, or of a unit one of them belongs to (a
// resource, patch or kustomization of an overlay or its bases, a chart's
// template or values file, an Application's file).
func (l *Loaded) Selected(r *graph.Resource) bool {
	if l.reported == nil {
		return true
	}
	in := func(p string) bool {
		p = filepath.Clean(p)
		if l.reported[p] {
			return true
		}
		for d := range l.reported {
			if units.Within(p, d) {
				return true
			}
		}
		return false
	}
	if in(r.File) {
		return true
	}
	if u := l.unitOf[r.File]; u != nil && (l.ofFiles[u] || in(u.Dir)) {
		return true
	}
	if l.mapper != nil {
		for _, f := range l.mapper.SourcesOf(r) {
			if in(f) {
				return true
			}
		}
	}
	return false
}

// Path names a file of the graph as the paths were given (relative to
// Options.Load.Dir when that is set, as Lint's findings are).
func (l *Loaded) Path(p string) string {
	if l.base == "" {
		return p
	}
	return strip(l.base, p)
}

// Renamed reports whether Path changes names (Options.Load.Dir is set).
func (l *Loaded) Renamed() bool { return l.base != "" }

// Load discovers, renders and loads the paths as Lint does, one Loaded per
// bundle in Lint's order (by group: Applications by destination, plain,
// then the units alone by directory), without running any rule.
// Options.Analyzer, AfterBundle and Live are not used; AfterLoad runs after
// each bundle is loaded.
func Load(paths []string, opts Options) ([]*Loaded, error) {
	base := opts.Load.Dir // positions are given back relative to it
	paths, opts = inDir(paths, opts)
	opts.Live = nil
	sel, err := selectUnits(paths, opts)
	if err != nil {
		return nil, err
	}
	pr, err := prepare(sel.found, sel.units, sel.loose, opts)
	if err != nil {
		return nil, err
	}
	var reported map[string]bool
	if sel.filtered(opts) {
		reported = sel.reported
	}
	out := make([]*Loaded, 0, len(pr.bundles))
	for i, b := range pr.bundles {
		bi := pr.gathered[i]
		if b.group == plainGroup {
			bi.inputs = asExpanded(paths, bi.inputs)
		}
		g, mapper, _, err := loadBundle(bi, pr.shared, opts)
		if err != nil {
			return nil, err
		}
		if opts.AfterLoad != nil {
			opts.AfterLoad(g)
		}
		out = append(out, &Loaded{Units: b.units, Graph: g, Plain: b.group == plainGroup, unitOf: bi.unitOf,
			mapper: mapper, reported: reported, ofFiles: sel.ofFiles, base: base})
	}
	return out, nil
}

// asExpanded orders the inputs of the plain bundle as load.Expand orders
// the paths' files (the order a plain lint or plan loads them in, which
// decides the order Rollouts are planned in and which of two objects of
// one name a reference finds): by the first path that names or holds each,
// then by path; the context paths' files after them, as they came.
func asExpanded(paths []string, inputs []load.Input) []load.Input {
	clean := make([]string, len(paths))
	for i, p := range paths {
		clean[i] = p
		if p != "-" {
			clean[i] = filepath.Clean(p)
		}
	}
	arg := func(in load.Input) int {
		for i, p := range clean {
			if in.Path == p || p != "-" && units.Within(in.Path, p) || p == "-" && in.Path == load.StdinName {
				return i
			}
		}
		return len(clean)
	}
	type keyed struct {
		arg int
		in  load.Input
	}
	ks := make([]keyed, len(inputs))
	for i, in := range inputs {
		ks[i] = keyed{arg(in), in}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.arg != b.arg {
			return a.arg < b.arg
		}
		return a.arg < len(clean) && clean[a.arg] != "-" && a.in.Path < b.in.Path
	})
	out := make([]load.Input, len(ks))
	for i, k := range ks {
		out[i] = k.in
	}
	return out
}

// joinAll reads relative paths from base (standard input stays "-").
func joinAll(base string, ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p
		if p != "-" && !filepath.IsAbs(p) {
			out[i] = filepath.Join(base, p)
		}
	}
	return out
}
