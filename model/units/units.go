// Package units finds what a repository deploys, the way the tools that
// deploy it do: Kustomize roots (kustomizations no other kustomization uses
// as a resource, base or component), Helm charts (Chart.yaml), the sources
// of Argo CD Applications whose path is inside the linted tree, and plain
// directories of manifests. Each unit is later rendered and linted as one
// bundle; units deployed to the same cluster and namespace share a Group.
//
// Discovery reads kustomization files, Chart.yaml and the Applications;
// it never renders and never reports findings of its own.
package units

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// Kind is how a unit is turned into manifests.
type Kind string

// Unit kinds.
const (
	Kustomize Kind = "kustomize" // kustomize build of Dir
	Helm      Kind = "helm"      // helm template of the chart in Dir
	Directory Kind = "directory" // the manifest files themselves
)

// Unit is one deployable unit: what `kustomize build`, `helm template`,
// `kubectl apply -f` or an Argo CD Application would apply.
type Unit struct {
	Kind Kind
	// Dir is the kustomization root, the chart directory, or the plain
	// directory (paths as found by walking the given roots).
	Dir string
	// Files are the manifest files of a Directory unit, sorted.
	Files []string
	// Skipped are the files of Files that must not be read (a pipe, a
	// symlink out of the tree), with the reason: each is an RL0011 finding.
	Skipped map[string]load.Entry
	// Inputs are the files of Files discovery read (load.ReadFile, with
	// Options.Limits), so rendering the unit does not read them again.
	Inputs map[string]load.Input
	// App is the Argo CD Application that deploys the unit, or nil. Its
	// source options (helm values, kustomize overrides, directory
	// recurse/include/exclude) shape the render.
	App *Application
	// Group names the units deployed together (same cluster and
	// namespace): Applications with the same destination, and all plain
	// directories. A unit alone in its group is linted alone.
	Group string
	// Namespace is the namespace the deploying tool gives objects that set
	// none (an Application's destination namespace), or "".
	Namespace string
	// Jsonnet are the *.jsonnet files of a Directory unit, sorted: Argo CD
	// renders them in a directory source, rolloutlint does not (each
	// directory holding some is an info RL0010).
	Jsonnet []string
	// Plugin is set when the unit's Application renders it with a Config
	// Management Plugin, which rolloutlint does not run: nothing of the
	// directory is read, and the render notes it (an info RL0010).
	Plugin bool
}

// Name is a short human name for the unit: its directory, and the
// Application deploying it.
func (u *Unit) Name() string {
	name := string(u.Kind) + " " + filepath.ToSlash(u.Dir)
	if u.App != nil {
		name += " (Application " + u.App.Name + ")"
	}
	return name
}

// Set is the result of discovery.
type Set struct {
	// Units in a deterministic order: by group, then kind and directory.
	Units []*Unit
	// Owned maps every file a unit reads or may read (kustomization
	// directories, charts, plain directories) to the units that do, so a
	// file given alone (pre-commit) finds the units to load for context.
	Owned map[string][]*Unit
	// Applications are every Argo CD Application found, whether or not its
	// source could be rendered here, and those ApplicationSets generate.
	Applications []*Application
	// Problems are what discovery could not evaluate (an ApplicationSet
	// generator that needs a cluster): info findings, at their line.
	Problems []graph.Problem

	// What Deploy needs to find the unit of an Application found later.
	dirs   map[string]*dirInfo
	kusts  map[string]*kustRefs
	charts []string
	roots  []string
	opts   Options
}

// Deploy returns the unit an Application found after discovery deploys
// (one a render made: an app of apps), as discovery would have made it for
// an Application in a file, or nil when its source is not a directory of
// the tree.
func (s *Set) Deploy(app *Application) *Unit {
	if s.dirs == nil {
		return nil
	}
	return appUnit(app, s.dirs, s.kusts, s.charts, s.roots, s.opts)
}

// UnitsOf returns the units a file belongs to (path cleaned), or nil.
func (s *Set) UnitsOf(path string) []*Unit {
	return s.Owned[filepath.Clean(path)]
}

func (s *Set) sort() {
	sort.SliceStable(s.Units, func(i, j int) bool {
		a, b := s.Units[i], s.Units[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Dir != b.Dir {
			return a.Dir < b.Dir
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return appName(a) < appName(b)
	})
}

func appName(u *Unit) string {
	if u.App == nil {
		return ""
	}
	return u.App.Namespace + "/" + u.App.Name
}

// LocalDependencyDir is the directory of a chart dependency whose
// repository is file:// (relative to the chart's directory, or absolute),
// and whether it is one. `helm dependency build` packages the chart there
// into charts/; rolloutlint renders it from there when charts/ lacks it.
func LocalDependencyDir(chartDir, repository string) (string, bool) {
	rest, ok := strings.CutPrefix(repository, "file://")
	if !ok || rest == "" {
		return "", false
	}
	if !filepath.IsAbs(rest) {
		rest = filepath.Join(chartDir, filepath.FromSlash(rest))
	}
	return filepath.Clean(rest), true
}
