package policies

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/internal/recent"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
)

// fieldTree is the set of object fields a set of policies reads, as a tree
// of mapping keys: {spec: {replicas, selector: {app}}}. A node marked whole
// stands for its entire value; a node's any child stands for a computed key
// or index (spec.http[i].name reads the name of every http route, not the
// routes whole). Converting the objects into OPA values is most of the cost
// of a Rego lint, and the built-in policies read a few fields of large
// objects (a Rollout's spec.replicas, not its pod template; a route's name,
// not its destinations), so their input holds only the fields they name.
//
// A tree is built with add and then only read (sealed), by every conversion
// worker at once.
type fieldTree struct {
	whole bool
	sub   map[string]*fieldTree
	any   *fieldTree // every key of a mapping, every element of a list
	// merged[k] is sub[k] ∪ any, for the keys of sub when any is set: the
	// fields of a mapping entry named both ways.
	merged map[string]*fieldTree
	// keys lists sub's entries (seal makes it): the converter visits them
	// for every object, and ranging over a slice costs less than over a map.
	keys []fieldKey
}

// fieldKey is one entry of a tree's sub.
type fieldKey struct {
	key string
	sub *fieldTree
}

// step is one step of a field path: a mapping key, or any key or index.
type step struct {
	key string
	any bool
}

// keyPath is a field path of mapping keys only.
func keyPath(keys ...string) []step {
	p := make([]step, len(keys))
	for i, k := range keys {
		p[i] = step{key: k}
	}
	return p
}

// selection is the tree as a fastyaml selection (nil: everything), so that a
// document the loader did not keep is re-read for these fields only. A
// computed key is the selection's wildcard, with the merged children for the
// keys also named (fastyaml wants Sub[k] ⊇ Any); a computed key read whole
// makes its node whole.
func (t *fieldTree) selection() *fastyaml.Fields {
	if t == nil || t.whole {
		return nil
	}
	sel := &fastyaml.Fields{Sub: make(map[string]*fastyaml.Fields, len(t.sub))}
	if t.any != nil {
		if sel.Any = t.any.selection(); sel.Any == nil {
			return nil
		}
	}
	for k := range t.sub {
		sel.Sub[k] = t.child(k).selection()
	}
	return sel
}

// wholeObjects is the tree of a policy set that may read anything.
func wholeObjects() *fieldTree { return &fieldTree{whole: true} }

// add adds a path with everything under it. The tree must be sealed again
// before it is read.
func (t *fieldTree) add(path []step) {
	n := t
	for _, s := range path {
		if n.whole {
			return
		}
		var next *fieldTree
		if s.any {
			if n.any == nil {
				n.any = &fieldTree{}
			}
			next = n.any
		} else {
			if n.sub == nil {
				n.sub = map[string]*fieldTree{}
			}
			next = n.sub[s.key]
			if next == nil {
				next = &fieldTree{}
				n.sub[s.key] = next
			}
		}
		n = next
	}
	n.whole, n.sub, n.any = true, nil, nil
}

// seal computes the merged children, for child, after the last add.
func (t *fieldTree) seal() *fieldTree {
	if t == nil {
		return t
	}
	t.merged = nil
	t.keys = make([]fieldKey, 0, len(t.sub))
	for k, sub := range t.sub {
		t.keys = append(t.keys, fieldKey{k, sub})
	}
	if t.any != nil {
		t.any.seal()
		if len(t.sub) > 0 {
			t.merged = make(map[string]*fieldTree, len(t.sub))
			for k, sub := range t.sub {
				t.merged[k] = sub.union(t.any)
			}
		}
	}
	for _, sub := range t.sub {
		sub.seal()
	}
	return t
}

// child returns the fields read under mapping key k: nil for none.
func (t *fieldTree) child(k string) *fieldTree {
	if t.any == nil {
		return t.sub[k]
	}
	if m := t.merged[k]; m != nil {
		return m
	}
	return t.any
}

// covers reports whether t holds every field of o.
func (t *fieldTree) covers(o *fieldTree) bool {
	for _, p := range o.paths(nil) {
		if !t.coversPath(p) {
			return false
		}
	}
	return true
}

// coversPath reports whether t holds everything under path p.
func (t *fieldTree) coversPath(p []step) bool {
	if t.whole {
		return true
	}
	if len(p) == 0 {
		return false
	}
	if !p[0].any {
		if n := t.sub[p[0].key]; n != nil && n.coversPath(p[1:]) {
			return true
		}
	}
	return t.any != nil && t.any.coversPath(p[1:])
}

// union returns a new, sealed tree with the fields of both.
func (t *fieldTree) union(o *fieldTree) *fieldTree {
	u := &fieldTree{}
	for _, p := range append(t.paths(nil), o.paths(nil)...) {
		u.add(p)
	}
	return u.seal()
}

// paths lists the whole nodes' paths, sorted, the computed keys last (an
// empty tree has none).
func (t *fieldTree) paths(prefix []step) [][]step {
	if t.whole {
		return [][]step{append([]step(nil), prefix...)}
	}
	keys := make([]string, 0, len(t.sub))
	for k := range t.sub {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][]step
	for _, k := range keys {
		out = append(out, t.sub[k].paths(append(prefix, step{key: k}))...)
	}
	if t.any != nil {
		out = append(out, t.any.paths(append(prefix, step{any: true}))...)
	}
	return out
}

// String lists the paths, e.g. "spec.replicas, spec.http[*].name" ("*" for
// whole objects).
func (t *fieldTree) String() string {
	var ps []string
	for _, p := range t.paths(nil) {
		if len(p) == 0 {
			return "*"
		}
		var b strings.Builder
		for i, s := range p {
			switch {
			case s.any:
				b.WriteString("[*]")
			case i > 0:
				b.WriteString("." + s.key)
			default:
				b.WriteString(s.key)
			}
		}
		ps = append(ps, b.String())
	}
	return strings.Join(ps, ", ")
}

// readFields returns the object fields the modules read: for every reference
// through an item's `object` (x.object.spec.replicas,
// input.resources[i].object.spec.selector["k"], vs.object.spec.http[i].name),
// the keys that follow it, a computed key or index standing for any
// ([*]); object.get(x.object, ["spec", "replicas"], d) reads its constant
// path. The value a reference ends at is read whole, so a reference that
// stops at `object` (iterating over it, passing it whole) means the whole
// objects, and one that stops at a list (`some r in x.object.spec.http`)
// means the whole list.
//
// The analysis sees references, not data flow: a policy that reaches an
// object without naming `object` (walk(input), json.marshal(item), iterating
// over an item's keys) is not seen. That is why it is applied to the built-in
// policies only, which read objects through `.object` paths (their tests and
// TestProjectedInputSameFindings check the findings do not change); user
// policies get whole objects.
func readFields(mods []*ast.Module) *fieldTree {
	t := &fieldTree{}
	// First the object.get calls, whose path argument extends the reference.
	getPaths := map[*ast.Term][]string{}
	eachCall(mods, func(op ast.Ref, args []*ast.Term) {
		if op.String() != ast.ObjectGet.Name || len(args) < 2 {
			return
		}
		if p, ok := constPath(args[1]); ok {
			getPaths[args[0]] = p
		}
	})
	for _, m := range mods {
		ast.WalkTerms(m, func(x *ast.Term) bool {
			r, ok := x.Value.(ast.Ref)
			if !ok {
				return false
			}
			for i := 1; i < len(r); i++ {
				if s, ok := r[i].Value.(ast.String); !ok || s != "object" {
					continue
				}
				var path []step
				for _, k := range r[i+1:] {
					if s, ok := k.Value.(ast.String); ok {
						path = append(path, step{key: string(s)})
					} else {
						path = append(path, step{any: true}) // a variable, number or computed key
					}
				}
				if p, ok := getPaths[x]; ok {
					path = append(path, keyPath(p...)...)
				}
				t.add(path) // an empty path: the whole objects
				break
			}
			return false
		})
	}
	return t.seal()
}

// eachCall calls fn with the operator and arguments of every call in the
// modules: call expressions (`f(x)` as a statement) and call terms (`y :=
// f(x)`, a call nested in another).
func eachCall(mods []*ast.Module, fn func(op ast.Ref, args []*ast.Term)) {
	for _, m := range mods {
		ast.WalkExprs(m, func(e *ast.Expr) bool {
			if e.IsCall() {
				fn(e.Operator(), e.Operands())
			}
			return false
		})
		ast.WalkTerms(m, func(x *ast.Term) bool {
			if c, ok := x.Value.(ast.Call); ok {
				if op, ok := c[0].Value.(ast.Ref); ok {
					fn(op, c[1:])
				}
			}
			return false
		})
	}
}

// constPath returns the keys of object.get's path argument when they are
// constant strings: "key" or ["a", "b"].
func constPath(t *ast.Term) ([]string, bool) {
	switch v := t.Value.(type) {
	case ast.String:
		return []string{string(v)}, true
	case *ast.Array:
		out := make([]string, 0, v.Len())
		for i := range v.Len() {
			s, ok := v.Elem(i).Value.(ast.String)
			if !ok {
				return nil, false
			}
			out = append(out, string(s))
		}
		return out, true
	}
	return nil, false
}

// readsTemplates reports whether the modules may read the Rollouts' analysis
// templates (input.rollouts[_].templates): whether any of their terms is the
// string "templates", as a reference's key (rr.templates) or an argument
// (object.get(rr, "templates", [])). Like readFields it sees names, not
// data flow, so it is applied to the built-in policies only (none reads the
// templates); a user policy's input always holds them.
func readsTemplates(mods []*ast.Module) bool {
	found := false
	for _, m := range mods {
		ast.WalkTerms(m, func(x *ast.Term) bool {
			if s, ok := x.Value.(ast.String); ok && s == "templates" {
				found = true
			}
			return found
		})
	}
	return found
}

// declaredTemplates is whether a policy compiled in this process reads the
// Rollouts' analysis templates, like declaredFields.
var declaredTemplates atomic.Bool

// declareTemplates records that a compiled policy set reads the templates.
func declareTemplates(reads bool) {
	if reads {
		declaredTemplates.Store(true)
	}
}

// declaredFields is the union of the fields the policies compiled in this
// process read, like declaredKinds: one conversion per graph then serves
// every policy of a lint.
var declaredFields struct {
	sync.Mutex
	fields *fieldTree
}

// declareFields adds the fields a compiled policy set reads to the
// process-wide union.
func declareFields(f *fieldTree) {
	declaredFields.Lock()
	defer declaredFields.Unlock()
	if declaredFields.fields == nil {
		declaredFields.fields = &fieldTree{}
	}
	declaredFields.fields = declaredFields.fields.union(f)
}

// allDeclaredFields returns the process-wide union. The tree is sealed and
// never changed (declareFields replaces it), so it is returned, not copied.
func allDeclaredFields() *fieldTree {
	declaredFields.Lock()
	defer declaredFields.Unlock()
	if declaredFields.fields == nil {
		return noFields
	}
	return declaredFields.fields
}

// noFields is the empty tree, one pointer for the memos' keys.
var noFields = &fieldTree{}

// The unions, coverings and selections inputFor and convert ask for on every
// lint (every webhook review) are remembered: sealed trees never change, so a
// pair of pointers has one answer for good, and enumerating a tree's paths
// costs more than the rest of a small lint's input. The bound is reached only by policy sets
// loaded again and again.
const treeMemoMax = 1024

var (
	unions     = recent.New[[2]*fieldTree, *fieldTree](treeMemoMax)
	covers     = recent.New[[2]*fieldTree, bool](treeMemoMax)
	selections = recent.New[*fieldTree, *fastyaml.Fields](treeMemoMax)
)

// selectionOf is t.selection(), remembered (a selection is only read, by
// every decode at once).
func selectionOf(t *fieldTree) *fastyaml.Fields {
	return selections.Get(t, t.selection)
}

// unionOf is a.union(b), remembered.
func unionOf(a, b *fieldTree) *fieldTree {
	return unions.Get([2]*fieldTree{a, b}, func() *fieldTree { return a.union(b) })
}

// coversOf is a.covers(b), remembered.
func coversOf(a, b *fieldTree) bool {
	return covers.Get([2]*fieldTree{a, b}, func() bool { return a.covers(b) })
}
