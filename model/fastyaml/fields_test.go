package fastyaml_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// DecodeSharedFields keeps, of every document Decode accepts, exactly the
// selected fields with their full values; it may keep more (a sequence
// without a wildcard is kept whole) but never less,
// and never a key the document does not have. Checked with random selections,
// wildcards over mappings and sequences included, drawn from each document's
// own keys, over the repository's manifests and a corpus.
func TestDecodeSharedFieldsKeepsTheSelection(t *testing.T) {
	var docs [][]byte
	_ = filepath.WalkDir("../../testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && load.IsManifestName(path) {
			data, _ := os.ReadFile(path)
			docs = append(docs, splitDocs(data)...)
		}
		return nil
	})
	for _, in := range corpus.Generate(corpus.Options{Rollouts: 40, MistakeRate: 0.2, Seed: 3}) {
		docs = append(docs, splitDocs(in.Data)...)
	}
	rng := rand.New(rand.NewSource(1))
	checked, wild := 0, 0
	for _, d := range docs {
		full, ok := fastyaml.Decode(d)
		if !ok {
			continue
		}
		for range 4 {
			sel := randomSelection(rng, full, 0)
			checkSelection(t, d, full, sel)
			checked++
			if strings.Contains(describe(sel), "*:") {
				wild++
			}
		}
		if got, _ := fastyaml.DecodeSharedFields(d, nil); !reflect.DeepEqual(got, full) {
			t.Fatalf("a nil selection must decode everything:\n%s", d)
		}
	}
	if checked < 1000 || wild < checked/4 {
		t.Fatalf("only %d selections checked, %d with a wildcard", checked, wild)
	}
}

// The wildcard reaches every entry of a mapping and every item of a
// sequence, nested ones included; keys named in Sub use their own selection.
func TestDecodeSharedFieldsWildcard(t *testing.T) {
	doc := []byte(`spec:
  http:
  - name: a
    route:
    - destination: {host: x}
      weight: 10
    - destination:
        host: y
  - name: b
    match: [{uri: {prefix: /}}]
  labels:
    app: x
    tier: web
`)
	leaf := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{}}
	sel := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{"spec": {
		Sub: map[string]*fastyaml.Fields{
			"http": {Any: &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{
				"name":  nil,
				"route": {Any: &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{"weight": nil}}},
			}}},
			"labels": {Any: leaf},
		},
	}}}
	want := map[string]any{"spec": map[string]any{
		"http": []any{
			map[string]any{"name": "a", "route": []any{map[string]any{"weight": int64(10)}, map[string]any{}}},
			map[string]any{"name": "b"},
		},
		"labels": map[string]any{"app": "x", "tier": "web"},
	}}
	// The same document in flow style, partly and wholly.
	flow := []byte(`spec:
  http: [{name: a, route: [{destination: {host: x}, weight: 10}, {destination: {host: y}}]}, {name: b, match: [{uri: {prefix: /}}]}]
  labels: {app: x, tier: web}
`)
	oneLine := []byte(`{"spec": {"http": [{"name": "a", "route": [{"destination": {"host": "x"}, "weight": 10}, {"destination": {"host": "y"}}]}, {"name": "b", "match": [{"uri": {"prefix": "/"}}]}], "labels": {"app": "x", "tier": "web"}}}`)
	for _, d := range [][]byte{doc, flow, oneLine} {
		got, ok := fastyaml.DecodeSharedFields(d, sel)
		if !ok {
			t.Fatalf("declined:\n%s", d)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %#v\nwant %#v\nfrom:\n%s", got, want, d)
		}
	}
}

// FuzzFastYAMLFields checks the selection contract on arbitrary input: a
// document Decode accepts is accepted with any selection drawn from its keys
// (the seed picks it), and the selected fields are kept whole; a document it
// declines is declined with every selection.
func FuzzFastYAMLFields(f *testing.F) {
	f.Add([]byte("a:\n  b: [1, {c: d}]\n  e:\n  - f: 1\n    g: 2\n  - h\n"), int64(1))
	f.Add([]byte("spec:\n  http:\n  - route:\n    - weight: 1\n      destination:\n        host: x\n"), int64(7))
	f.Add([]byte("a:\n- - b\n"), int64(2))
	f.Add([]byte("a:\n- b:\n  - c: |\n      x\n    d: 1\n"), int64(3))
	f.Add([]byte("a:\n  b: 1\n  b: 2\nc: 1\n"), int64(4))
	f.Add([]byte("a: {b: 1, b: 2}\nc: 1\n"), int64(5))
	f.Fuzz(func(t *testing.T, data []byte, seed int64) {
		if len(data) > 1<<16 {
			return
		}
		full, ok := fastyaml.Decode(data)
		if !ok {
			checkDeclined(t, data)
			return
		}
		checkSelection(t, data, full, randomSelection(rand.New(rand.NewSource(seed)), full, 0))
	})
}

// A document Decode declines is declined whatever the selection: the parts
// not selected are checked as strictly (duplicate keys included).
func TestDecodeSharedFieldsDeclinesAsDecode(t *testing.T) {
	for _, doc := range []string{
		"a:\n  b: 1\n  b: 2\nc: 1\n",
		"c: 1\na: {b: 1, b: 2}\n",
		"a:\n- {x: 1, x: 1}\nc: 1\n",
		"a:\n- x: 1\n  y: 2\n  x: 3\nc: 1\n",
		"c: 1\nc: 2\n",
		"a:\n  b: [1, 2\nc: 1\n",
		"a: &x 1\nc: 1\n",
		"a: |2\n    x\nc: 1\n",
		"a:\n  \"b\": 1\n  b: 2\nc: 1\n",
	} {
		if _, ok := fastyaml.Decode([]byte(doc)); ok {
			t.Fatalf("Decode accepts:\n%s", doc)
		}
		checkDeclined(t, []byte(doc))
	}
	var many strings.Builder
	for i := range 20 {
		fmt.Fprintf(&many, "  k%d: 1\n", i)
	}
	checkDeclined(t, []byte("c: 1\na:\n"+many.String()+"  k7: 2\n"))
}

// checkDeclined fails when a selection makes DecodeSharedFields accept a
// document Decode declines.
func checkDeclined(t *testing.T, data []byte) {
	t.Helper()
	none := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{}}
	for _, sel := range []*fastyaml.Fields{
		nil,
		none,
		{Sub: map[string]*fastyaml.Fields{"c": nil}},
		{Any: none},
		{Any: &fastyaml.Fields{Any: none}},
		{Sub: map[string]*fastyaml.Fields{"a": {Any: none}}},
	} {
		if _, ok := fastyaml.DecodeSharedFields(data, sel); ok {
			t.Fatalf("accepted with selection %s a document Decode declines:\n%s", describe(sel), data)
		}
	}
}

// checkSelection decodes d with sel and fails unless the result covers the
// selection of full (Decode's result).
func checkSelection(t *testing.T, d []byte, full map[string]any, sel *fastyaml.Fields) {
	t.Helper()
	got, ok := fastyaml.DecodeSharedFields(d, sel)
	if !ok {
		t.Fatalf("declined with a selection a document it accepts whole:\n%s", d)
	}
	if msg := covers(got, full, sel, ""); msg != "" {
		t.Fatalf("%s\nselection %s in:\n%s", msg, describe(sel), d)
	}
	// Knowing the document is accepted, the values not selected are skipped
	// by indentation: the result must not change.
	if skipped, ok := fastyaml.DecodeAcceptedFields(d, sel); !ok || !reflect.DeepEqual(skipped, got) {
		t.Fatalf("DecodeAcceptedFields %v (ok %v), DecodeSharedFields %v\nselection %s in:\n%s", skipped, ok, got, describe(sel), d)
	}
}

// Values that are hard to skip by indentation: sequences at their key's
// column, block scalars with lines that look like comments or keys, plain
// scalars folded over lines, comments less indented than the value, and a
// mapping inside a sequence entry.
func TestDecodeAcceptedFieldsSkipsByIndentation(t *testing.T) {
	doc := `a:
- x: 1
  y:
  - 2
- z
b: |
  # not a comment
  c: not a key

  - not an entry
c: plain scalar
  folded over
   lines
d:
  e: 1
# a comment at column 0 inside d
  f: 2
g: [1, 2]
h:
- k: |-
    text
    more: text
  l: 1
- k: 2
i: last
`
	full, ok := fastyaml.Decode([]byte(doc))
	if !ok {
		t.Fatal("Decode declined the document")
	}
	keys := sortedKeys(full)
	for mask := 1; mask < 1<<len(keys); mask++ {
		sel := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{}}
		for i, k := range keys {
			if mask&(1<<i) != 0 {
				sel.Sub[k] = nil
			}
		}
		got, ok := fastyaml.DecodeAcceptedFields([]byte(doc), sel)
		if !ok {
			t.Fatalf("declined with selection %s", describe(sel))
		}
		for k := range sel.Sub {
			if !reflect.DeepEqual(got[k], full[k]) {
				t.Fatalf("selection %s: %s = %#v, want %#v", describe(sel), k, got[k], full[k])
			}
		}
		if len(got) != len(sel.Sub) {
			t.Fatalf("selection %s: kept %v", describe(sel), got)
		}
	}
	// Within a sequence's items, through the wildcard.
	sel := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{"h": {Any: &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{"l": nil}}}}}
	got, _ := fastyaml.DecodeAcceptedFields([]byte(doc), sel)
	want := map[string]any{"h": []any{map[string]any{"l": int64(1)}, map[string]any{}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("h[*].l: got %#v, want %#v", got, want)
	}
}

// randomSelection draws a selection for value v: of a mapping some keys,
// sometimes keeping a value whole (nil), sometimes a key the document lacks,
// sometimes a wildcard drawn from one of its values; of a sequence a
// wildcard drawn from one of its items, or none (the sequence whole). A key
// named beside a wildcard gets the wildcard's selection or the whole value,
// which both hold everything the wildcard does (Fields' contract).
func randomSelection(rng *rand.Rand, v any, depth int) *fastyaml.Fields {
	switch c := v.(type) {
	case map[string]any:
		sel := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{}}
		keys := sortedKeys(c)
		if len(keys) > 0 && depth < 6 && rng.Intn(4) == 0 {
			sel.Any = randomSelection(rng, c[keys[rng.Intn(len(keys))]], depth+1)
		}
		for _, k := range keys {
			switch {
			case rng.Intn(3) == 0:
			case sel.Any != nil && rng.Intn(2) == 0:
				sel.Sub[k] = sel.Any
			case sel.Any == nil && depth < 6 && rng.Intn(4) != 0:
				sel.Sub[k] = randomSelection(rng, c[k], depth+1)
			default:
				sel.Sub[k] = nil
			}
		}
		if rng.Intn(3) == 0 {
			sel.Sub["not-in-the-document"] = nil
		}
		return sel
	case []any:
		sel := &fastyaml.Fields{}
		if len(c) > 0 && depth < 6 && rng.Intn(4) != 0 {
			sel.Any = randomSelection(rng, c[rng.Intn(len(c))], depth+1)
		}
		return sel
	}
	// A scalar: any selection keeps it; an empty one keeps nothing of a
	// mapping or sequence found in its place elsewhere.
	return &fastyaml.Fields{}
}

// covers reports how got fails to hold full's fields selected by sel, or "".
func covers(got, full any, sel *fastyaml.Fields, at string) string {
	if sel == nil {
		if !reflect.DeepEqual(got, full) {
			return "selected " + at + " differs"
		}
		return ""
	}
	switch f := full.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return "selected " + at + " is not a mapping"
		}
		for k := range g {
			if _, ok := f[k]; !ok {
				return "kept " + at + "." + k + ", which the document does not have"
			}
		}
		for k, fv := range f {
			sub, selected := sel.Sub[k]
			if !selected && sel.Any != nil {
				sub, selected = sel.Any, true
			}
			if !selected {
				continue
			}
			gv, ok := g[k]
			if !ok {
				return "selected " + at + "." + k + " missing"
			}
			if msg := covers(gv, fv, sub, at+"."+k); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		if sel.Any == nil {
			return covers(got, full, nil, at)
		}
		g, ok := got.([]any)
		if !ok || len(g) != len(f) {
			return "selected " + at + " lost items"
		}
		for i := range f {
			if msg := covers(g[i], f[i], sel.Any, at+"["+strconv.Itoa(i)+"]"); msg != "" {
				return msg
			}
		}
		return ""
	}
	return covers(got, full, nil, at)
}

// describe prints a selection, keys sorted, the wildcard as "*".
func describe(sel *fastyaml.Fields) string {
	if sel == nil {
		return "all"
	}
	s := "{"
	keys := make([]string, 0, len(sel.Sub))
	for k := range sel.Sub {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s += k + ":" + describe(sel.Sub[k]) + " "
	}
	if sel.Any != nil {
		s += "*:" + describe(sel.Any) + " "
	}
	return s + "}"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// splitDocs cuts a stream at `---` lines, enough for these tests (a chunk the
// decoder declines is skipped).
func splitDocs(data []byte) [][]byte {
	return bytes.Split(data, []byte("\n---\n"))
}

// What is not selected is parsed, not built: reading one field of a large
// document (block and flow collections, quoted, plain and block scalars)
// allocates only that field and the mapping holding it.
func TestDecodeSharedFieldsBuildsOnlyTheSelection(t *testing.T) {
	var doc []byte
	for _, in := range corpus.Generate(corpus.Options{Rollouts: 1, Seed: 1}) {
		doc = splitDocs(in.Data)[0]
	}
	full, ok := fastyaml.Decode(doc)
	if !ok || full["kind"] != "Rollout" || len(doc) < 500 {
		t.Fatalf("want a Rollout document to decode, got %v:\n%s", full["kind"], doc)
	}
	doc = append(doc, "\nextra:\n  quoted: \"a b\"\n  text: |\n    line\n  list: [x, 'y', {z: 1}]\n"...)
	sel := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{"kind": nil}}
	if raceEnabled {
		t.Skip("allocation counts are not kept under the race detector (sync.Pool drops entries)")
	}
	allocs := testing.AllocsPerRun(20, func() {
		if got, _ := fastyaml.DecodeSharedFields(doc, sel); len(got) != 1 {
			t.Fatalf("got %v", got)
		}
	})
	// The root map, its entries and the boxed "Rollout".
	if allocs > 3 {
		t.Errorf("one field of a %d-byte document took %v allocations", len(doc), allocs)
	}
}
