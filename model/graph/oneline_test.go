package graph_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// sameTree reports where two node trees differ (kind, style, tag, value,
// line, column, shape), or "".
func sameTree(a, b *yaml.Node, path string) string {
	if a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value || a.Line != b.Line || a.Column != b.Column || len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: %d/%d/%s/%q %d:%d (%d) vs %d/%d/%s/%q %d:%d (%d)", path,
			a.Kind, a.Style, a.Tag, a.Value, a.Line, a.Column, len(a.Content), b.Kind, b.Style, b.Tag, b.Value, b.Line, b.Column, len(b.Content))
	}
	for i := range a.Content {
		if d := sameTree(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

func checkParse(t *testing.T, data []byte) {
	t.Helper()
	var want, got yaml.Node
	werr := yaml.Unmarshal(data, &want)
	gerr := graph.ParseDocument(data, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("errors differ: %v vs %v on %s", gerr, werr, data)
	}
	if d := sameTree(&got, &want, ""); d != "" {
		t.Fatalf("trees differ at %s\non %s", d, data)
	}
}

// TestParseDocumentOneLine holds the split parse of one-line documents to
// yaml.Unmarshal of the text as written, node for node (positions included):
// every object of a generated corpus as compact JSON, and random JSON with
// strings that hold the characters the split looks for, escapes, non-ASCII
// text, spaces between tokens and empty collections.
func TestParseDocumentOneLine(t *testing.T) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 60, Seed: 3, MistakeRate: 0.2}), load.Options{})
	for _, r := range g.Resources {
		b, err := json.Marshal(r.Object())
		if err != nil {
			t.Fatal(err)
		}
		checkParse(t, b)
	}
	rnd := rand.New(rand.NewSource(1))
	for range 3000 {
		var sb strings.Builder
		sb.WriteString(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding"},"x":`)
		randomJSON(rnd, &sb, 0)
		sb.WriteString("}")
		checkParse(t, []byte(sb.String()))
	}
	// Not split: short, long, several lines, tabs; still what yaml.Unmarshal gives.
	for _, s := range []string{`{"a":1}`, `{"a":[` + strings.Repeat(`"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",`, 200) + `1]}`,
		"{\"a\":\n1}", "{\"a\":\t1,\"b\":\"" + strings.Repeat("x", 300) + "\"}"} {
		checkParse(t, []byte(s))
	}
}

var pieces = []string{`,`, `{`, `[`, `}`, `]`, `:`, `\"`, `\\`, `é`, `日本`, `😀`, `a b`, `#`, `- `, `&x`, `*x`, `!t`, `\u00e9`, `\n`, `'`, `%`, `@`, "`", `?`}

func randomJSON(rnd *rand.Rand, sb *strings.Builder, depth int) {
	sp := func() {
		if rnd.Intn(5) == 0 {
			sb.WriteString(" ")
		}
	}
	k := rnd.Intn(8)
	if depth > 4 {
		k %= 4
	}
	switch k {
	case 0:
		sb.WriteString(`"`)
		for range rnd.Intn(6) {
			sb.WriteString(pieces[rnd.Intn(len(pieces))])
		}
		sb.WriteString(`"`)
	case 1:
		sb.WriteString([]string{"-1", "0", "3.5", "-2e3", "1e-7", "12345678901234567890"}[rnd.Intn(6)])
	case 2:
		sb.WriteString([]string{"true", "false", "null"}[rnd.Intn(3)])
	case 3:
		sb.WriteString([]string{"{}", "[]", "[{}]", `{"":[]}`}[rnd.Intn(4)])
	case 4, 5:
		sb.WriteString("[")
		for i := range rnd.Intn(5) {
			if i > 0 {
				sb.WriteString(",")
				sp()
			}
			randomJSON(rnd, sb, depth+1)
		}
		sb.WriteString("]")
	default:
		sb.WriteString("{")
		for i := range rnd.Intn(5) {
			if i > 0 {
				sb.WriteString(",")
				sp()
			}
			fmt.Fprintf(sb, `"k%d%s"`, i, pieces[rnd.Intn(len(pieces))])
			sp()
			sb.WriteString(":")
			sp()
			randomJSON(rnd, sb, depth+1)
		}
		sb.WriteString("}")
	}
}
