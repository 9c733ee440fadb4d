// Package graph holds a loaded bundle: every resource with its source position,
// indexes by kind and name, and the cross-object references resolved once so
// that rules never rescan the bundle.
package graph

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// ObjectRef identifies an object in findings and in the JSON output.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// Resource is one Kubernetes object of the bundle, with where it came from.
type Resource struct {
	// The fields every rule's scan reads come first, in 64 bytes (the typed
	// object, kind, namespace and name): on a large bundle the Resources do
	// not fit in the processor's caches, and a rule walking a kind's objects
	// then loads one or two cache lines of each (a Resource is 224 bytes),
	// where these fields spread over two or three.

	// Typed is the decoded API object (*v1alpha1.Rollout, *corev1.Service,
	// *kinds.VirtualServiceObject, ...) or nil for kinds kept untyped.
	Typed any
	// Kind is the object's kind, as written (Rollout, VirtualService, ...).
	Kind string
	// Namespace is defaulted: explicit > --namespace > "default"; "" for
	// cluster-scoped kinds.
	Namespace string
	// Name is metadata.name ("" when the manifest gives none).
	Name string

	APIVersion string
	Group      string
	Version    string
	// NamespaceExplicit is true when the manifest itself set metadata.namespace.
	NamespaceExplicit bool

	File string // path as given on the command line (or "<stdin>")
	Doc  int    // 0-based document index within the file

	// object is the document as generic JSON-compatible data, or nil when
	// it is not kept (see Object).
	object map[string]any
	// Known reports whether the kind is in rolloutlint's kind table.
	Known bool
	// DecodeFailed is set when the typed object could not be decoded (an
	// RL0003 finding says why): what rules would find on the partial
	// object follows from that finding and is not reported.
	DecodeFailed bool

	index   int // position in the bundle's load order; ties broken by it
	kindPos int // position in its graph's OfKind list (see KindPos)

	// weights is a VirtualService's WeightsSet when the loader recorded it.
	weights *WeightsSet

	// The yaml node tree is the largest part of a loaded object and is only
	// needed to position findings, so the loader releases it after decoding
	// and Node rebuilds it from the document's source on demand.
	mu   sync.Mutex
	node *yaml.Node
	src  *NodeSource
	// positions, when set (by Copy), remembers Pos for the resource and
	// its copies, which hold the same document: a copy then does not parse
	// the document again for a finding an earlier copy positioned.
	positions *posMemo
	// derived, when set (by Copy), holds what was computed from the
	// document for the resource and its copies (see Derived).
	derived *derivedMemo
}

// posMemo is the positions of the paths of one document found so far.
type posMemo struct {
	mu sync.Mutex
	m  map[string]Position
}

// NodeSource is where a resource's yaml node can be rebuilt from: the
// document's text (a slice of the file, not a copy), the number of file lines
// before it, and for an item of a `kind: List` its index (-1 otherwise).
type NodeSource struct {
	Data       []byte
	LineOffset int
	Item       int
	// Fast is set when the document was decoded by the fast decoder, which
	// then decodes its generic object again on demand (see Resource.Object),
	// skipping what is not selected (fastyaml.DecodeAcceptedFields: the
	// decoder accepted Data once, so it is in the decoder's subset).
	Fast bool
}

// Object returns the document as generic JSON-compatible data (maps, slices,
// strings, int64/float64, bools, nil), the input Rego policies see. Objects
// of typed kinds loaded by the loader's fast path do not keep it: it is the
// largest part of a loaded bundle and few rules read it, so it is decoded
// again from the document's source on each call. Callers that read it more
// than once should keep the returned map. It must not be modified.
func (r *Resource) Object() map[string]any { return r.ObjectFields(nil) }

// ObjectFields is Object reduced to a selection of fields when the document
// has to be decoded again (it may hold more, never less): the Rego input
// needs a few fields of most objects.
func (r *Resource) ObjectFields(sel *fastyaml.Fields) map[string]any {
	if r.object != nil || r.src == nil || !r.src.Fast {
		return r.object
	}
	obj, _ := fastyaml.DecodeAcceptedFields(r.src.Data, sel)
	return obj
}

// WithObjectFields calls fn with ObjectFields(sel) and, when the document was
// decoded again for the call, hands the decoded maps back for later decodes
// once fn returns (fastyaml.Recycle): fn must keep no map or list of obj.
// Building the Rego input decodes a few fields of most objects this way.
func (r *Resource) WithObjectFields(sel *fastyaml.Fields, fn func(obj map[string]any)) {
	if r.object != nil || r.src == nil || !r.src.Fast {
		fn(r.object)
		return
	}
	obj, _ := fastyaml.DecodeAcceptedFields(r.src.Data, sel)
	fn(obj)
	if obj != nil {
		fastyaml.Recycle(obj)
	}
}

// FastSource returns the document text ObjectFields decodes again on each
// call, or nil when the object is kept or was not decoded by the fast
// decoder. A rule that looks for something rare in the object can scan it
// first and skip the decode when it cannot be there.
func (r *Resource) FastSource() []byte {
	if r.object != nil || r.src == nil || !r.src.Fast {
		return nil
	}
	return r.src.Data
}

// SetWeightsSet records a VirtualService's WeightsSet (the loader does, from
// the generic object it decodes).
func (r *Resource) SetWeightsSet(w *WeightsSet) { r.weights = w }

// WeightsSet returns the WeightsSet the loader recorded, or nil.
func (r *Resource) WeightsSet() *WeightsSet { return r.weights }

// Copy returns r for another graph: the same identity, decoded object,
// typed object and source, but no position in a bundle (graph.New gives it)
// and no node tree when it can be rebuilt from the source (each copy builds
// its own on demand, so copies do not keep trees alive). A loaded resource is
// never modified, so copies share what they hold: the webhook loads a cluster
// object once and joins copies of it into every review it takes part in.
func (r *Resource) Copy() *Resource {
	r.mu.Lock()
	node, src := r.node, r.src
	if r.positions == nil {
		r.positions = &posMemo{m: map[string]Position{}}
	}
	positions := r.positions
	if r.derived == nil {
		r.derived = &derivedMemo{}
	}
	derived := r.derived
	r.mu.Unlock()
	if src != nil {
		node = nil
	}
	return &Resource{
		APIVersion: r.APIVersion, Group: r.Group, Version: r.Version, Kind: r.Kind,
		Namespace: r.Namespace, Name: r.Name, NamespaceExplicit: r.NamespaceExplicit,
		File: r.File, Doc: r.Doc,
		object: r.object, Typed: r.Typed, Known: r.Known, DecodeFailed: r.DecodeFailed,
		weights: r.weights, node: node, src: src, positions: positions,
		derived: derived,
	}
}

// derivedMemo is what was derived from one document, by key.
type derivedMemo struct {
	mu sync.Mutex
	m  map[any]any
}

// maxDerived bounds a document's derived values: a key stands for one way of
// deriving (one policy set's field selection), and only reloading the
// policies again and again makes new ones.
const maxDerived = 8

// Derived returns what fn derives from the resource's document for key. For
// a resource that has been copied, it is derived once for the resource and
// all its copies (the webhook joins copies of a cluster object into every
// review it takes part in, and converts it to policy input in each); for
// any other resource fn is called every time (its graph derives it once).
// fn must depend on the document and key alone, and what it returns must
// never be modified; callers racing on a key may both call fn, and the first
// value stored is kept.
func (r *Resource) Derived(key any, fn func() any) any {
	d := r.derived
	if d == nil {
		return fn()
	}
	d.mu.Lock()
	v, ok := d.m[key]
	d.mu.Unlock()
	if ok {
		return v
	}
	v = fn()
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := d.m[key]; ok {
		return old
	}
	if d.m == nil || len(d.m) >= maxDerived {
		d.m = map[any]any{}
	}
	d.m[key] = v
	return v
}

// SetObject sets the generic form of the document, which the resource then
// keeps (see Object).
func (r *Resource) SetObject(obj map[string]any) { r.object = obj }

// SetNode attaches the parsed node and the source it can be rebuilt from.
func (r *Resource) SetNode(n *yaml.Node, src *NodeSource) {
	r.mu.Lock()
	r.node, r.src = n, src
	r.mu.Unlock()
}

// ReleaseNode drops the node tree when it can be rebuilt from its source.
func (r *Resource) ReleaseNode() {
	r.mu.Lock()
	if r.src != nil {
		r.node = nil
	}
	r.mu.Unlock()
}

// Node returns the document's top-level mapping, with lines absolute in the
// file, re-parsing the document if the node was released. It is safe for
// concurrent use; nil only if the source no longer parses (it always did once).
func (r *Resource) Node() *yaml.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.node == nil && r.src != nil {
		r.node = r.src.parse()
	}
	return r.node
}

func (s *NodeSource) parse() *yaml.Node {
	var doc yaml.Node
	if err := parseDocument(s.Data, &doc); err != nil {
		return nil
	}
	if s.LineOffset != 0 {
		stack := []*yaml.Node{&doc}
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			cur.Line += s.LineOffset
			stack = append(stack, cur.Content...)
		}
	}
	body := deref(&doc)
	if s.Item >= 0 {
		_, items := mapGet(body, "items")
		items = deref(items)
		if items == nil || items.Kind != yaml.SequenceNode || s.Item >= len(items.Content) {
			return nil
		}
		body = deref(items.Content[s.Item])
	}
	return body
}

// Ref returns the object's identity for reports.
func (r *Resource) Ref() ObjectRef {
	return ObjectRef{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// Before reports whether r comes before o in file order (file path, with
// live objects after every file (LessFile), then document, then load
// order), the order findings are sorted in. A rule about a pair of objects
// reports it once, on the first, with the other related.
func (r *Resource) Before(o *Resource) bool {
	if r.File != o.File {
		return LessFile(r.File, o.File)
	}
	if r.Doc != o.Doc {
		return r.Doc < o.Doc
	}
	return r.index < o.index
}

// Index returns the resource's position in load order.
func (r *Resource) Index() int { return r.index }

// KindPos returns the resource's position in its graph's OfKind(r.Kind), so
// that a value kept for every object of a kind can be a slice in that order
// rather than a map. Callers check that the list holds r at that position
// (it may be another graph's resource).
func (r *Resource) KindPos() int { return r.kindPos }

// Pos maps a field path to a source range: the value at the path when it
// exists (a scalar's text, or the key that introduces a collection), else the
// key of the nearest existing parent, else metadata.name, else the document
// start. Every diagnostic therefore has a real line and column.
func (r *Resource) Pos(path string) Position {
	r.mu.Lock()
	m := r.positions
	r.mu.Unlock()
	if m == nil {
		return r.pos(path)
	}
	m.mu.Lock()
	p, ok := m.m[path]
	m.mu.Unlock()
	if !ok {
		p = r.pos(path)
		m.mu.Lock()
		m.m[path] = p
		m.mu.Unlock()
	}
	return p
}

func (r *Resource) pos(path string) Position {
	key, val := r.Lookup(path)
	switch {
	case val != nil && val.Kind == yaml.ScalarNode:
		return NodePos(r.File, val)
	case key != nil:
		return NodePos(r.File, key)
	case val != nil:
		return NodePos(r.File, val)
	}
	return NodePos(r.File, r.Node())
}

// Exists reports whether the field path is present in the document. It reads
// the decoded object, so it never needs the node tree.
func (r *Resource) Exists(path string) bool {
	_, ok := r.ValueAt(path)
	return ok
}

// ValueAt returns the generic value at a field path of the decoded object.
// A document decoded again on demand is decoded along the path only.
func (r *Resource) ValueAt(path string) (any, bool) {
	pp := parsedPath(path)
	var cur any = r.ObjectFields(pp.sel)
	for _, e := range pp.elems {
		switch c := cur.(type) {
		case map[string]any:
			if !e.IsKey {
				return nil, false
			}
			v, ok := c[e.Key]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			if e.IsKey || e.Index < 0 || e.Index >= len(c) {
				return nil, false
			}
			cur = c[e.Index]
		default:
			return nil, false
		}
	}
	return cur, true
}

// fieldPath is a parsed field path with its selection, both read only.
type fieldPath struct {
	elems []PathElem
	sel   *fastyaml.Fields
}

// maxParsedPaths bounds parsedPaths: rules ask for a few constant paths of
// every object, but a path may also be built from data.
const maxParsedPaths = 4096

// parsedPaths caches parsedPath's results by path.
var parsedPaths struct {
	sync.Map
	n atomic.Int32
}

// parsedPath returns path parsed, with its selection, from the cache when
// another call parsed it.
func parsedPath(path string) *fieldPath {
	if pp, ok := parsedPaths.Load(path); ok {
		return pp.(*fieldPath)
	}
	elems := ParsePath(path)
	pp := &fieldPath{elems: elems, sel: pathSelection(elems)}
	if parsedPaths.n.Add(1) <= maxParsedPaths {
		parsedPaths.Store(path, pp)
	}
	return pp
}

// pathSelection selects the value at a field path: each key step keeps one
// key, each index step every item (fastyaml selections have no index), the
// value the path ends at whole. A step that does not match the document's
// shape keeps that collection whole or drops it, which the walk in ValueAt
// treats as it treats the whole object: the path is not there.
func pathSelection(elems []PathElem) *fastyaml.Fields {
	var sel *fastyaml.Fields // the value at the end: whole
	for i := len(elems) - 1; i >= 0; i-- {
		switch {
		case elems[i].IsKey:
			sel = &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{elems[i].Key: sel}}
		case sel != nil:
			sel = &fastyaml.Fields{Any: sel}
		default:
			// An index as the last step: a wildcard over whole items is
			// the whole sequence, which nil already says.
		}
	}
	return sel
}

// NodeAt returns the yaml value node at path, or nil.
func (r *Resource) NodeAt(path string) *yaml.Node {
	_, val := r.lookupExact(path)
	return val
}

// Lookup walks the path as far as it exists and returns the key node and value
// node where it stopped. When the whole path exists, val is its value; when it
// stops early, key is the deepest key found (val nil for collections beyond).
func (r *Resource) Lookup(path string) (key, val *yaml.Node) {
	elems := ParsePath(path)
	root := r.Node()
	cur := deref(root)
	var lastKey, lastVal *yaml.Node
	for _, e := range elems {
		if cur == nil {
			break
		}
		var k, v *yaml.Node
		if e.IsKey {
			k, v = mapGet(cur, e.Key)
		} else if cur.Kind == yaml.SequenceNode && e.Index >= 0 && e.Index < len(cur.Content) {
			v = deref(cur.Content[e.Index])
			k = v // a sequence item is addressed by its own start
		}
		if v == nil {
			if lastKey == nil && lastVal == nil {
				return r.namePos()
			}
			return lastKey, nil
		}
		lastKey, lastVal, cur = k, v, deref(v)
	}
	if lastKey == nil && lastVal == nil {
		return r.namePos()
	}
	return lastKey, lastVal
}

func (r *Resource) lookupExact(path string) (key, val *yaml.Node) {
	cur := deref(r.Node())
	var k *yaml.Node
	for _, e := range ParsePath(path) {
		if cur == nil {
			return nil, nil
		}
		var v *yaml.Node
		if e.IsKey {
			k, v = mapGet(cur, e.Key)
		} else if cur.Kind == yaml.SequenceNode && e.Index >= 0 && e.Index < len(cur.Content) {
			v = cur.Content[e.Index]
			k = v
		}
		if v == nil {
			return nil, nil
		}
		cur = deref(v)
	}
	return k, cur
}

func (r *Resource) namePos() (key, val *yaml.Node) {
	root := r.Node()
	if _, md := mapGet(deref(root), "metadata"); md != nil {
		if k, v := mapGet(deref(md), "name"); v != nil {
			return k, v
		}
	}
	return nil, root
}

func mapGet(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	// YAML merge keys: look into the merged mappings.
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "<<" && m.Content[i].Tag != "!!str" {
			if k, v := mapGet(deref(m.Content[i+1]), key); v != nil {
				return k, v
			}
		}
	}
	return nil, nil
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 64 {
			return nil
		}
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return deref(n.Content[0])
	}
	return n
}

// Rollout returns the typed Rollout, or nil when r is not one.
func (r *Resource) Rollout() *v1alpha1.Rollout {
	o, _ := r.Typed.(*v1alpha1.Rollout)
	return o
}

// Service returns the typed core Service, or nil.
func (r *Resource) Service() *corev1.Service {
	o, _ := r.Typed.(*corev1.Service)
	return o
}

// VirtualService returns the typed Istio VirtualService, or nil.
func (r *Resource) VirtualService() *kinds.VirtualServiceObject {
	o, _ := r.Typed.(*kinds.VirtualServiceObject)
	return o
}

// DestinationRule returns the typed Istio DestinationRule, or nil.
func (r *Resource) DestinationRule() *kinds.DestinationRuleObject {
	o, _ := r.Typed.(*kinds.DestinationRuleObject)
	return o
}

// Gateway returns the typed Istio Gateway, or nil.
func (r *Resource) Gateway() *kinds.GatewayObject {
	o, _ := r.Typed.(*kinds.GatewayObject)
	return o
}

// AnalysisTemplateSpec returns the spec of an AnalysisTemplate or a
// ClusterAnalysisTemplate, or nil. For an AnalysisRun it returns a template
// spec holding the run's own metrics and args (the same fields at the same
// paths), so that the metric and argument checks of templates apply to
// runs committed to the bundle.
func (r *Resource) AnalysisTemplateSpec() *v1alpha1.AnalysisTemplateSpec {
	switch o := r.Typed.(type) {
	case *v1alpha1.AnalysisTemplate:
		return &o.Spec
	case *v1alpha1.ClusterAnalysisTemplate:
		return &o.Spec
	case *v1alpha1.AnalysisRun:
		return &v1alpha1.AnalysisTemplateSpec{Metrics: o.Spec.Metrics, Args: o.Spec.Args, DryRun: o.Spec.DryRun, MeasurementRetention: o.Spec.MeasurementRetention}
	}
	return nil
}

// Experiment returns the typed Argo Rollouts Experiment, or nil.
func (r *Resource) Experiment() *v1alpha1.Experiment {
	o, _ := r.Typed.(*v1alpha1.Experiment)
	return o
}

// AnalysisRun returns the typed Argo Rollouts AnalysisRun, or nil.
func (r *Resource) AnalysisRun() *v1alpha1.AnalysisRun {
	o, _ := r.Typed.(*v1alpha1.AnalysisRun)
	return o
}

// Annotation returns metadata.annotations[key], from the typed object when
// there is one (no decoding), else from the generic object.
func (r *Resource) Annotation(key string) (string, bool) {
	typed, generic := r.annotations()
	if typed != nil || generic == nil {
		v, found := typed[key]
		return v, found
	}
	v, ok := generic[key].(string)
	return v, ok
}

// AnnotationKeys returns the keys of the resource's annotations, sorted.
func (r *Resource) AnnotationKeys() []string {
	typed, generic := r.annotations()
	keys := make([]string, 0, len(typed)+len(generic))
	for k := range typed {
		keys = append(keys, k)
	}
	for k := range generic {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// annotations returns the typed object's annotations when it has them
// (typed is then non-nil, or both are nil), else the generic object's.
func (r *Resource) annotations() (typed map[string]string, generic map[string]any) {
	if o, ok := r.Typed.(interface{ GetAnnotations() map[string]string }); ok {
		return o.GetAnnotations(), nil
	}
	md, _ := r.Object()["metadata"].(map[string]any)
	generic, _ = md["annotations"].(map[string]any)
	return nil, generic
}
