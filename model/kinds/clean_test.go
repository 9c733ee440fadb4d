package kinds

import (
	"reflect"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// treeNode is recursive, as some Kubernetes schemas are (JSON schema props).
type treeNode struct {
	Name     string              `json:"name"`
	Weight   uint32              `json:"weight,omitempty"`
	Next     *treeNode           `json:"next,omitempty"`
	Children []treeNode          `json:"children,omitempty"`
	ByName   map[string]treeNode `json:"byName,omitempty"`
	Inline   `json:",inline"`
}

// Inline is flattened into treeNode's fields.
type Inline struct {
	Tag string `json:"tag,omitempty"`
}

// The compiled schema of a recursive type is built once, even by racing
// first users, and both walks agree on it.
func TestRecursiveTypeConcurrentFirstUse(t *testing.T) {
	typ := reflect.TypeFor[treeNode]()
	cases := []struct {
		src   string
		clean bool
	}{
		{"name: a\ntag: t\nnext: {name: b, next: {name: c, children: [{name: d, byName: {x: {name: e}}}]}}", true},
		{"name: a\nnext: {name: b, next: {name: c, children: [{name: d, byName: {x: {nmae: e}}}]}}", false}, //nolint:misspell // the misspelt key is the case
		{"name: a\nweight: 5.0\nnext: {weight: -0}", true},
		{"name: a\nnext: {weight: -1}", false},
		{"name: a\nchildren: {name: b}", false},
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range cases {
				var n yaml.Node
				if err := yaml.Unmarshal([]byte(c.src), &n); err != nil {
					t.Error(err)
					return
				}
				var problems []string
				CheckGo(typ, n.Content[0], "", func(p FieldProblem) { problems = append(problems, p.Message) })
				if (len(problems) == 0) != c.clean {
					t.Errorf("%q: CheckGo reports %q, want clean=%v", c.src, problems, c.clean)
				}
				var v any
				if err := n.Content[0].Decode(&v); err != nil {
					t.Error(err)
					return
				}
				if got := GoClean(typ, toGeneric(v)); got != c.clean {
					t.Errorf("%q: GoClean = %v, want %v", c.src, got, c.clean)
				}
			}
		}()
	}
	wg.Wait()
	if goSchemaOf(typ).body().fields["next"] != goSchemaOf(typ) {
		t.Error("the recursive field does not point back at its own schema")
	}
}

// toGeneric turns yaml.v3's own decoding (int, map[string]interface{}) into
// the converter's value types, for the simple documents above.
func toGeneric(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = toGeneric(e)
		}
	case []any:
		for i, e := range x {
			x[i] = toGeneric(e)
		}
	case int:
		return int64(x)
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}
