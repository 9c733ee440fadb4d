package load_test

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// fourDocuments has a finding in the first, the second and the fourth
// document, behind non-ASCII characters on the same line, a directive, and
// a block scalar.
const fourDocuments = `# Überblick — ein Kommentar
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: eins, annotations: {note: "größer"}}
spec:
  strategy: {canary: {steps: [{setWieght: 10}]}}
---
apiVersion: v1
kind: Service
metadata:
  name: zwei
  annotations:
    text: |
      zeile eins
      zeile zwei
spec:
  selector: {app: zwei}
  ports: [{port: 80, prot: 1}] # rolloutlint:ignore RL0003 -- 日本語の理由
---
apiVersion: v1
kind: ConfigMap
metadata: {name: drei}
data: {k: "ß"}
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: vier}
spec:
  strategy:
    canary:
      steps:
      - {pause: {}, "名前": 1, setWieght: 40}
`

func utf16With(text string, order binary.AppendByteOrder, bom []byte) []byte {
	out := append([]byte{}, bom...)
	for _, u := range utf16.Encode([]rune(text)) {
		out = order.AppendUint16(out, u)
	}
	return out
}

func loadKeys(t *testing.T, data []byte) (problems []string, names []string, directives []graph.Directive) {
	t.Helper()
	g := load.Inputs([]load.Input{{Path: "f.yaml", Data: data}}, load.Options{})
	for _, r := range g.Resources {
		names = append(names, r.Name)
	}
	return problemKeys(g.Problems), names, g.Files[0].Directives
}

// TestEncodingsKeepEveryDocumentAndPosition loads the same manifests as
// UTF-8, UTF-16 (both byte orders, with a byte-order mark) and with lone CR
// line ends: every document is linted, and every finding and directive is at
// the same line and column.
func TestEncodingsKeepEveryDocumentAndPosition(t *testing.T) {
	want, wantNames, wantDirs := loadKeys(t, []byte(fourDocuments))
	if len(wantNames) != 4 || len(want) < 3 || len(wantDirs) != 1 {
		t.Fatalf("UTF-8 reference: objects %v, problems %v, directives %v", wantNames, want, wantDirs)
	}
	mixed := strings.Replace(strings.ReplaceAll(fourDocuments, "\n", "\r"), "\r", "\r\n", 3)
	for name, data := range map[string][]byte{
		"UTF-16LE":      utf16With(fourDocuments, binary.LittleEndian, []byte{0xff, 0xfe}),
		"UTF-16BE":      utf16With(fourDocuments, binary.BigEndian, []byte{0xfe, 0xff}),
		"UTF-16LE CRLF": utf16With(strings.ReplaceAll(fourDocuments, "\n", "\r\n"), binary.LittleEndian, []byte{0xff, 0xfe}),
		"CR":            []byte(strings.ReplaceAll(fourDocuments, "\n", "\r")),
		"CR, CRLF":      []byte(mixed),
		"UTF-16BE CR":   utf16With(strings.ReplaceAll(fourDocuments, "\n", "\r"), binary.BigEndian, []byte{0xfe, 0xff}),
	} {
		got, names, dirs := loadKeys(t, data)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(names, wantNames) {
			t.Errorf("%s:\nproblems %v\nwant     %v\nobjects %v, want %v", name, got, want, names, wantNames)
		}
		if len(dirs) != 1 || dirs[0].Pos != wantDirs[0].Pos || dirs[0].Line != wantDirs[0].Line || dirs[0].Reason != wantDirs[0].Reason {
			t.Errorf("%s: directives %+v, want %+v", name, dirs, wantDirs)
		}
	}
}

func TestBadEncodingsAreSyntaxFindings(t *testing.T) {
	odd := utf16With("a: 1\nb: 2\n", binary.LittleEndian, []byte{0xff, 0xfe})
	lone := utf16With("a: 1\n", binary.BigEndian, []byte{0xfe, 0xff})
	lone = append(lone, 0xd8, 0x00, 0x00, 'x') // a high surrogate followed by 'x'
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"odd length":         {append(odd, 'x'), "RL0001 f.yaml:3:1  invalid UTF-16: the file ends in the middle of a character (an odd number of bytes)"},
		"unpaired surrogate": {lone, "RL0001 f.yaml:2:1  invalid UTF-16: an unpaired surrogate (0xD800)"},
		"UTF-32":             {[]byte{0xff, 0xfe, 0, 0, 'a', 0, 0, 0}, "RL0001 f.yaml:1:1  the file is UTF-32, which YAML parsers do not read: save it as UTF-8"},
	} {
		g := load.Inputs([]load.Input{{Path: "f.yaml", Data: c.data}}, load.Options{})
		if got := problemKeys(g.Problems); len(got) != 1 || got[0] != c.want || len(g.Resources) != 0 {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

// smallBomb adds 8 nodes through aliases: two aliases to a 4-node sequence.
func smallBomb(i int) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b%d}\nx:\n  a: &a [x, x, x]\n  b: [*a, *a]\n", i)
}

// TestAliasBudgetIsPerFile checks that documents under the budget each but
// over it together are refused from the one where the sum passes it, in
// document order, with one finding; documents without aliases still load.
func TestAliasBudgetIsPerFile(t *testing.T) {
	docs := []string{smallBomb(1), smallBomb(2), smallBomb(3), fmt.Sprintf(svc, "plain", 80), smallBomb(4), smallBomb(5)}
	src := strings.Join(docs, "---\n")
	opts := load.Options{Limits: load.Limits{MaxAliasNodes: 20}}
	var first []string
	for run := range 5 { // the workers' scheduling must not change the outcome
		g := load.Inputs([]load.Input{{Path: "f.yaml", Data: []byte(src)}, {Path: "g.yaml", Data: []byte(smallBomb(9))}}, opts)
		var names []string
		for _, r := range g.Resources {
			names = append(names, r.Name)
		}
		if want := []string{"b1", "b2", "plain", "b9"}; !reflect.DeepEqual(names, want) {
			t.Fatalf("objects %v, want %v", names, want)
		}
		got := problemKeys(g.Problems)
		want := []string{"RL0005 f.yaml:20:11  YAML aliases in this file expand to more than 20 nodes, the limit per file. The documents before this one expand to 16 (alias bombs?); this document was not linted, nor the 2 later documents of the file that use aliases."}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("problems %q, want %q", got, want)
		}
		if run == 0 {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d differs: %q", run, got)
		}
	}
}

func TestRecursiveAliasIsALimitFinding(t *testing.T) {
	g := loadOne(t, "r.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r}\ndata:\n  a: &a [x, *a]\n")
	if got := problemKeys(g.Problems); len(got) != 1 || got[0] != "RL0005 r.yaml:5:13  a YAML alias refers to a node that contains it. Its expansion never ends; the document was not linted." {
		t.Errorf("problems %q", got)
	}
}

// TestLargeDocumentWithoutAliasesLoads checks that only what aliases add is
// budgeted: a document holding many more nodes than the alias budget loads,
// on the fast path and on the full path, with or without a small alias.
func TestLargeDocumentWithoutAliasesLoads(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "  k%d: v\n", i)
	}
	plain := b.String()
	withAlias := plain + "  x: &x [a]\n  y: *x\n"
	tagged := plain + "  t: !!str v\n" // declined by the fast path
	for name, src := range map[string]string{"plain": plain, "alias": withAlias, "full path": tagged} {
		g := load.Inputs([]load.Input{{Path: "big.yaml", Data: []byte(src)}}, load.Options{Limits: load.Limits{MaxAliasNodes: 100}})
		if len(g.Problems) != 0 || len(g.Resources) != 1 {
			t.Errorf("%s: problems %v, %d objects", name, problems(g), len(g.Resources))
		}
	}
}

// TestMeasureMatchesTheConverter checks the alias measure against the
// conversion it predicts: converting visits exactly own+adds nodes.
func TestMeasureMatchesTheConverter(t *testing.T) {
	for _, src := range []string{
		"a: 1\n",
		"a: &a {x: 1, y: [1, 2]}\nb: *a\nc: [*a, *a]\n",
		"base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  z: 3\nn: {<<: [*b, *b], w: 1}\n",
		"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: &c [*b, *b]\nd: [*c, *a, *b]\n",
		"k: &k v\n*k : 1\n",
	} {
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(src), &root); err != nil {
			t.Fatal(err)
		}
		body := root.Content[0]
		own, adds, rec := load.MeasureExpansion(body)
		if rec || !load.ConvertsWithin(body, own+adds) || load.ConvertsWithin(body, own+adds-1) {
			t.Errorf("%q: own %d + adds %d is not what the conversion visits (recursive %v)", src, own, adds, rec)
		}
	}
}

// TestNonManifestContentIsNotQuoted loads files that are not manifests (a
// token, a key file, a config) and requires that no finding quotes them,
// while a manifest's own findings still quote its keys.
func TestNonManifestContentIsNotQuoted(t *testing.T) {
	const secret = "ghp_SECRETTOKEN1234"
	for name, src := range map[string]string{
		"token":          secret + "\n",
		"alias-looking":  "*" + secret + "\n",
		"anchor in map":  "a: *" + secret + "\n",
		"duplicate key":  secret + ": 1\n" + secret + ": 2\n",
		"quoted scalar":  "\"" + secret + "\"\n",
		"json config":    `{"auths": {"registry": {"auth": "` + secret + `"}}}`,
		"broken yaml":    "key: [" + secret + "\n",
		"tab indented":   "a:\n\t" + secret + ": 1\n",
		"template-ish":   "{{ " + secret + " }}\n",
		"list of tokens": "- " + secret + "\n- " + secret + "\n",
	} {
		g := loadOne(t, "secret.yaml", src)
		for _, p := range g.Problems {
			if strings.Contains(p.Message, "SECRET") {
				t.Errorf("%s: %s %s quotes the file: %s", name, p.RuleID, p.Pos, p.Message)
			}
		}
	}
	g := loadOne(t, "m.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata: {a: *nowhere}\n")
	if got := problemKeys(g.Problems); len(got) != 1 || !strings.Contains(got[0], "unknown anchor 'nowhere' referenced") {
		t.Errorf("a manifest's own message: %q", got)
	}
	g = loadOne(t, "m.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\nmetadata: {name: m2}\n")
	if got := problemKeys(g.Problems); len(got) == 0 || !strings.Contains(got[0], `mapping key "metadata" already defined at line 3`) {
		t.Errorf("a manifest's duplicate key: %q", got)
	}
}
