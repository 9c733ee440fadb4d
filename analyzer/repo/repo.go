// Package repo lints a repository the way it is deployed: one bundle per
// deployable unit (a Kustomize root, a Helm chart, an Argo CD
// Application's source, the plain directories), rendered in process, with
// units that deploy to the same cluster and namespace linted together.
// Findings on rendered objects point into the files the user wrote.
package repo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/internal/parallel"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render"
	"github.com/rolloutlint/rolloutlint/model/units"
	"github.com/rolloutlint/rolloutlint/rules"
)

// Options configure a repository lint.
type Options struct {
	// Analyzer selects and configures the rules; Globals.ArgoCD is set per
	// bundle when an Application deploys it.
	Analyzer analyzer.Options
	// Load gives the default namespace, limits and excludes.
	Load load.Options
	// Render gives --values and --set for charts no Application deploys.
	Render render.Options
	// RepoRoot is where Argo CD Application paths start; "" finds it
	// (the nearest directory above the first path holding .git).
	RepoRoot string
	// Context are paths loaded, as today, with files given outside any
	// unit (the config's paths, or --context).
	Context []string
	// AfterBundle, when set, runs after each bundle's rules with its graph
	// and result (the live Prometheus dry-run adds findings there).
	AfterBundle func(g *graph.Graph, res *analyzer.Result) error
	// AfterLoad, when set, runs after each bundle is loaded, before its
	// rules (the command fits its soft memory limit to the first bundle).
	AfterLoad func(g *graph.Graph)
	// Live, when set, returns inputs to load after a bundle's own, given
	// the bundle's graph (lint --cluster: the live objects its files do not
	// replace); the bundle is then loaded again with them.
	Live func(g *graph.Graph) ([]load.Input, error)
}

// Bundle is one linted bundle: the units in it and its result.
type Bundle struct {
	Units  []*units.Unit
	Result *analyzer.Result
}

// Report is a repository lint: every bundle's findings merged, and the
// bundles.
type Report struct {
	Result  *analyzer.Result
	Bundles []*Bundle

	mappers []*render.Mapper
	files   map[string]bool // the user files loaded
}

// Files are the user files the lint loaded (manifests, and the sources
// units were rendered from), sorted.
func (r *Report) Files() []string {
	out := make([]string, 0, len(r.files))
	for f := range r.files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Lint lints paths. Directories are discovered into units; files given
// alone are linted with the whole of the units they belong to, reporting
// only findings on them (or on objects rendered from them); files in no
// unit are linted as before, with the Context paths.
func Lint(paths []string, opts Options) (*Report, error) {
	// A caller with its own working directory (load.Options.Dir): files
	// are read there, and findings name them as given.
	if base := opts.Load.Dir; base != "" {
		rep, err := lint(inDir(paths, opts))
		if err != nil {
			return nil, err
		}
		rep.Result.Diagnostics = trimDir(base, rep.Result.Diagnostics)
		return rep, nil
	}
	return lint(paths, opts)
}

// inDir returns paths and opts as read from the caller's own working
// directory (load.Options.Dir), if it has one: paths joined to it, and
// options whose paths and exclusions are too.
func inDir(paths []string, opts Options) ([]string, Options) {
	base := opts.Load.Dir
	if base == "" {
		return paths, opts
	}
	if opts.RepoRoot != "" && !filepath.IsAbs(opts.RepoRoot) {
		opts.RepoRoot = filepath.Join(base, opts.RepoRoot)
	}
	opts.Context = joinAll(base, opts.Context)
	if ex := opts.Load.Exclude; ex != nil {
		opts.Load.Exclude = func(p string) bool { return ex(strip(base, p)) }
	}
	opts.Load.Dir = ""
	return joinAll(base, paths), opts
}

// strip makes a path below base relative to it again.
func strip(base, p string) string {
	if rel, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

func trimDir(base string, ds []rules.Diagnostic) []rules.Diagnostic {
	for i := range ds {
		ds[i].Pos.File = strip(base, ds[i].Pos.File)
		for j := range ds[i].Related {
			ds[i].Related[j].File = strip(base, ds[i].Related[j].File)
		}
	}
	return ds
}

func lint(paths []string, opts Options) (*Report, error) {
	sel, err := selectUnits(paths, opts)
	if err != nil {
		return nil, err
	}
	rep, err := lintUnits(sel.found, sel.units, sel.loose, opts)
	if err != nil {
		return nil, err
	}
	// Files given alone, with nothing else loaded, are all there is: no
	// filter (as before units).
	if sel.filtered(opts) {
		rep.Result = only(rep, sel.reported)
	}
	return rep, nil
}

// selection is what the paths of a lint select: the units to render, the
// loose files (linted with the plain directories), and the paths findings
// are reported on (nil: everything).
type selection struct {
	units    []*units.Unit
	loose    []string
	reported map[string]bool
	// ofFiles are the units a given file belongs to.
	ofFiles map[*units.Unit]bool
	// found is the discovery the units come from: the Applications their
	// renders make (an app of apps) deploy units it knows.
	found *units.Set
}

// filtered reports whether only findings on the reported paths are kept:
// files were given, and something besides them is loaded.
func (s *selection) filtered(opts Options) bool {
	return s.reported != nil && (len(s.units) > 0 || len(opts.Context) > 0)
}

// selectUnits discovers the units of the directories among paths and the
// units the files among them belong to.
func selectUnits(paths []string, opts Options) (*selection, error) {
	var dirs, files []string
	for _, p := range paths {
		if p == "-" {
			files = append(files, p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, unwrap(err))
		}
		if st.IsDir() {
			dirs = append(dirs, filepath.Clean(p))
		} else {
			files = append(files, filepath.Clean(p))
		}
	}
	root := opts.RepoRoot
	if root == "" && len(paths) > 0 {
		root = FindRoot(paths[0])
	}
	uopts := units.Options{RepoRoot: root, Exclude: opts.Load.Exclude, FollowSymlinks: opts.Load.FollowSymlinks, Limits: opts.Render.Limits}
	sel := &selection{}
	if len(dirs) > 0 {
		set, err := units.Discover(dirs, uopts)
		if err != nil {
			return nil, err
		}
		sel.units, sel.found = set.Units, set
	}
	if len(files) > 0 {
		sel.reported = map[string]bool{}
		for _, d := range dirs {
			sel.reported[d] = true
		}
		var set *units.Set
		if root != "" {
			var err error
			if set, err = units.Discover([]string{root}, uopts); err != nil {
				return nil, err
			}
			if sel.found == nil {
				sel.found = set
			}
		}
		seen := map[*units.Unit]bool{}
		for _, u := range sel.units {
			seen[u] = true
		}
		sel.ofFiles = map[*units.Unit]bool{}
		for _, f := range files {
			sel.reported[f] = true
			var us []*units.Unit
			if set != nil && f != "-" {
				us = set.UnitsOf(f)
			}
			for _, u := range us {
				sel.ofFiles[u] = true
			}
			if len(us) == 0 {
				sel.loose = append(sel.loose, f)
				continue
			}
			for _, u := range us {
				if !seen[u] && (u.Kind != units.Directory || u.App != nil) {
					seen[u] = true
					sel.units = append(sel.units, u)
				}
			}
			// A plain file is linted with the plain directories.
			for _, u := range us {
				if u.Kind == units.Directory && u.App == nil {
					sel.loose = append(sel.loose, f)
					break
				}
			}
		}
	}
	return sel, nil
}

// FindRoot is the repository root above path: the nearest directory
// holding .git, else the path's directory.
func FindRoot(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	start := abs
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		start = filepath.Dir(abs)
	}
	for d := start; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return relativeTo(d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return relativeTo(start)
}

// relativeTo makes an absolute directory relative to the working
// directory when it is below it, so paths in findings stay as typed.
func relativeTo(abs string) string {
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return abs
}

func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// bundleWork is one bundle to lint: its units, and loose files linted with
// the plain directories.
type bundleWork struct {
	group string
	units []*units.Unit
	loose []string
}

func lintUnits(set *units.Set, selected []*units.Unit, loose []string, opts Options) (*Report, error) {
	pr, err := prepare(set, selected, loose, opts)
	if err != nil {
		return nil, err
	}
	rep := &Report{files: map[string]bool{}}
	files := rep.files
	for i, b := range pr.bundles {
		res, m, err := lintBundle(pr.gathered[i], pr.shared, opts, files)
		if err != nil {
			return nil, err
		}
		if m != nil {
			rep.mappers = append(rep.mappers, m)
		}
		rep.Bundles = append(rep.Bundles, &Bundle{Units: b.units, Result: res})
	}
	rep.Result = merge(rep.Bundles)
	if len(rep.Bundles) == 0 { // nothing to lint (--allow-empty): the summary still counts the rules in force
		rep.Result.Rules, _ = analyzer.Select(opts.Analyzer)
		rep.Result.Summary.Rules = len(rep.Result.Rules)
	}
	rep.Result.Summary.Files = len(files)
	return rep, nil
}

// prepared is a repository rendered and gathered into bundles, in order:
// each bundle's work, its inputs, and the ClusterAnalysisTemplates they
// share.
type prepared struct {
	bundles  []*bundleWork
	gathered []*bundleInputs
	shared   *clusterTemplates
}

// prepare groups the units into bundles (sorted by group), renders every
// unit (and the units the Applications they render deploy, when set, the
// discovery they come from, is given) and gathers each bundle's inputs.
func prepare(set *units.Set, selected []*units.Unit, loose []string, opts Options) (*prepared, error) {
	byGroup := map[string]*bundleWork{}
	var order []string
	add := func(group string) *bundleWork {
		if byGroup[group] == nil {
			byGroup[group] = &bundleWork{group: group}
			order = append(order, group)
		}
		return byGroup[group]
	}
	for _, u := range selected {
		b := add(u.Group)
		b.units = append(b.units, u)
	}
	if len(loose) > 0 {
		b := add(plainGroup)
		b.loose = loose
	}
	sort.Strings(order)
	ropts := opts.Render
	if ropts.Context == nil {
		ropts.Context = opts.Analyzer.Context // a lint stopped early stops its rendering too
	}
	r := render.New(ropts)
	// Render every unit first, on every core: rendering is independent
	// per unit and dominates the cost of a repository of small units.
	var all []*units.Unit
	for _, g := range order {
		all = append(all, byGroup[g].units...)
	}
	for _, u := range all {
		if u.Kind == units.Helm {
			r.StartHelm() // the companion starts while other units render
			break
		}
	}
	rendered := make([]*render.Result, len(all))
	parallel.For(len(all), 1, func(i int) {
		if ropts.Context != nil && ropts.Context.Err() != nil {
			return // stopped: reported below
		}
		rendered[i] = r.Render(all[i])
	})
	results := map[*units.Unit]*render.Result{}
	for i, u := range all {
		if rendered[i] != nil {
			results[u] = rendered[i]
		}
	}
	// The Applications the renders made (an app of apps) deploy units of
	// their own, rendered in turn, as deep as maxAppDepth.
	if set != nil {
		children, dropped := expandChildren(set, all, results, r, ropts)
		if len(dropped) > 0 {
			for _, g := range order {
				b := byGroup[g]
				b.units = slices.DeleteFunc(b.units, func(u *units.Unit) bool { return dropped[u] })
			}
		}
		for _, u := range children {
			b := add(u.Group)
			b.units = append(b.units, u)
		}
		sort.Strings(order)
	}
	order = slices.DeleteFunc(order, func(g string) bool { return len(byGroup[g].units) == 0 && len(byGroup[g].loose) == 0 })
	_ = r.Close() // stops the Helm companion, if a chart started it
	if ctx := ropts.Context; ctx != nil && ctx.Err() != nil {
		// Some units did not render: their findings would be about the
		// stop, not the repository.
		return nil, fmt.Errorf("stopped while rendering: %w", ctx.Err())
	}
	if set != nil && len(set.Problems) > 0 {
		addSetProblems(set.Problems, order, byGroup, results)
	}
	pr := &prepared{}
	for _, g := range order {
		b := byGroup[g]
		bi, err := gatherBundle(b, results, opts)
		if err != nil {
			return nil, err
		}
		pr.bundles = append(pr.bundles, b)
		pr.gathered = append(pr.gathered, bi)
	}
	pr.shared = indexClusterTemplates(pr.gathered, opts.Load)
	return pr, nil
}

// plainGroup is the group of the plain directories and of the files in no
// unit.
const plainGroup = "plain"

// bundleInputs is what one bundle loads: its inputs, the problems its
// rendering met, the mapper of its rendered files, its default namespace,
// and whether an Application deploys it.
type bundleInputs struct {
	group  string
	inputs []load.Input
	// unitOf is the unit each input came from (the first, for an input
	// two units share).
	unitOf   map[string]*units.Unit
	problems []graph.Problem
	mapper   *render.Mapper
	ns       string
	argo     bool
}

// gatherBundle collects the inputs of one bundle's rendered units, its
// Applications' documents and its loose files.
func gatherBundle(b *bundleWork, results map[*units.Unit]*render.Result, opts Options) (*bundleInputs, error) {
	var inputs []load.Input
	var problems []graph.Problem
	mapper := (*render.Mapper)(nil)
	have := map[string]int{} // path → index in inputs
	apps := map[string][]*units.Application{}
	var origins []*units.Application // Applications a render made or an ApplicationSet generated
	ns := opts.Load.Namespace
	argo := false
	unitOf := map[string]*units.Unit{}
	for _, u := range b.units {
		res := results[u]
		for _, in := range res.Inputs {
			if i, ok := have[in.Path]; ok {
				if inputs[i].Role == load.RoleSource && in.Role != load.RoleSource {
					inputs[i] = in
				}
				continue
			}
			have[in.Path] = len(inputs)
			inputs = append(inputs, in)
			unitOf[in.Path] = u
		}
		problems = append(problems, res.Problems...)
		if mapper == nil {
			mapper = res.Mapper
		} else {
			mapper.Merge(res.Mapper)
		}
		if u.App != nil {
			argo = true
			if u.App.Origin != nil {
				origins = append(origins, u.App)
			} else {
				apps[u.App.File] = append(apps[u.App.File], u.App)
			}
			if u.Namespace != "" {
				ns = u.Namespace
			}
		}
	}
	// The Applications deploying the bundle are part of it (the GitOps
	// rules read their sync policy and ignoreDifferences), each file
	// reduced to those Applications' documents, with lines kept.
	for file, list := range apps {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, unwrap(err))
		}
		keep := map[int]bool{}
		for _, a := range list {
			keep[a.Doc] = true
		}
		in := load.Input{Path: file, Data: onlyDocuments(data, keep)}
		if i, ok := have[file]; ok {
			inputs[i] = in
		} else {
			have[file] = len(inputs)
			inputs = append(inputs, in)
		}
	}
	// A root Application that deploys itself is rendered by its own unit:
	// that document is the Application, not a second one.
	defined := map[string]string{} // Application key → the rendered input defining it
	if len(origins) > 0 {
		for _, in := range inputs {
			if in.Role == load.RoleRendered {
				for _, a := range units.ApplicationsIn(in.Path, in.Data) {
					defined[a.Key()] = in.Path
				}
			}
		}
	}
	for _, a := range origins {
		if p, ok := defined[a.Key()]; ok && p != a.File {
			continue
		}
		in, ok := originInput(a, results, mapper)
		if !ok {
			continue
		}
		if i, ok := have[in.Path]; ok {
			// Another child of the same render: keep both documents.
			inputs[i].Data = overlay(inputs[i].Data, in.Data)
			continue
		}
		have[in.Path] = len(inputs)
		inputs = append(inputs, in)
	}
	if len(b.loose) > 0 {
		lo := opts.Load
		extra, err := load.Expand(append(append([]string{}, b.loose...), opts.Context...), lo)
		if err != nil {
			return nil, err
		}
		// A given file is also in the context paths, perhaps under
		// another name (absolute, ./): it is loaded once, as given.
		seen := map[string]bool{}
		for p := range have {
			seen[absPath(p)] = true
		}
		for _, in := range extra {
			if k := absPath(in.Path); !seen[k] {
				seen[k] = true
				have[in.Path] = len(inputs)
				inputs = append(inputs, in)
			}
		}
	}
	return &bundleInputs{group: b.group, inputs: inputs, unitOf: unitOf, problems: problems, mapper: mapper, ns: ns, argo: argo}, nil
}

// lintBundle loads the rendered units of one bundle into one graph and
// lints it.
func lintBundle(bi *bundleInputs, shared *clusterTemplates, opts Options, files map[string]bool) (*analyzer.Result, *render.Mapper, error) {
	g, mapper, borrowed, err := loadBundle(bi, shared, opts)
	if err != nil {
		return nil, nil, err
	}
	if opts.AfterLoad != nil {
		opts.AfterLoad(g)
	}
	for _, f := range g.Files {
		if !f.Rendered && !graph.IsLive(f.Path) {
			files[f.Path] = true
		}
	}
	ao := opts.Analyzer
	ao.Globals.ArgoCD = ao.Globals.ArgoCD || bi.argo
	// The plain directories are linted together so that their references
	// resolve, but directories of plain manifests that define the same
	// object are variants applied one at a time (examples, environments,
	// versions, each its own Application), not one `kubectl apply -R`: a
	// duplicate counts within a directory (`kubectl apply -f DIR`).
	ao.Globals.DuplicatesByDirectory = bi.group == plainGroup
	res := analyzer.Run(g, ao)
	res.Summary.Objects -= borrowed // counted by the bundle that defines them
	if opts.AfterBundle != nil {
		if err := opts.AfterBundle(g, res); err != nil {
			return nil, nil, err
		}
	}
	return res, mapper, nil
}

// loadBundle loads the rendered units of one bundle into one graph, with
// the ClusterAnalysisTemplates of other bundles its Rollouts name (their
// count is borrowed), the live objects of Options.Live, the render
// problems and the mapper of its rendered files.
func loadBundle(bi *bundleInputs, shared *clusterTemplates, opts Options) (g *graph.Graph, mapper *render.Mapper, borrowed int, err error) {
	inputs, problems := bi.inputs, bi.problems
	mapper = bi.mapper
	lo := opts.Load
	lo.Namespace = bi.ns
	g = load.Inputs(inputs, lo)
	// The ClusterAnalysisTemplates other bundles define, which this one's
	// Rollouts name: cluster-scoped, they are in the cluster for every
	// unit, so they join the bundle (their own findings are reported, once,
	// by the bundle that defines them).
	if extra, mappers, n := shared.missingFrom(bi, g); n > 0 {
		for _, m := range mappers {
			if mapper == nil {
				mapper = m.Copy()
			} else {
				mapper.Merge(m)
			}
		}
		inputs = append(slices.Clip(inputs), extra...)
		g = load.Inputs(inputs, lo)
		borrowed = n
	}
	if opts.Live != nil {
		live, err := opts.Live(g)
		if err != nil {
			return nil, nil, 0, err
		}
		if len(live) > 0 {
			g = load.Inputs(append(slices.Clip(inputs), live...), lo)
		}
	}
	if len(problems) > 0 {
		g.Problems = append(g.Problems, problems...)
		sort.SliceStable(g.Problems, func(i, j int) bool { return graph.LessPos(g.Problems[i].Pos, g.Problems[j].Pos) })
	}
	if mapper != nil {
		g.Mapper = mapper
	}
	return g, mapper, borrowed, nil
}

// overlay joins two blanked copies of one text line by line: each line is
// the one of a that is not blank, else b's.
func overlay(a, b []byte) []byte {
	la, lb := bytes.SplitAfter(a, []byte("\n")), bytes.SplitAfter(b, []byte("\n"))
	var out bytes.Buffer
	for i := 0; i < max(len(la), len(lb)); i++ {
		switch {
		case i < len(la) && len(bytes.TrimSpace(la[i])) > 0:
			out.Write(la[i])
		case i < len(lb):
			out.Write(lb[i])
		default:
			out.Write(la[i])
		}
	}
	return out.Bytes()
}

// onlyDocuments blanks every document of a file but the kept ones, keeping
// each line (so positions stay those of the file).
func onlyDocuments(data []byte, keep map[int]bool) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	doc := 0
	started := false
	var out bytes.Buffer
	for _, l := range lines {
		t := bytes.TrimRight(l, "\r\n")
		if bytes.HasPrefix(t, []byte("---")) && (len(t) == 3 || t[3] == ' ' || t[3] == '\t') {
			if started {
				doc++
			}
			started = true
			out.Write(l)
			continue
		}
		if len(bytes.TrimSpace(t)) > 0 && !bytes.HasPrefix(bytes.TrimSpace(t), []byte("#")) {
			started = true
		}
		if keep[doc] {
			out.Write(l)
		} else if bytes.HasSuffix(l, []byte("\n")) {
			out.WriteString("\n")
		}
	}
	return out.Bytes()
}

// merge joins the bundles' findings: sorted, with a finding two bundles
// share (a base file both overlays use, an Application in two bundles)
// reported once.
func merge(bundles []*Bundle) *analyzer.Result {
	out := &analyzer.Result{}
	for _, b := range bundles {
		if out.Err == nil {
			out.Err = b.Result.Err
		}
		if out.LiveErr == nil {
			out.LiveErr = b.Result.LiveErr
		}
		out.Diagnostics = append(out.Diagnostics, b.Result.Diagnostics...)
		out.Summary.Objects += b.Result.Summary.Objects
		if len(b.Result.Rules) > len(out.Rules) {
			out.Rules = b.Result.Rules
		}
	}
	sort.SliceStable(out.Diagnostics, func(i, j int) bool { return rules.Less(&out.Diagnostics[i], &out.Diagnostics[j]) })
	kept := out.Diagnostics[:0]
	for i, d := range out.Diagnostics {
		if i > 0 {
			p := kept[len(kept)-1]
			if p.RuleID == d.RuleID && p.Pos == d.Pos && p.Message == d.Message {
				continue
			}
		}
		kept = append(kept, d)
	}
	out.Diagnostics = kept
	out.Summary.Rules = len(out.Rules)
	out.Summary = out.Summary.Recount(out.Diagnostics)
	return out
}

// only keeps the findings on the reported files: at one of them, with a
// related location in one, or on an object rendered from one.
func only(rep *Report, reported map[string]bool) *analyzer.Result {
	key := func(p string) string { return filepath.Clean(p) }
	in := func(p string) bool {
		p = key(p)
		if reported[p] {
			return true
		}
		for d := range reported {
			if units.Within(p, d) {
				return true
			}
		}
		return false
	}
	out := &analyzer.Result{Rules: rep.Result.Rules, Summary: rep.Result.Summary}
	for _, d := range rep.Result.Diagnostics {
		// A finding outside every loaded file (a user policy that broke)
		// is about the run, not about a file.
		keep := in(d.Pos.File) || d.Resource == nil && !rep.files[d.Pos.File]
		for _, r := range d.Related {
			keep = keep || in(r.File)
		}
		if !keep && d.Resource != nil {
			for _, m := range rep.mappers {
				for _, f := range m.SourcesOf(d.Resource) {
					keep = keep || in(f)
				}
			}
		}
		if keep {
			out.Diagnostics = append(out.Diagnostics, d)
		}
	}
	out.Summary.Files = len(reported) // the files reported on, as without units
	out.Summary = out.Summary.Recount(out.Diagnostics)
	return out
}

// absPath names a file the same way however it was given.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}
