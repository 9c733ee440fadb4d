package graph

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Problem is something wrong with the input itself, found while loading: a YAML
// syntax error, a document without kind, an unknown field. The tool rules
// (RL0xxx) turn problems into diagnostics so they obey config and suppression.
type Problem struct {
	RuleID   string
	Pos      Position
	Message  string    // what is wrong, one short sentence (rules.Diagnostic.Message)
	Detail   string    // what follows from it and how to fix it, or ""
	Resource *Resource // nil when no object could be identified
	Path     string
	// Info marks a note rather than a failure (reported at info
	// severity): something rolloutlint does not read by design.
	Info bool
}

// Directive is an inline `# rolloutlint:ignore RLxxxx -- reason` comment.
type Directive struct {
	Pos    Position // where the comment is
	Line   int      // the line the directive covers: its own when it trails code, else the next
	Rules  []string // rule IDs or globs
	Reason string
	// Unknown is the word after `rolloutlint:` when it is not `ignore` (a
	// misspelt directive, such as `rolloutlint:ignroe`): it suppresses
	// nothing, and is reported.
	Unknown string
}

// AnnotationPrefix starts the key of every annotation of rolloutlint's
// (rolloutlint.io/ignore).
const AnnotationPrefix = "rolloutlint.io/"

// File is one source file of the bundle.
type File struct {
	Path       string
	Lines      int
	Directives []Directive
	// Source is the file's text as read (byte-order mark removed), for
	// positions inside block scalars that yaml nodes do not give.
	Source []byte
	// MentionsAnnotations is whether Source holds "rolloutlint.io/", the
	// prefix of rolloutlint's annotation keys: the loader finds it while
	// the text is in the CPU caches, so the check for misspelt keys reads
	// only those files again, not every file of a large bundle from memory.
	MentionsAnnotations bool
	// Rendered marks a renderer's output (Kustomize, Helm): not a file the
	// user wrote, so no finding may point into it; Graph.Mapper moves its
	// positions into the user's files.
	Rendered bool
}

// Mapper maps positions in rendered documents (files marked Rendered) to the
// files the user wrote, with related locations saying where a value came
// from (the base a patch changed, the values file a template read).
type Mapper interface {
	MapPos(p Position) (Position, []Location)
}

// Location is a related place in a user's file and what it is.
type Location struct {
	Pos     Position
	Message string
}

// ObjectKey names an object: kind, namespace and name.
type ObjectKey struct {
	Kind      string
	Namespace string
	Name      string
}

// Graph is one loaded bundle: resources in load order, indexes and resolved
// references. It is built once per lint and read concurrently by rules.
type Graph struct {
	Resources []*Resource
	Files     []*File
	Problems  []Problem
	// DefaultNamespace is the namespace given to objects that do not set one.
	DefaultNamespace string
	// Mapper, when set, maps positions in rendered files into the user's
	// files; the analyzer applies it to every finding (nil: no file is
	// rendered).
	Mapper Mapper
	// FastDocuments counts the documents the loader's fast decoder loaded;
	// the others took the full yaml.v3 path (all of them with
	// load.Options.FullDecode).
	FastDocuments int

	byKind    map[string][]*Resource
	byKey     *keyIndex
	files     map[string]*File
	refs      *References
	hostIdx   *hostIndex
	podLabels *podLabelIndex
	memo      sync.Map      // see Memo
	memoSeq   atomic.Uint64 // numbers the memo entries (see MemoMark)
}

// concurrentObjects is the smallest bundle whose graph is built on several
// goroutines: below it (a pre-commit bundle, a webhook review) starting them
// costs more than the indexes take.
const concurrentObjects = 2048

// New builds a graph over resources (already in load order) and files. It
// indexes them and resolves every cross-object reference.
func New(defaultNamespace string, resources []*Resource, files []*File, problems []Problem) *Graph {
	return newGraph(defaultNamespace, resources, files, problems, len(resources) >= concurrentObjects)
}

func newGraph(defaultNamespace string, resources []*Resource, files []*File, problems []Problem, concurrent bool) *Graph {
	g := &Graph{
		Resources:        resources,
		Files:            files,
		Problems:         problems,
		DefaultNamespace: defaultNamespace,
		byKind:           map[string][]*Resource{},
		files:            make(map[string]*File, len(files)),
	}
	for i, r := range resources {
		r.index = i
		r.kindPos = len(g.byKind[r.Kind])
		g.byKind[r.Kind] = append(g.byKind[r.Kind], r)
	}
	for _, f := range files {
		g.files[f.Path] = f
	}
	sort.SliceStable(g.Problems, func(i, j int) bool { return lessPos(g.Problems[i].Pos, g.Problems[j].Pos) })
	if !concurrent {
		g.indexKeys()
		g.hostIdx = buildHostIndex(g)
		g.podLabels = buildPodLabelIndex(g)
		g.refs = resolve(g, false)
		return g
	}
	// On a large bundle the graph is on the critical path of a lint, between
	// the parallel loading and the parallel rules: the host index needs only
	// byKind, the pod label index and the references need byKey too, and
	// none reads another's result.
	var wg sync.WaitGroup
	wg.Go(func() { g.hostIdx = buildHostIndex(g) })
	g.indexKeys()
	wg.Go(func() { g.podLabels = buildPodLabelIndex(g) })
	g.refs = resolve(g, true)
	wg.Wait()
	return g
}

// lists hands out the one-element lists most keys of an index get as
// windows of a shared array (capacity one, so that appending to one copies
// it) instead of one allocation per key.
type lists[V any] struct{ store []V }

// addTo appends v to m[k], a first value as a window of l.
func addTo[K comparable, V any](l *lists[V], m map[K][]V, k K, v V) {
	if vs, ok := m[k]; ok {
		m[k] = append(vs, v)
		return
	}
	l.store = append(l.store, v) // a full store grows; earlier windows keep the old array
	n := len(l.store)
	m[k] = l.store[n-1 : n : n]
}

// newLists returns lists with room for n keys.
func newLists[V any](n int) *lists[V] { return &lists[V]{store: make([]V, 0, n)} }

// indexKeys fills byKey.
func (g *Graph) indexKeys() { g.byKey = newKeyIndex(g.Resources) }

// OfKind returns every resource of a kind, in load order.
func (g *Graph) OfKind(kind string) []*Resource { return g.byKind[kind] }

// Get returns the first resource with that kind, namespace and name, or nil.
func (g *Graph) Get(kind, namespace, name string) *Resource {
	return g.byKey.first(kind, namespace, name)
}

// GetGroup is Get restricted to one API group, for kind names two groups
// share (Istio's Gateway and the Gateway API's).
func (g *Graph) GetGroup(group, kind, namespace, name string) *Resource {
	for _, r := range g.byKey.all(kind, namespace, name) {
		if r.Group == group {
			return r
		}
	}
	return nil
}

// All returns every resource with that kind, namespace and name (more than one
// means the bundle defines the object twice).
func (g *Graph) All(kind, namespace, name string) []*Resource {
	return g.byKey.all(kind, namespace, name)
}

// Duplicates returns, in load order, every resource defined after an earlier
// one with the same kind, namespace and name (whatever their API groups).
func (g *Graph) Duplicates() []*Resource { return g.byKey.dups }

// UserFiles counts the files the user wrote (rendered output excluded).
func (g *Graph) UserFiles() int {
	n := 0
	for _, f := range g.Files {
		if !f.Rendered {
			n++
		}
	}
	return n
}

// File returns the file record for a path, or nil.
func (g *Graph) File(path string) *File { return g.files[path] }

// Refs returns the resolved references of the bundle.
func (g *Graph) Refs() *References { return g.refs }

// HasGroup reports whether the bundle holds any object of the API group.
func (g *Graph) HasGroup(group string) bool {
	for _, r := range g.Resources {
		if r.Group == group {
			return true
		}
	}
	return false
}

// Namespaces returns the sorted set of namespaces holding objects of a kind.
func (g *Graph) Namespaces(kind string) []string {
	seen := map[string]bool{}
	for _, r := range g.byKind[kind] {
		seen[r.Namespace] = true
	}
	out := make([]string, 0, len(seen))
	for ns := range seen {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

func lessPos(a, b Position) bool {
	if a.File != b.File {
		return LessFile(a.File, b.File)
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Column < b.Column
}

// LessPos orders positions by file, line and column.
func LessPos(a, b Position) bool { return lessPos(a, b) }

// SplitNamespacedName splits an Argo-style VirtualService reference `name` or
// `name.namespace` the way Argo Rollouts v1.10 does
// (utils/istio GetVirtualServiceNamespaceName): a `.cluster.local` suffix is
// dropped, then the last dot-separated part is the namespace. Only
// `.cluster.local` goes: `vs.ns.svc.cluster.local` names VirtualService
// `vs.ns` in namespace `svc`, as it does for the controller.
func SplitNamespacedName(ref, defaultNamespace string) (name, namespace string) {
	ref = strings.TrimSuffix(ref, ".cluster.local")
	i := strings.LastIndexByte(ref, '.')
	if i < 0 {
		return ref, defaultNamespace
	}
	return ref[:i], ref[i+1:]
}
