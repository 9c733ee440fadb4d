package policies

import (
	"slices"
	"unsafe"

	"github.com/open-policy-agent/opa/v1/ast"
)

// valueConverter turns a resource's generic object (maps, slices, strings,
// int64/float64, bools, as the loader decodes YAML) into Rego terms. It does
// what ast.InterfaceToValue does, but builds each distinct value once and
// shares its term: manifests repeat the same keys, values and whole
// sub-documents (ports, pauses, selectors, resource requests, ...) many times
// over a bundle, terms are immutable, and building an OPA object (a hash map
// with a hash per entry) is the expensive part of the conversion. One
// converter per goroutine.
type valueConverter struct {
	strings map[string]*ast.Term
	numbers map[int64]*ast.Term
	// composites maps the identity of a built object or array (objectHash,
	// arrayHash) to its shared term.
	composites map[uint64]*ast.Term
	pairs      [][2]*ast.Term               // scratch stack of object entries being built
	elems      []*ast.Term                  // scratch stack of array elements being built
	routes     map[routeKey]*routePathTerms // see routePaths
	// slab holds the terms of the refs, items and references this
	// converter builds for one graph (not those of objectTerm).
	slab slab
}

func newValueConverter() *valueConverter { return sizedValueConverter(1 << 20) }

// sizedValueConverter is a converter for about n objects, its maps presized
// for them (convert does not use it for a small graph: see smallGraph).
func sizedValueConverter(n int) *valueConverter {
	n = max(n, 1)
	return &valueConverter{
		strings:    make(map[string]*ast.Term, min(1024, 32*n)),
		numbers:    make(map[int64]*ast.Term, min(64, 8*n)),
		composites: make(map[uint64]*ast.Term, min(1024, 32*n)),
	}
}

func (c *valueConverter) str(s string) *ast.Term {
	if t, ok := c.strings[s]; ok {
		return t
	}
	t := ast.InternedTerm(s)
	c.strings[s] = t
	return t
}

func (c *valueConverter) num(n int64) *ast.Term {
	if t, ok := c.numbers[n]; ok {
		return t
	}
	t := ast.InternedTerm(n)
	c.numbers[n] = t
	return t
}

// mix scrambles a term's address into a well-spread 64-bit value.
func mix(t *ast.Term) uint64 {
	x := uint64(uintptr(unsafe.Pointer(t)))
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// The identity of an object or array is a hash of the addresses of its
// (already shared) key and element terms: every part is built through this
// converter, so equal values are made of the same terms. Go does not move heap
// objects and the converter keeps the terms alive, so addresses are stable.
// A hash match is confirmed part by part before a term is shared.

func objectHash(pairs [][2]*ast.Term) uint64 {
	h := uint64(len(pairs))
	for _, p := range pairs {
		h += mix(p[0]) ^ (mix(p[1]) * 31) // order-independent: maps have no order
	}
	return h
}

func arrayHash(elems []*ast.Term) uint64 {
	h := uint64(len(elems)) | 1<<63
	for _, e := range elems {
		h = h*1099511628211 ^ mix(e)
	}
	return h
}

func sameObject(t *ast.Term, pairs [][2]*ast.Term) bool {
	o, ok := t.Value.(ast.Object)
	if !ok || o.Len() != len(pairs) {
		return false
	}
	for _, p := range pairs {
		if o.Get(p[0]) != p[1] {
			return false
		}
	}
	return true
}

func sameArray(t *ast.Term, elems []*ast.Term) bool {
	a, ok := t.Value.(*ast.Array)
	if !ok || a.Len() != len(elems) {
		return false
	}
	for i, e := range elems {
		if a.Elem(i) != e {
			return false
		}
	}
	return true
}

func (c *valueConverter) term(x any) (*ast.Term, error) {
	switch v := x.(type) {
	case string:
		return c.str(v), nil
	case map[string]any:
		base := len(c.pairs)
		for k, e := range v {
			t, err := c.term(e)
			if err != nil {
				c.pairs = c.pairs[:base]
				return nil, err
			}
			c.pairs = append(c.pairs, [2]*ast.Term{c.str(k), t})
		}
		return c.object(base), nil
	case []any:
		base := len(c.elems)
		for _, e := range v {
			t, err := c.term(e)
			if err != nil {
				c.elems = c.elems[:base]
				return nil, err
			}
			c.elems = append(c.elems, t)
		}
		return c.array(base), nil
	case bool:
		return ast.InternedTerm(v), nil
	case int64:
		return c.num(v), nil
	case int:
		return c.num(int64(v)), nil
	}
	// float64, nil and anything unexpected: OPA's own conversion.
	val, err := ast.InterfaceToValue(x)
	if err != nil {
		return nil, err
	}
	return ast.NewTerm(val), nil
}

// array builds (or shares) the array of the elements pushed on c.elems
// since base, and pops them.
func (c *valueConverter) array(base int) *ast.Term {
	elems := c.elems[base:]
	h := arrayHash(elems)
	t, ok := c.composites[h]
	if !ok || !sameArray(t, elems) {
		t = ast.ArrayTerm(slices.Clone(elems)...) // the array keeps its slice
		if !ok {
			c.composites[h] = t
		}
	}
	c.elems = c.elems[:base]
	return t
}

// object builds (or shares) the object of the entries pushed on c.pairs
// since base, and pops them.
func (c *valueConverter) object(base int) *ast.Term {
	pairs := c.pairs[base:]
	h := objectHash(pairs)
	t, ok := c.composites[h]
	if !ok || !sameObject(t, pairs) {
		t = ast.NewTerm(ast.NewObject(pairs...)) // NewObject copies the entries
		if !ok {
			c.composites[h] = t
		}
	}
	c.pairs = c.pairs[:base]
	return t
}

// termFields converts the fields of x that f holds: the mapping keys f names
// (every key, when f reads a computed key), the elements of a list f indexes,
// down to its whole nodes, which are converted entirely. A value of another
// shape than f expects is converted entirely (its keys cannot be read, but
// its presence and type stay visible).
func (c *valueConverter) termFields(x any, f *fieldTree) (*ast.Term, error) {
	if f.whole {
		return c.term(x)
	}
	switch v := x.(type) {
	case map[string]any:
		base := len(c.pairs)
		add := func(k string, e any, sub *fieldTree) error {
			t, err := c.termFields(e, sub)
			if err != nil {
				c.pairs = c.pairs[:base]
				return err
			}
			c.pairs = append(c.pairs, [2]*ast.Term{c.str(k), t})
			return nil
		}
		if f.any != nil {
			for k, e := range v {
				if err := add(k, e, f.child(k)); err != nil {
					return nil, err
				}
			}
		} else {
			for _, fk := range f.keys {
				if e, ok := v[fk.key]; ok {
					if err := add(fk.key, e, fk.sub); err != nil {
						return nil, err
					}
				}
			}
		}
		return c.object(base), nil
	case []any:
		if f.any == nil {
			return c.term(x)
		}
		base := len(c.elems)
		for _, e := range v {
			t, err := c.termFields(e, f.any)
			if err != nil {
				c.elems = c.elems[:base]
				return nil, err
			}
			c.elems = append(c.elems, t)
		}
		return c.array(base), nil
	}
	return c.term(x)
}
