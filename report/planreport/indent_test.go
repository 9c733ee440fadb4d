package planreport

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestIndentJSON checks indentJSON against json.Indent on compact JSON of
// every shape Marshal writes: nesting, empty objects and arrays, strings
// with escapes, quotes and brackets, numbers and literals.
func TestIndentJSON(t *testing.T) {
	type inner struct {
		S  string         `json:"s"`
		L  []string       `json:"l"`
		E  []int          `json:"e"`
		M  map[string]any `json:"m"`
		N  *int           `json:"n"`
		B  bool           `json:"b"`
		F  float64        `json:"f"`
		In []inner        `json:"in,omitempty"`
	}
	values := []any{
		inner{},
		inner{S: `a "quoted" \ back\\slash {[,:]} <&> é → ` + "\x01\n\t", L: []string{"", `\`, `"`}, E: []int{},
			M: map[string]any{"k": []any{}, "o": map[string]any{}, "x": -1.5e-7}, B: true, F: 3},
		[]inner{{In: []inner{{L: []string{"x"}}, {}}}},
		map[string]any{},
		[]any{},
		"plain",
		42,
		nil,
	}
	deep := any(1)
	for range 40 { // deeper than indentJSON's ready-made indentation
		deep = []any{map[string]any{"d": deep}}
	}
	values = append(values, deep)
	for _, prefix := range []string{"", "    "} {
		for i, v := range values {
			compact, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Indent(&want, compact, prefix, "  "); err != nil {
				t.Fatal(err)
			}
			if got := indentJSON(nil, compact, prefix, "  "); !bytes.Equal(got, want.Bytes()) {
				t.Errorf("value %d, prefix %q:\ngot  %s\nwant %s", i, prefix, got, want.Bytes())
			}
		}
	}
}
