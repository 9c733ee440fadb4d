package load_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

func loadOne(t testing.TB, name, src string) *graph.Graph {
	t.Helper()
	return load.Inputs([]load.Input{{Path: name, Data: []byte(src)}}, load.Options{})
}

// problems renders the graph's problems as "RULE@line:col".
func problems(g *graph.Graph) []string {
	var out []string
	for _, p := range g.Problems {
		out = append(out, fmt.Sprintf("%s@%d:%d", p.RuleID, p.Pos.Line, p.Pos.Column))
	}
	return out
}

const svc = `apiVersion: v1
kind: Service
metadata:
  name: %s
spec:
  ports:
  - port: %d
`

func TestMultiDocumentAbsoluteLines(t *testing.T) {
	src := "# leading comment\n" + fmt.Sprintf(svc, "a", 80) + "---\n" + fmt.Sprintf(svc, "b", 81) + "---\n---\n# only a comment\n---\n" + fmt.Sprintf(svc, "c", 82)
	g := loadOne(t, "m.yaml", src)
	if len(g.Problems) != 0 {
		t.Fatalf("problems: %v", problems(g))
	}
	if len(g.Resources) != 3 {
		t.Fatalf("%d resources, want 3", len(g.Resources))
	}
	// The port value of each document, counted in the whole file: lines 8,
	// 16 and 27 (a leading comment, two separators, an empty and a
	// comment-only document precede them).
	wantLine := map[string]int{"a": 8, "b": 16, "c": 27}
	lines := strings.Split(src, "\n")
	for _, r := range g.Resources {
		p := r.Pos("spec.ports[0].port")
		if p.Line != wantLine[r.Name] || p.Column != 11 || !strings.HasPrefix(lines[p.Line-1][p.Column-1:], "8") {
			t.Errorf("%s: port at %d:%d, want %d:11", r.Name, p.Line, p.Column, wantLine[r.Name])
		}
	}
	for _, r := range g.Resources {
		p := r.Pos("metadata.name")
		if got := lines[p.Line-1][p.Column-1:]; got != r.Name {
			t.Errorf("%s: metadata.name position points at %q", r.Name, got)
		}
	}
}

func TestKindList(t *testing.T) {
	src := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: first}
- apiVersion: v1
  kind: Service
  metadata:
    name: second
  spec:
    sellector: {app: x}
`
	g := loadOne(t, "l.yaml", src)
	if len(g.Resources) != 2 || g.Resources[0].Name != "first" || g.Resources[1].Name != "second" {
		t.Fatalf("resources %v", g.Resources)
	}
	if p := g.Resources[1].Pos("metadata.name"); p.Line != 10 || p.Column != 11 {
		t.Errorf("item name at %d:%d, want 10:11", p.Line, p.Column)
	}
	if got := problems(g); len(got) != 1 || got[0] != "RL0003@12:5" {
		t.Errorf("problems %v, want the unknown field sellector at 12:5", got)
	}
}

func TestJSONInput(t *testing.T) {
	src := "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Service\",\n  \"metadata\": {\"name\": \"j\"},\n  \"spec\": {\"ports\": [{\"port\": 80}], \"typo\": 1}\n}\n"
	g := loadOne(t, "s.json", src)
	if len(g.Resources) != 1 || g.Resources[0].Service() == nil {
		t.Fatalf("JSON Service not decoded: %v", problems(g))
	}
	if p := g.Resources[0].Pos("spec.ports[0].port"); p.Line != 5 || p.Column != 31 {
		t.Errorf("port at %d:%d, want 5:31", p.Line, p.Column)
	}
	if got := problems(g); len(got) != 1 || !strings.HasPrefix(got[0], "RL0003@5:") {
		t.Errorf("problems %v, want RL0003 for typo on line 5", got)
	}
}

func TestCRLFAndBOM(t *testing.T) {
	lf := fmt.Sprintf(svc, "a", 80) + "---\n" + fmt.Sprintf(svc, "b", 81)
	for name, src := range map[string]string{
		"crlf":     strings.ReplaceAll(lf, "\n", "\r\n"),
		"bom":      "\xef\xbb\xbf" + lf,
		"bom+crlf": "\xef\xbb\xbf" + strings.ReplaceAll(lf, "\n", "\r\n"),
	} {
		t.Run(name, func(t *testing.T) {
			g := loadOne(t, name+".yaml", src)
			if len(g.Problems) != 0 || len(g.Resources) != 2 {
				t.Fatalf("problems %v, %d resources", problems(g), len(g.Resources))
			}
			if r := g.Resources[1]; r.Name != "b" || r.Pos("spec.ports[0].port").Line != 15 || r.Pos("spec.ports[0].port").Column != 11 {
				t.Errorf("second doc %q port at %v, want line 15 col 11", r.Name, r.Pos("spec.ports[0].port"))
			}
			if g.Resources[0].Name != "a" || g.Resources[0].Pos("metadata.name").Column != 9 {
				t.Errorf("first doc name %q at %v", g.Resources[0].Name, g.Resources[0].Pos("metadata.name"))
			}
		})
	}
}

func TestInvalidUTF8(t *testing.T) {
	src := "apiVersion: v1\nkind: Service\nmetadata:\n  name: \xff\xfe\n"
	g := loadOne(t, "u.yaml", src)
	if len(g.Problems) != 1 || g.Problems[0].RuleID != "RL0001" {
		t.Fatalf("problems %v, want one RL0001", problems(g))
	}
	if g.Problems[0].Pos.Line < 1 {
		t.Errorf("no line: %v", g.Problems[0].Pos)
	}
}

func TestEmptyAndCommentOnly(t *testing.T) {
	for name, src := range map[string]string{
		"empty":        "",
		"comments":     "# nothing here\n# at all\n",
		"markers":      "---\n---\n...\n",
		"null doc":     "~\n",
		"blank lines":  "\n\n\n",
		"comment docs": "# a\n---\n# b\n---\n",
	} {
		t.Run(name, func(t *testing.T) {
			g := loadOne(t, "e.yaml", src)
			if len(g.Problems) != 0 || len(g.Resources) != 0 {
				t.Errorf("problems %v, resources %d", problems(g), len(g.Resources))
			}
		})
	}
}

func TestSyntaxErrorKeepsOtherDocuments(t *testing.T) {
	src := fmt.Sprintf(svc, "a", 80) + "---\nkind: [\n---\n" + fmt.Sprintf(svc, "c", 82)
	g := loadOne(t, "s.yaml", src)
	if len(g.Resources) != 2 {
		t.Errorf("%d resources, want the two valid documents", len(g.Resources))
	}
	got := problems(g)
	if len(got) != 1 || !strings.HasPrefix(got[0], "RL0001@") {
		t.Fatalf("problems %v", got)
	}
	if l := g.Problems[0].Pos.Line; l < 9 || l > 11 {
		t.Errorf("RL0001 at line %d, want within the broken document (9-11)", l)
	}
}

// hostile inputs: each must load without panic, within a deadline, and yield
// findings or nothing, never a crash.
func hostileInputs() map[string][]byte {
	r := rand.New(rand.NewSource(1))
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(32 + r.Intn(95))
	}
	binary := make([]byte, 64<<10)
	r.Read(binary)
	var big bytes.Buffer
	for i := 0; big.Len() < 10<<20; i++ {
		fmt.Fprintf(&big, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  key: %s\n", i, strings.Repeat("x", 200))
	}
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	deepMap := "apiVersion: v1\nkind: Service\nmetadata: {name: d}\nspec:\n" + strings.Repeat("  ", 1)
	var dm strings.Builder
	dm.WriteString(deepMap)
	for i := 0; i < 3000; i++ {
		dm.WriteString("a:\n" + strings.Repeat("  ", i+2))
	}
	dm.WriteString("b: 1\n")
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for i := 0; i < 12; i++ {
		n := fmt.Sprintf("l%d", i)
		bomb += fmt.Sprintf("%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	bombObj := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n" + indent(bomb, "  ")
	return map[string][]byte{
		"garbage":         garbage,
		"binary":          binary,
		"10MB":            big.Bytes(),
		"deep flow":       []byte(deep),
		"deep block":      []byte(dm.String()),
		"alias bomb":      []byte(bomb),
		"alias bomb obj":  []byte(bombObj),
		"nul bytes":       []byte("apiVersion: v1\x00\nkind: Service\n"),
		"template":        []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Values.name }}\n"),
		"tabs":            []byte("apiVersion: v1\n\tkind: Service\n"),
		"unclosed quote":  []byte("apiVersion: \"v1\nkind: Service\n"),
		"huge scalar":     []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {k: " + strings.Repeat("y", 1<<20) + "}\n"),
		"many documents":  []byte(strings.Repeat("---\na: 1\n", 30000)),
		"list of garbage": []byte("apiVersion: v1\nkind: List\nitems: [1, \"x\", [], {kind: 3}]\n"),
	}
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
}

func TestHostileInputs(t *testing.T) {
	// A generous deadline: this asserts "finishes, bounded", not speed;
	// BenchmarkHostile measures the time (well under a second each).
	const deadline = 10 * time.Second
	for name, data := range hostileInputs() {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && len(data) > 1<<20 {
				t.Skip("large input skipped in -short mode")
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			done := make(chan *graph.Graph, 1)
			panicked := make(chan any, 1)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						panicked <- p
					}
				}()
				done <- load.Inputs([]load.Input{{Path: "h.yaml", Data: data}}, load.Options{})
			}()
			select {
			case g := <-done:
				for _, p := range g.Problems {
					if p.Pos.Line < 1 || p.Pos.File != "h.yaml" || p.Message == "" {
						t.Errorf("problem without position or message: %+v", p)
					}
				}
				for _, r := range g.Resources {
					_ = r.Pos("spec.a.b[3].c")
				}
			case p := <-panicked:
				t.Fatalf("panic: %v", p)
			case <-ctx.Done():
				t.Fatalf("did not finish within %v", deadline)
			}
		})
	}
}

func TestAliasBombIsALimitFinding(t *testing.T) {
	g := loadOne(t, "b.yaml", string(hostileInputs()["alias bomb obj"]))
	found := false
	for _, p := range g.Problems {
		found = found || p.RuleID == load.RuleLimit
	}
	if !found {
		t.Errorf("alias bomb gave %v, want an RL0005 limit finding", problems(g))
	}
}

func TestFileSizeLimit(t *testing.T) {
	data := []byte(strings.Repeat("# pad\n", 1000))
	g := load.Inputs([]load.Input{{Path: "big.yaml", Data: data}}, load.Options{Limits: load.Limits{MaxFileBytes: 100}})
	if got := problems(g); len(got) != 1 || got[0] != "RL0005@1:1" {
		t.Errorf("problems %v, want RL0005 at 1:1", got)
	}
}

// BenchmarkHostile measures each hostile input; the target is well under a
// second each, with memory bounded by the node budget.
func BenchmarkHostile(b *testing.B) {
	for name, data := range hostileInputs() {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				load.Inputs([]load.Input{{Path: "h.yaml", Data: data}}, load.Options{})
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heapMiB")
		})
	}
}

func TestDeepNestingIsALimitFinding(t *testing.T) {
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: " + strings.Repeat("{a: ", 6000) + "1" + strings.Repeat("}", 6000) + "\n"
	g := loadOne(t, "d.yaml", src)
	if len(g.Problems) != 1 || g.Problems[0].RuleID != load.RuleLimit || !strings.Contains(g.Problems[0].Message, "nests deeper than 5000 levels") {
		t.Errorf("problems %v %+v, want one RL0005 about nesting", problems(g), g.Problems)
	}
}

// Documents of one file are decoded in parallel but joined in document order,
// and a template found mid-file still stops the documents after it (their
// problems included), as a sequential load would.
func TestOneFileParallelDocumentsKeepOrder(t *testing.T) {
	var b strings.Builder
	const n = 200
	for i := range n {
		fmt.Fprintf(&b, "---\n"+svc, fmt.Sprintf("s%03d", i), 80+i)
		if i == 150 {
			b.WriteString("---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Values.name }}\n")
			b.WriteString("---\n: : bad yaml after the template\n")
		}
	}
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		g := loadOne(t, "big.yaml", b.String())
		runtime.GOMAXPROCS(prev)
		if len(g.Resources) != 151 {
			t.Fatalf("GOMAXPROCS=%d: %d resources, want the 151 before the template", procs, len(g.Resources))
		}
		for i, r := range g.Resources {
			if want := fmt.Sprintf("s%03d", i); r.Name != want || r.Doc != i {
				t.Fatalf("GOMAXPROCS=%d: resource %d is %s (doc %d), want %s (doc %d)", procs, i, r.Name, r.Doc, want, i)
			}
		}
		if got := problems(g); len(got) != 1 || !strings.HasPrefix(got[0], "RL0004@") {
			t.Fatalf("GOMAXPROCS=%d: problems %v, want only the template finding (RL0004)", procs, got)
		}
	}
}

// TestReadAllSized: a file is read into a buffer of its own size (the bytes
// are kept for the whole lint), a reader with more than the hint still
// reads to the end, and a stream's buffer is trimmed.
func TestReadAllSized(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	content := bytes.Repeat([]byte("kind: Service\n"), 10_000)
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	inputs, err := load.Expand([]string{path}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := inputs[0].Data; !bytes.Equal(got, content) || cap(got) != len(content)+1 {
		t.Errorf("read %d bytes into a buffer of %d, want the %d bytes in %d", len(got), cap(got), len(content), len(content)+1)
	}
	for _, hint := range []int{1, 512, len(content), len(content) + 1, 2 * len(content)} {
		got, err := load.ReadAll(bytes.NewReader(content), hint)
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("hint %d: read %d bytes, err %v", hint, len(got), err)
		}
		if cap(got) > len(content)+len(content)/8+512 {
			t.Errorf("hint %d: %d bytes kept in a buffer of %d", hint, len(got), cap(got))
		}
	}
	if got, err := load.ReadAll(iotest.ErrReader(errors.New("disk gone")), 512); err == nil || len(got) != 0 {
		t.Errorf("a failing reader: got %q, %v; want its error", got, err)
	}
}

// An Argo Rollouts placeholder is not a Go template: a syntax error in a file
// whose AnalysisTemplate queries hold them is a syntax error, and the file's
// other documents are linted; a placeholder left unquoted is reported where
// it is, and only its document is dropped. A Go template still skips the file.
func TestArgoPlaceholdersAreNotTemplates(t *testing.T) {
	const analysis = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: rate
spec:
  metrics:
  - name: rate
    provider:
      prometheus:
        address: http://prometheus:9090
        query: sum(rate(x{service="{{args.service}}", ns="{{ args.namespace }}"}[5m]))
`
	cases := []struct {
		name, src string
		want      []string // RULE@line:col
		resources int
	}{
		{"syntax error beside placeholders", analysis + "---\nkind: [\n---\n" + fmt.Sprintf(svc, "c", 82), []string{"RL0001@13:1"}, 2},
		{"unquoted placeholder", analysis + "---\n" + fmt.Sprintf(svc, "c", 82) + "  selector:\n    app: {{args.app}}\n", []string{"RL0001@21:10"}, 1},
		{"mapping as key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata:\n  ? {a: 1}\n  : b\n", []string{"RL0001@6:5"}, 0},
		{"null key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata: {~: b}\n", []string{"RL0001@5:8"}, 0},
		{"go template that does not parse", analysis + "---\nkind: [ {{ .Values.kind }}\n", []string{"RL0004@13:1"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := loadOne(t, "a.yaml", c.src)
			if got := problems(g); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("problems %v, want %v", got, c.want)
			}
			if len(g.Resources) != c.resources {
				t.Errorf("%d resources, want %d", len(g.Resources), c.resources)
			}
		})
	}
}
