package units

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/load"
)

// KustomizationNames are the file names kustomize recognises, in the order
// it tries them.
var KustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// Options control discovery.
type Options struct {
	// RepoRoot is the directory Argo CD Application source paths are
	// relative to (the repository root); "" uses each walked root.
	RepoRoot string
	// Exclude reports whether a file is never read (config excludes).
	Exclude func(path string) bool
	// FollowSymlinks follows symlinks that leave the walked tree
	// (--follow-symlinks); without it they are skipped, as a lint skips them.
	FollowSymlinks bool
	// Limits are the renderer's: manifests are read as the loader reads
	// them (load.ReadFile), so the bytes read to find Applications are the
	// ones a directory unit is rendered from (Unit.Inputs).
	Limits load.Limits
}

// dirInfo is what one directory of the tree holds.
type dirInfo struct {
	kustomization string   // its kustomization file, or ""
	chart         bool     // it holds Chart.yaml
	manifests     []string // *.yaml, *.yml, *.json files (kustomization and Chart.yaml excluded)
	jsonnet       []string // *.jsonnet files (Argo CD renders them in a directory source)
	skipped       []string // manifest-named files that must not be read (see load.Walk)
}

// Discover walks the given directories and returns their units. Paths that
// are files are not walked; callers find their units with Set.UnitsOf on a
// discovery of the enclosing tree.
func Discover(roots []string, opts Options) (*Set, error) {
	dirs := map[string]*dirInfo{}
	var order []string
	skipped := map[string]load.Entry{}
	// dir records a directory of the tree and the ones above it, up to root.
	dir := func(root, d string) *dirInfo {
		root = filepath.Clean(root)
		for p := d; ; p = filepath.Dir(p) {
			if dirs[p] == nil {
				dirs[p] = &dirInfo{}
				order = append(order, p)
			}
			if p == root || p == "." || filepath.Dir(p) == p {
				break
			}
		}
		return dirs[d]
	}
	wanted := func(p string) bool {
		name := filepath.Base(p)
		return isKustomizationName(name) || isManifestName(name) || isJsonnetName(name)
	}
	for _, root := range roots {
		st, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", root, err)
		}
		if !st.IsDir() {
			continue
		}
		dir(root, filepath.Clean(root))
		// The walk of a plain lint: regular files only, symlinks out of
		// the tree not followed, so a unit never reads what a lint of the
		// same directory would refuse.
		entries, err := load.Walk(root, load.Options{Exclude: opts.Exclude, FollowSymlinks: opts.FollowSymlinks}, wanted)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p, name := e.Path, filepath.Base(e.Path)
			di := dir(root, filepath.Dir(p))
			switch {
			case e.Skipped != "":
				skipped[p] = e
				di.skipped = append(di.skipped, p)
			case isKustomizationName(name):
				if di.kustomization == "" {
					di.kustomization = p
				}
			case name == "Chart.yaml":
				di.chart = true
			case isJsonnetName(name):
				di.jsonnet = append(di.jsonnet, p)
			default:
				di.manifests = append(di.manifests, p)
			}
		}
	}
	set, err := build(dirs, order, roots, opts)
	if err != nil {
		return nil, err
	}
	for _, u := range set.Units {
		if u.Kind != Directory {
			continue
		}
		for _, f := range u.Files {
			if why, ok := skipped[f]; ok {
				if u.Skipped == nil {
					u.Skipped = map[string]load.Entry{}
				}
				u.Skipped[f] = why
			}
		}
	}
	return set, nil
}

func isKustomizationName(name string) bool {
	for _, n := range KustomizationNames {
		if name == n {
			return true
		}
	}
	return false
}

// isJsonnetName is a Jsonnet program Argo CD evaluates in a directory
// source (*.jsonnet; *.libsonnet are libraries it imports).
func isJsonnetName(name string) bool {
	return strings.EqualFold(filepath.Ext(name), ".jsonnet")
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// build classifies the walked directories into units.
func build(dirs map[string]*dirInfo, order []string, roots []string, opts Options) (*Set, error) {
	sort.Strings(order)
	set := &Set{Owned: map[string][]*Unit{}}
	// Charts own their whole subtree (templates, values, vendored charts/).
	var charts []string
	inChart := func(p string) bool {
		for _, c := range charts {
			if Within(p, c) {
				return true
			}
		}
		return false
	}
	for _, d := range order {
		if dirs[d].chart && !inChart(d) {
			charts = append(charts, d)
		}
	}
	// Kustomizations: which directories and files each one uses.
	kusts := map[string]*kustRefs{}
	referenced := map[string]bool{}
	ownedByKust := map[string]bool{}
	for _, d := range order {
		di := dirs[d]
		if di.kustomization == "" || inChart(d) {
			continue
		}
		refs := readKustomization(di.kustomization)
		kusts[d] = refs
		for _, r := range refs.dirs {
			referenced[r] = true
		}
		for _, f := range refs.files {
			ownedByKust[f] = true
		}
		for _, f := range di.manifests {
			ownedByKust[f] = true // kustomize reads only what is listed, but a file beside a kustomization is its input
		}
	}
	// Applications, from every manifest file outside charts and kustomizations.
	read := map[string]load.Input{} // what directory units may keep (Unit.Inputs)
	var sets []*appSet
	for _, d := range order {
		if inChart(d) {
			continue
		}
		for _, f := range dirs[d].manifests {
			in, data, keep, err := readManifest(f, opts.Limits)
			if err != nil {
				return nil, err
			}
			if keep {
				read[f] = in
			}
			set.Applications = append(set.Applications, applicationsIn(f, data)...)
			sets = append(sets, applicationSetsIn(f, data)...)
		}
	}
	// ApplicationSets: the Applications their repository generators make.
	for _, s := range sets {
		apps, problems := expandApplicationSet(s, generatorRoots(roots, opts))
		set.Applications = append(set.Applications, apps...)
		set.Problems = append(set.Problems, problems...)
	}
	set.dirs, set.kusts, set.charts, set.roots, set.opts = dirs, kusts, charts, roots, opts
	claimed := map[string]bool{} // directories deployed by an Application
	for _, app := range set.Applications {
		u := appUnit(app, dirs, kusts, charts, roots, opts)
		if u == nil {
			continue
		}
		claimed[u.Dir] = true
		if u.Kind == Directory && app.Source.Directory != nil && app.Source.Directory.Recurse {
			for d := range dirs {
				if d != u.Dir && Within(d, u.Dir) {
					claimed[d] = true // the Application's, even what include/exclude leave out
				}
			}
		}
		set.Units = append(set.Units, u)
	}
	for _, c := range charts {
		if claimed[c] {
			continue
		}
		set.Units = append(set.Units, &Unit{Kind: Helm, Dir: c, Group: "unit:" + c})
	}
	for _, d := range order {
		if kusts[d] == nil || referenced[d] || claimed[d] {
			continue
		}
		set.Units = append(set.Units, &Unit{Kind: Kustomize, Dir: d, Group: "unit:" + d})
	}
	// Plain directories: what no chart, kustomization or Application owns.
	for _, d := range order {
		if inChart(d) || claimed[d] {
			continue
		}
		var files []string
		for _, f := range dirs[d].manifests {
			if !ownedByKust[f] && !claimedFile(f, set.Units) {
				files = append(files, f)
			}
		}
		files = append(files, dirs[d].skipped...) // reported as not read (RL0011)
		sort.Strings(files)
		var jsonnet []string
		if kusts[d] == nil {
			jsonnet = dirs[d].jsonnet
		}
		if len(files) > 0 || len(jsonnet) > 0 {
			set.Units = append(set.Units, &Unit{Kind: Directory, Dir: d, Files: files, Jsonnet: jsonnet, Group: "plain"})
		}
	}
	// Directory units keep the bytes read above, so the render does not
	// read their files again; the bytes of files no directory unit loads
	// are dropped with read.
	for _, u := range set.Units {
		if u.Kind != Directory {
			continue
		}
		for _, f := range u.Files {
			if in, ok := read[f]; ok {
				if u.Inputs == nil {
					u.Inputs = make(map[string]load.Input, len(u.Files))
				}
				u.Inputs[f] = in
			}
		}
	}
	// Ownership, for files given alone.
	for _, u := range set.Units {
		for _, f := range ownedFiles(u, dirs, kusts, inChart) {
			set.Owned[f] = appendUnique(set.Owned[f], u)
		}
		if u.App != nil { // the Application's own file deploys the unit
			set.Owned[u.App.File] = appendUnique(set.Owned[u.App.File], u)
		}
	}
	set.sort()
	return set, nil
}

// readManifest reads a manifest file as the loader does (load.ReadFile: no
// more than the file-size limit, whose RL0005 finding the loader reports)
// and returns what a directory unit may keep (keep false: nothing, the
// render reads the file again and reports what the loader says of it) with
// the bytes to find Applications in: the same bytes or, for a file the loader
// does not read whole (over the limit) or at all, the file as far as
// maxSearchBytes, as discovery has always searched it. That bound keeps a
// file of gigabytes from being read whole (a 400 MB file in a linted
// directory was read twice, the second time whole: 500 MB for a lint).
func readManifest(f string, limits load.Limits) (in load.Input, data []byte, keep bool, err error) {
	in, lerr := load.ReadFile(f, load.Options{Limits: limits})
	if lerr == nil && int64(len(in.Data)) <= maxFileBytes(limits) {
		return in, in.Data, true, nil
	}
	data, err = readPrefix(f, max(maxFileBytes(limits), maxSearchBytes))
	if err != nil {
		return load.Input{}, nil, false, fmt.Errorf("reading %s: %w", f, err)
	}
	return in, data, lerr == nil, nil
}

// maxSearchBytes is how much of a file over the file-size limit discovery
// searches for Applications (at least: a larger limit is searched whole).
const maxSearchBytes = load.DefaultMaxFileBytes

// readPrefix reads at most n bytes of a file.
func readPrefix(f string, n int64) ([]byte, error) {
	file, err := os.Open(f)
	if err != nil {
		return nil, err
	}
	defer func() { _ = file.Close() }()
	if st, err := file.Stat(); err == nil && st.Size() < n {
		n = st.Size()
	}
	buf := make([]byte, n)
	m, err := io.ReadFull(file, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return buf[:m], err
}

// maxFileBytes is the file-size limit limits set.
func maxFileBytes(limits load.Limits) int64 {
	if limits.MaxFileBytes > 0 {
		return limits.MaxFileBytes
	}
	return load.DefaultMaxFileBytes
}

func appendUnique(us []*Unit, u *Unit) []*Unit {
	for _, x := range us {
		if x == u {
			return us
		}
	}
	return append(us, u)
}

// claimedFile reports whether a directory unit of an Application lists f.
func claimedFile(f string, units []*Unit) bool {
	for _, u := range units {
		if u.Kind == Directory && u.App != nil {
			for _, x := range u.Files {
				if x == f {
					return true
				}
			}
		}
	}
	return false
}

// ownedFiles lists the files a unit reads or may read: a chart's subtree, a
// kustomization's directory and everything it references, transitively,
// and a directory unit's files.
func ownedFiles(u *Unit, dirs map[string]*dirInfo, kusts map[string]*kustRefs, inChart func(string) bool) []string {
	switch u.Kind {
	case Directory:
		return u.Files
	case Helm:
		var out []string
		// The chart's tree, and that of each file:// dependency it renders
		// from its own directory.
		for _, top := range append([]string{u.Dir}, localDependencies(u.Dir)...) {
			for d, di := range dirs {
				if Within(d, top) {
					out = append(out, di.manifests...)
					if di.chart {
						out = append(out, filepath.Join(d, "Chart.yaml"))
					}
					out = append(out, templateFiles(d)...)
				}
			}
		}
		return out
	}
	var out []string
	seen := map[string]bool{}
	var visit func(d string)
	visit = func(d string) {
		if seen[d] || kusts[d] == nil {
			return
		}
		seen[d] = true
		di := dirs[d]
		out = append(out, di.kustomization)
		out = append(out, di.manifests...)
		out = append(out, kusts[d].files...)
		for _, r := range kusts[d].dirs {
			visit(r)
		}
	}
	visit(u.Dir)
	return out
}

// localDependencies are the directories of a chart's file:// dependencies
// that hold a chart.
func localDependencies(chartDir string) []string {
	data, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return nil
	}
	var meta struct {
		Dependencies []struct {
			Repository string `yaml:"repository"`
		} `yaml:"dependencies"`
	}
	if yaml.Unmarshal(data, &meta) != nil {
		return nil
	}
	var out []string
	for _, d := range meta.Dependencies {
		if dir, ok := LocalDependencyDir(chartDir, d.Repository); ok {
			if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil {
				out = append(out, dir)
			}
		}
	}
	return out
}

// templateFiles lists the non-YAML files of a chart directory Helm reads
// (templates/_helpers.tpl, NOTES.txt).
func templateFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".tpl") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// appUnit is the unit an Application's source deploys, when its path is a
// directory inside the walked roots; nil for charts from a Helm repository,
// paths elsewhere, and `ref` sources that only provide values files.
func appUnit(app *Application, dirs map[string]*dirInfo, kusts map[string]*kustRefs, charts []string, roots []string, opts Options) *Unit {
	src := app.Source
	if src.Path == "" || src.Chart != "" {
		return nil
	}
	// The path is relative to the repository root; a tree linted without
	// its .git (a copy, a fixture) is tried from each walked root and the
	// directories above it.
	rel := filepath.FromSlash(path.Clean("/" + src.Path))[1:]
	dir := ""
	for _, c := range candidateRoots(roots, opts) {
		if p := filepath.Join(c, rel); dirs[p] != nil {
			dir = p
			break
		}
	}
	if dir == "" {
		return nil // not inside the linted tree
	}
	u := &Unit{Dir: dir, App: app, Group: "app:" + app.Destination.Key(), Namespace: app.Destination.Namespace}
	switch {
	case src.Plugin != nil:
		u.Kind, u.Plugin = Directory, true // the plugin reads the directory, rolloutlint nothing
	case kusts[dir] != nil:
		u.Kind = Kustomize
	case containsString(charts, dir):
		u.Kind = Helm
	default:
		u.Kind = Directory
		u.Files, u.Jsonnet = directoryFiles(dir, dirs, src.Directory)
	}
	return u
}

// candidateRoots are the directories an Argo CD path may be relative to:
// the repository root, then each walked root and the directories above it
// (a tree linted without its .git: a copy, a fixture).
func candidateRoots(roots []string, opts Options) []string {
	var candidates []string
	if opts.RepoRoot != "" {
		candidates = append(candidates, filepath.Clean(opts.RepoRoot))
	}
	for _, r := range roots {
		for d := filepath.Clean(r); ; d = filepath.Dir(d) {
			candidates = append(candidates, d)
			if d == "." || d == string(filepath.Separator) || filepath.Dir(d) == d {
				break
			}
		}
	}
	return candidates
}

// generatorRoots are the directories a git generator's paths may be
// relative to, in candidateRoots' order. A generator lists its
// candidate's whole tree, so unlike an Application path (a lookup in the
// walked tree) it must never try a directory outside the repository: one
// that matches nothing in the repository would otherwise walk every
// directory above it, up to the file system's root. Inside a repository
// (RepoRoot set) they are the repository root, then each walked root and
// the directories above it up to the repository root; in a tree linted
// without its .git, the walked roots alone.
func generatorRoots(roots []string, opts Options) []string {
	var out []string
	repo := ""
	if opts.RepoRoot != "" {
		repo = filepath.Clean(opts.RepoRoot)
		out = append(out, repo)
	}
	for _, r := range roots {
		d := filepath.Clean(r)
		if repo == "" || !within(repo, d) {
			out = append(out, d)
			continue
		}
		for ; d != repo; d = filepath.Dir(d) {
			out = append(out, d)
		}
	}
	return out
}

// within reports whether dir is root or below it (both cleaned).
func within(root, dir string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// directoryFiles are the manifests Argo CD applies from a directory source:
// the directory's own files, or its whole subtree with recurse, filtered by
// the include and exclude globs (matched against the path relative to the
// source directory; `{a,b}` alternatives allowed, as Argo CD does); the
// *.jsonnet files among them apart.
func directoryFiles(dir string, dirs map[string]*dirInfo, opt *DirectorySource) (files, jsonnet []string) {
	var out []string
	for d, di := range dirs {
		if d != dir && (opt == nil || !opt.Recurse || !Within(d, dir)) {
			continue
		}
		for _, f := range append(append(append([]string(nil), di.manifests...), di.skipped...), di.jsonnet...) {
			rel, _ := filepath.Rel(dir, f)
			rel = filepath.ToSlash(rel)
			if opt != nil && opt.Include != "" && !globMatch(opt.Include, rel) {
				continue
			}
			if opt != nil && opt.Exclude != "" && globMatch(opt.Exclude, rel) {
				continue
			}
			out = append(out, f)
		}
	}
	sort.Strings(out)
	for _, f := range out {
		if isJsonnetName(filepath.Base(f)) {
			jsonnet = append(jsonnet, f)
		} else {
			files = append(files, f)
		}
	}
	return files, jsonnet
}

// globMatch matches Argo CD's include/exclude patterns: `{a,b}` lists
// alternatives; each is a path.Match glob tried on the relative path and
// on the file name.
func globMatch(pattern, rel string) bool {
	for _, alt := range expandBraces(pattern) {
		if ok, _ := path.Match(alt, rel); ok {
			return true
		}
		if ok, _ := path.Match(alt, path.Base(rel)); ok {
			return true
		}
	}
	return false
}

func expandBraces(p string) []string {
	i := strings.IndexByte(p, '{')
	j := strings.IndexByte(p, '}')
	if i < 0 || j < i {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[i+1:j], ",") {
		out = append(out, expandBraces(p[:i]+alt+p[j+1:])...)
	}
	return out
}

// kustRefs is what a kustomization uses from the file system.
type kustRefs struct {
	dirs  []string // resources, bases and components that are directories
	files []string // resource files, patches and other files it names
}

// readKustomization lists the local directories and files a kustomization
// names. A file that does not parse names nothing here; the render
// reports it.
func readKustomization(file string) *kustRefs {
	refs := &kustRefs{}
	data, err := os.ReadFile(file)
	if err != nil {
		return refs
	}
	var k struct {
		Resources             []string `yaml:"resources"`
		Bases                 []string `yaml:"bases"`
		Components            []string `yaml:"components"`
		Crds                  []string `yaml:"crds"`
		Configurations        []string `yaml:"configurations"`
		Generators            []string `yaml:"generators"`
		Transformers          []string `yaml:"transformers"`
		Validators            []string `yaml:"validators"`
		PatchesStrategicMerge []string `yaml:"patchesStrategicMerge"`
		Patches               []struct {
			Path string `yaml:"path"`
		} `yaml:"patches"`
		PatchesJSON6902 []struct {
			Path string `yaml:"path"`
		} `yaml:"patchesJson6902"`
		Replacements []struct {
			Path string `yaml:"path"`
		} `yaml:"replacements"`
	}
	if yaml.Unmarshal(data, &k) != nil {
		return refs
	}
	dir := filepath.Dir(file)
	add := func(p string, maybeDir bool) {
		if p == "" || IsRemote(p) || strings.ContainsAny(p, "\n:") && !strings.Contains(p, "/") {
			return
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		st, err := os.Stat(full)
		switch {
		case err != nil:
		case st.IsDir() && maybeDir:
			refs.dirs = append(refs.dirs, full)
		case !st.IsDir():
			refs.files = append(refs.files, full)
		}
	}
	for _, list := range [][]string{k.Resources, k.Bases, k.Components} {
		for _, p := range list {
			add(p, true)
		}
	}
	for _, list := range [][]string{k.Crds, k.Configurations, k.Generators, k.Transformers, k.Validators, k.PatchesStrategicMerge} {
		for _, p := range list {
			add(p, false)
		}
	}
	for _, p := range k.Patches {
		add(p.Path, false)
	}
	for _, p := range k.PatchesJSON6902 {
		add(p.Path, false)
	}
	for _, p := range k.Replacements {
		add(p.Path, false)
	}
	return refs
}

// IsRemote reports whether a kustomization entry names a remote resource
// (a URL or a git repository), which rolloutlint does not fetch.
func IsRemote(p string) bool {
	return strings.Contains(p, "://") || strings.HasPrefix(p, "git@") || strings.HasPrefix(p, "github.com/") ||
		strings.HasPrefix(p, "gitlab.com/") || strings.HasPrefix(p, "bitbucket.org/") || strings.Contains(p, "?ref=") ||
		strings.Contains(p, ".git//")
}

// Within reports whether path p is dir or below it. Both are clean paths
// as discovery makes them; "." holds every relative path that does not
// climb out of it (a chart linted as `lint .` owns "templates").
func Within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == "." {
		return !filepath.IsAbs(p) && p != ".." && !strings.HasPrefix(p, ".."+string(filepath.Separator))
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}
