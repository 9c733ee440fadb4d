package policies

import (
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/types"
)

// inputParts is a set of the input's per-object parts: input.resources,
// input.kinds and input.objects. They hold an item for every object of the
// bundle (a ref and an object term each), which is most of the input's cost
// on a large bundle, while the built-in policies that run on a bundle without
// Argo CD Applications read only input.rollouts and look up the few items it
// points at (lib.resource). A conversion that needs none of the parts builds
// an item only when a policy looks it up (resourceBuiltin).
type inputParts uint8

const (
	partResources inputParts = 1 << iota // input.resources
	partKinds                            // input.kinds
	partObjects                          // input.objects

	allParts = partResources | partKinds | partObjects
)

// covers reports whether p holds every part of o.
func (p inputParts) covers(o inputParts) bool { return p&o == o }

// readsParts returns the parts the modules may read: every reference that
// starts input.resources, input.kinds or input.objects names its part, and
// `input` itself (passed whole, iterated, indexed by a computed key) means
// every part, except as the first argument of rolloutlint.resource, which
// looks up one item without building the others. Like readFields it sees
// names, not data flow, so it is applied to the built-in policies only; a
// user policy's input always holds every part.
func readsParts(mods []*ast.Module) inputParts {
	lazy := map[*ast.Term]bool{} // the input arguments of rolloutlint.resource calls
	eachCall(mods, func(op ast.Ref, args []*ast.Term) {
		if op.String() == resourceBuiltin.Name && len(args) > 0 {
			lazy[args[0]] = true
		}
	})
	var parts inputParts
	for _, m := range mods {
		ast.WalkTerms(m, func(x *ast.Term) bool {
			r, ok := x.Value.(ast.Ref)
			if !ok || !r.HasPrefix(ast.InputRootRef) || lazy[x] {
				return false
			}
			if len(r) == 1 {
				parts = allParts
				return false
			}
			switch r[1].Value {
			case ast.String("resources"):
				parts |= partResources
			case ast.String("kinds"):
				parts |= partKinds
			case ast.String("objects"):
				parts |= partObjects
			case ast.String("rollouts"), ast.String("globals"):
			default: // a computed key, or a field the input does not have
				parts = allParts
			}
			return false
		})
	}
	return parts
}

// declaredParts is the union of the parts the policies compiled in this
// process read, like declaredFields: one conversion per graph then serves
// every policy of a lint.
var declaredParts atomic.Uint32

// declareParts adds the parts a compiled policy set reads to the union.
func declareParts(p inputParts) {
	for {
		old := declaredParts.Load()
		if declaredParts.CompareAndSwap(old, old|uint32(p)) {
			return
		}
	}
}

// allDeclaredParts returns the union.
func allDeclaredParts() inputParts { return inputParts(declaredParts.Load()) }

// resourceBuiltin is rolloutlint.resource(input, index): input.resources[index],
// the item of the object at that load-order position, undefined when there
// is none. On the input of a lint or review it builds just that item when
// the input was converted without input.resources (see inputParts); on any
// other value (a test's `with input as ...`) it looks the item up there.
// lib.resource(ref) calls it, so policies that only follow refs never make
// the whole list.
var resourceBuiltin = &ast.Builtin{
	Name:        "rolloutlint.resource",
	Description: "Returns input.resources[index], building only that item.",
	Decl: types.NewFunction(
		types.Args(types.Named("input", types.A), types.Named("index", types.N)),
		types.Named("item", types.A),
	),
}

// The built-in is registered with OPA's own, so that every compiler,
// evaluation and test runner of the process knows it (Capabilities included).
func init() {
	ast.RegisterBuiltin(resourceBuiltin)
	topdown.RegisterBuiltinFunc(resourceBuiltin.Name, evalResource)
}

// evalInputKey keys an evaluation's evalInput in its context.
type evalInputKey struct{}

// evalInput is what rolloutlint.resource needs of an evaluation: the input
// value it was given and the conversion it was built from.
type evalInput struct {
	root   ast.Value
	bundle *converted
}

func evalResource(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
	n, ok := operands[1].Value.(ast.Number)
	if !ok {
		return nil
	}
	i, ok := n.Int()
	if !ok || i < 0 {
		return nil
	}
	if ei, _ := bctx.Context.Value(evalInputKey{}).(*evalInput); ei != nil && ei.root == operands[0].Value {
		if i >= ei.bundle.len() {
			return nil
		}
		return iter(ei.bundle.item(i))
	}
	v, err := operands[0].Value.Find(ast.Ref{ast.StringTerm("resources"), ast.IntNumberTerm(i)})
	if err != nil {
		return nil // no such item: undefined, like input.resources[i]
	}
	return iter(ast.NewTerm(v))
}
