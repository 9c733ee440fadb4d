package policies

import (
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// TestValueConverterMatchesOPA converts every object of a generated bundle
// with the sharing converter and with OPA's own conversion: the values must be
// equal, and equal sub-documents must come out as one shared term.
func TestValueConverterMatchesOPA(t *testing.T) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 40, MistakeRate: 0.3, Seed: 3}), load.Options{})
	vc := newValueConverter()
	for _, r := range g.Resources {
		got, err := vc.term(r.Object())
		if err != nil {
			t.Fatalf("%s %s: %v", r.Kind, r.Name, err)
		}
		want, err := ast.InterfaceToValue(r.Object())
		if err != nil {
			t.Fatal(err)
		}
		if got.Value.Compare(want) != 0 {
			t.Errorf("%s %s: converted to\n%v\nwant\n%v", r.Kind, r.Name, got, want)
		}
	}
	// Every Service of the bundle declares the same ports.
	var ports []*ast.Term
	for _, r := range g.OfKind("Service") {
		p, _ := vc.term(r.Object())
		ports = append(ports, p.Value.(ast.Object).Get(ast.StringTerm("spec")).Value.(ast.Object).Get(ast.StringTerm("ports")))
	}
	if len(ports) < 2 || ports[0] != ports[1] {
		t.Errorf("equal ports lists were not shared: %v", ports)
	}
}

// TestValueConverterKeepsDifferentValuesApart: values that differ in one leaf,
// in key order or in array order are distinct terms with their own content.
func TestValueConverterKeepsDifferentValuesApart(t *testing.T) {
	vc := newValueConverter()
	docs := []any{
		map[string]any{"a": "x", "b": int64(1)},
		map[string]any{"b": int64(1), "a": "x"}, // same as the first
		map[string]any{"a": "x", "b": int64(2)},
		map[string]any{"a": int64(1), "b": "x"},
		[]any{"x", int64(1)},
		[]any{int64(1), "x"},
		[]any{map[string]any{"a": "x", "b": int64(1)}},
		map[string]any{},
		[]any{},
	}
	terms := make([]*ast.Term, len(docs))
	for i, d := range docs {
		var err error
		if terms[i], err = vc.term(d); err != nil {
			t.Fatal(err)
		}
		want := ast.MustInterfaceToValue(d)
		if terms[i].Value.Compare(want) != 0 {
			t.Errorf("doc %d: got %v, want %v", i, terms[i], want)
		}
	}
	if terms[0] != terms[1] {
		t.Error("equal objects built in different key order are not shared")
	}
	for i := 2; i < len(terms); i++ {
		for j := range i {
			if terms[i] == terms[j] {
				t.Errorf("docs %d and %d (%v, %v) share a term", j, i, terms[j], terms[i])
			}
		}
	}
}
