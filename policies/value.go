package policies

import "github.com/open-policy-agent/opa/v1/ast"

// valueConverter turns a resource's generic object (maps, slices, strings,
// int64/float64, bools, as the loader decodes YAML) into Rego terms. It does
// what ast.InterfaceToValue does, but shares one term per distinct string:
// manifests repeat the same keys and values (apiVersion, metadata, name, app,
// http, ...) thousands of times, and terms are immutable, so sharing them cuts
// the allocations of a conversion substantially. One converter per goroutine.
type valueConverter struct {
	strings map[string]*ast.Term
}

func newValueConverter() *valueConverter {
	return &valueConverter{strings: make(map[string]*ast.Term, 1024)}
}

func (c *valueConverter) str(s string) *ast.Term {
	if t, ok := c.strings[s]; ok {
		return t
	}
	t := ast.InternedTerm(s)
	c.strings[s] = t
	return t
}

func (c *valueConverter) term(x any) (*ast.Term, error) {
	switch v := x.(type) {
	case string:
		return c.str(v), nil
	case map[string]any:
		pairs := make([][2]*ast.Term, 0, len(v))
		for k, e := range v {
			t, err := c.term(e)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, [2]*ast.Term{c.str(k), t})
		}
		return ast.NewTerm(ast.NewObject(pairs...)), nil
	case []any:
		ts := make([]*ast.Term, len(v))
		for i, e := range v {
			t, err := c.term(e)
			if err != nil {
				return nil, err
			}
			ts[i] = t
		}
		return ast.ArrayTerm(ts...), nil
	case bool:
		return ast.InternedTerm(v), nil
	case int64:
		return ast.InternedTerm(v), nil
	case int:
		return ast.InternedTerm(v), nil
	}
	// float64, nil and anything unexpected: OPA's own conversion.
	val, err := ast.InterfaceToValue(x)
	if err != nil {
		return nil, err
	}
	return ast.NewTerm(val), nil
}
