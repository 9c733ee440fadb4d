package policies

import (
	"sort"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/analyzer/load/fastyaml"
)

// fieldTree is the set of object fields a set of policies reads, as a tree
// of mapping keys: {spec: {replicas, selector: {app}}}. A node marked whole
// stands for its entire value. Converting the objects into OPA values is
// most of the cost of a Rego lint, and the built-in policies read a few fields
// of large objects (a Rollout's spec.replicas, not its pod template), so their
// input holds only the fields they name.
type fieldTree struct {
	whole bool
	sub   map[string]*fieldTree
}

// selection is the tree as a fastyaml selection (nil: everything), so that a
// document the loader did not keep is re-read for these fields only.
func (t *fieldTree) selection() *fastyaml.Fields {
	if t == nil || t.whole {
		return nil
	}
	sel := &fastyaml.Fields{Sub: make(map[string]*fastyaml.Fields, len(t.sub))}
	for k, sub := range t.sub {
		sel.Sub[k] = sub.selection()
	}
	return sel
}

// wholeObjects is the tree of a policy set that may read anything.
func wholeObjects() *fieldTree { return &fieldTree{whole: true} }

// add adds a path (mapping keys from the object's root) with everything under it.
func (t *fieldTree) add(path []string) {
	n := t
	for _, k := range path {
		if n.whole {
			return
		}
		if n.sub == nil {
			n.sub = map[string]*fieldTree{}
		}
		next := n.sub[k]
		if next == nil {
			next = &fieldTree{}
			n.sub[k] = next
		}
		n = next
	}
	n.whole, n.sub = true, nil
}

// covers reports whether t holds every field of o.
func (t *fieldTree) covers(o *fieldTree) bool {
	if t.whole {
		return true
	}
	if o.whole {
		return false
	}
	for k, os := range o.sub {
		ts := t.sub[k]
		if ts == nil || !ts.covers(os) {
			return false
		}
	}
	return true
}

// union returns a new tree with the fields of both.
func (t *fieldTree) union(o *fieldTree) *fieldTree {
	u := &fieldTree{}
	for _, p := range append(t.paths(nil), o.paths(nil)...) {
		u.add(p)
	}
	return u
}

// paths lists the whole nodes' paths, sorted (an empty tree has none).
func (t *fieldTree) paths(prefix []string) [][]string {
	if t.whole {
		return [][]string{append([]string(nil), prefix...)}
	}
	keys := make([]string, 0, len(t.sub))
	for k := range t.sub {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][]string
	for _, k := range keys {
		out = append(out, t.sub[k].paths(append(prefix, k))...)
	}
	return out
}

// String lists the paths, e.g. "spec.replicas, spec.selector" ("*" for whole objects).
func (t *fieldTree) String() string {
	var ps []string
	for _, p := range t.paths(nil) {
		if len(p) == 0 {
			return "*"
		}
		ps = append(ps, strings.Join(p, "."))
	}
	return strings.Join(ps, ", ")
}

// readFields returns the object fields the modules read: for every reference
// through an item's `object` (x.object.spec.replicas,
// input.resources[i].object.spec.selector["k"]), the constant keys that follow
// it, up to the first computed key or index, whose whole value is then kept;
// object.get(x.object, ["spec", "replicas"], d) reads its constant path. A
// reference that stops at `object` (iterating over it, passing it whole)
// means the whole objects.
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
	noteCall := func(op ast.Ref, args []*ast.Term) {
		if op.String() != ast.ObjectGet.Name || len(args) < 2 {
			return
		}
		if p, ok := constPath(args[1]); ok {
			getPaths[args[0]] = p
		}
	}
	for _, m := range mods {
		ast.WalkExprs(m, func(e *ast.Expr) bool {
			if e.IsCall() {
				noteCall(e.Operator(), e.Operands())
			}
			return false
		})
		ast.WalkTerms(m, func(x *ast.Term) bool {
			if c, ok := x.Value.(ast.Call); ok {
				if op, ok := c[0].Value.(ast.Ref); ok {
					noteCall(op, c[1:])
				}
			}
			return false
		})
	}
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
				var path []string
				j := i + 1
				for ; j < len(r); j++ {
					s, ok := r[j].Value.(ast.String)
					if !ok {
						break
					}
					path = append(path, string(s))
				}
				if p, ok := getPaths[x]; ok && j == len(r) {
					path = append(path, p...)
				}
				t.add(path) // an empty path: the whole objects
				break
			}
			return false
		})
	}
	return t
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

// allDeclaredFields returns a snapshot of the process-wide union.
func allDeclaredFields() *fieldTree {
	declaredFields.Lock()
	defer declaredFields.Unlock()
	if declaredFields.fields == nil {
		return &fieldTree{}
	}
	return declaredFields.fields.union(&fieldTree{})
}
