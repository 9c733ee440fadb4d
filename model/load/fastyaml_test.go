package load_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/internal/proccpu"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// checkChunk is the fast decoder's contract on one chunk: when it accepts,
// the slow path accepts too and returns a deep-equal value. It reports
// whether the fast path accepted.
func checkChunk(t testing.TB, name string, chunk []byte, maxNodes int) bool {
	t.Helper()
	fast, ok := fastyaml.DecodeLimit(chunk, maxNodes)
	checkTape(t, name, chunk, maxNodes, fast, ok)
	if !ok {
		if fast != nil {
			t.Errorf("%s: declined but returned a value", name)
		}
		return false
	}
	slow, clean := load.SlowDecode(chunk, maxNodes)
	if !clean {
		t.Errorf("%s: fast path accepted a chunk the slow path reports or skips:\n%s", name, chunk)
		return true
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: fast and slow paths differ\nchunk:\n%s\nfast: %#v\nslow: %#v", name, chunk, fast, slow)
	}
	return true
}

// checkTape is the tape's contract on one chunk: DecodeTapeShared accepts
// exactly what Decode accepts (fast and ok are Decode's result), and the
// value the tape holds equals Decode's.
func checkTape(t testing.TB, name string, chunk []byte, maxNodes int, fast map[string]any, ok bool) {
	t.Helper()
	var tape fastyaml.Tape
	if taped := fastyaml.DecodeTapeShared(chunk, maxNodes, &tape); taped != ok {
		t.Errorf("%s: Decode accepts: %v, DecodeTapeShared accepts: %v\n%s", name, ok, taped, chunk)
		return
	}
	if !ok {
		if len(tape.Events) != 0 {
			t.Errorf("%s: declined but left %d events", name, len(tape.Events))
		}
		return
	}
	if end := tape.Next(0); end != len(tape.Events) {
		t.Errorf("%s: the root ends at event %d of %d", name, end, len(tape.Events))
	}
	if got := tape.Value(0); !reflect.DeepEqual(got, any(fast)) {
		t.Errorf("%s: tape and Decode differ\nchunk:\n%s\ntape:   %#v\nDecode: %#v", name, chunk, got, fast)
	}
	checkTyped(t, name, &tape, fast)
}

// tapeKinds are the kinds checkTyped decodes a document as when its own kind
// does not decode from a tape.
var tapeKinds = []*kinds.Kind{
	kinds.Lookup(kinds.GroupArgo, kinds.Rollout),
	kinds.Lookup(kinds.GroupCore, kinds.Service),
	kinds.Lookup(kinds.GroupArgo, kinds.AnalysisTemplate),
	kinds.Lookup(kinds.GroupIstio, kinds.VirtualService),
	kinds.Lookup(kinds.GroupIstio, kinds.DestinationRule),
	kinds.Lookup(kinds.GroupIstio, kinds.Gateway),
}

// checkTyped is DecodeTape's contract on a document Decode accepted as obj:
// it succeeds exactly when the fast path's generic route does (SchemaClean,
// then DecodeGoFresh, and for an Istio kind DecodeProto of a spec mapping),
// with the same typed object, which is the unstructured converter's (for an
// Istio spec: equal as a proto message). The document is decoded as its own
// kind, or as each of tapeKinds. A VirtualService's WeightsSet read from the
// tape is graph.WeightsSetOf's.
func checkTyped(t testing.TB, name string, tape *fastyaml.Tape, obj map[string]any) {
	t.Helper()
	ks := tapeKinds
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = ""
	}
	if k := kinds.Lookup(group, kind); k != nil && kinds.TapeKind(kind) && k.New != nil {
		ks = []*kinds.Kind{k}
	}
	for _, k := range ks {
		got := k.New()
		taped := k.DecodeTape(got, tape)
		generic := k.New()
		ok := k.SchemaClean(obj)
		if k.Spec == nil {
			ok = ok && kinds.DecodeGoFresh(generic, obj, "") == nil
		} else {
			spec, isMap := obj["spec"].(map[string]any)
			ok = ok && isMap && kinds.DecodeGoFresh(generic, obj, "spec") == nil && kinds.DecodeProto(k.Spec(generic), spec) == nil
		}
		if taped != ok {
			t.Errorf("%s as %s: DecodeTape = %v, the generic route = %v\n%#v", name, k.Kind, taped, ok, obj)
			continue
		}
		if !taped {
			continue
		}
		if !reflect.DeepEqual(got, generic) {
			t.Errorf("%s as %s: DecodeTape differs from the generic route:\n got %#v\nwant %#v", name, k.Kind, got, generic)
		}
		want := k.New()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, want); err != nil {
			t.Errorf("%s as %s: DecodeTape succeeded where the converter failed: %v", name, k.Kind, err)
		} else if k.Spec != nil {
			if !proto.Equal(k.Spec(got), k.Spec(want)) {
				t.Errorf("%s as %s: DecodeTape's spec differs from the converter's:\n got %v\nwant %v", name, k.Kind, k.Spec(got), k.Spec(want))
			}
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s as %s: DecodeTape differs from the converter:\n got %#v\nwant %#v", name, k.Kind, got, want)
		}
		if k.Kind == kinds.VirtualService {
			if w, want := load.TapeWeightsSet(tape), graph.WeightsSetOf(obj); !reflect.DeepEqual(w, want) {
				t.Errorf("%s: WeightsSet from the tape %+v, from the object %+v", name, w, want)
			}
		}
	}
}

// repoFiles returns every .yaml/.yml/.json file under the repository's
// testdata and examples.
func repoFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, in := range repositoryInputs(t) {
		files[in.Path] = in.Data
	}
	if len(files) < 50 {
		t.Fatalf("found only %d files under testdata and examples", len(files))
	}
	return files
}

// seedBundles extracts the YAML embedded in the shared seed documents, when
// the shared folder sits beside the repository (it does on developer machines
// and in CI): from each `apiVersion:` line up to the next prose line.
func seedBundles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var paths []string
	for _, dir := range []string{"../../../shared/seeds", "../../../../shared/seeds"} {
		if m, _ := filepath.Glob(filepath.Join(dir, "*.txt")); len(m) > 0 {
			paths = m
			break
		}
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("reading seed: %v", err)
		}
		var cur []string
		n := 0
		flush := func() {
			if len(cur) > 0 {
				out[fmt.Sprintf("%s#%d", filepath.Base(path), n)] = []byte(strings.Join(cur, "\n") + "\n")
				n++
			}
			cur = nil
		}
		for _, line := range strings.Split(string(data), "\n") {
			yamlish := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "---") ||
				strings.HasPrefix(line, "#") || line == "" || strings.Contains(line, ": ") || strings.HasSuffix(line, ":")
			switch {
			case strings.HasPrefix(line, "apiVersion:") && len(cur) == 0:
				cur = append(cur, line)
			case len(cur) > 0 && yamlish && !strings.Contains(line, ". "):
				cur = append(cur, line)
			default:
				flush()
			}
		}
		flush()
	}
	return out
}

// TestFastYAMLDifferential runs both paths over every document of the
// repository's YAML, the seeds' YAML and generated corpora, and checks the
// contract on each, plus the fast path's coverage.
func TestFastYAMLDifferential(t *testing.T) {
	var docs, fast int
	run := func(name string, data []byte) {
		for i, c := range load.SplitDocuments(data) {
			if _, clean := load.SlowDecode(c, fastyaml.DefaultMaxNodes); clean {
				docs++
			}
			if checkChunk(t, fmt.Sprintf("%s#%d", name, i), c, fastyaml.DefaultMaxNodes) {
				fast++
			}
		}
	}
	for name, data := range repoFiles(t) {
		run(name, data)
	}
	t.Logf("repository files: %d of %d clean documents took the fast path", fast, docs)
	repoDocs, repoFast := docs, fast
	seeds := seedBundles(t)
	for name, data := range seeds {
		run(name, data)
	}
	if len(seeds) == 0 {
		t.Log("shared seeds not found beside the repository; their YAML was not checked")
	} else {
		t.Logf("seeds: %d of %d clean documents took the fast path", fast-repoFast, docs-repoDocs)
	}
	if repoFast*100 < repoDocs*95 {
		t.Errorf("only %d of %d clean repository documents took the fast path (want ≥ 95%%)", repoFast, repoDocs)
	}

	for _, o := range []corpus.Options{
		{Rollouts: 300, Seed: 1},
		{Rollouts: 300, Seed: 2, MistakeRate: 0.2},
		{Rollouts: 200, Seed: 3, MistakeRate: 1, PerFile: 7},
	} {
		docs, fast = 0, 0
		for _, in := range corpus.Generate(o) {
			run(fmt.Sprintf("corpus(seed %d)/%s", o.Seed, in.Path), in.Data)
		}
		t.Logf("corpus seed %d mistakes %.1f: %d of %d documents took the fast path", o.Seed, o.MistakeRate, fast, docs)
		if docs == 0 || fast*100 < docs*99 {
			t.Errorf("corpus seed %d: %d of %d documents took the fast path, want ≥ 99%%", o.Seed, fast, docs)
		}
	}
}

// TestFastYAMLDeclines lists constructs the fast path must leave to the slow
// path.
func TestFastYAMLDeclines(t *testing.T) {
	cases := map[string]string{
		"empty":                       "",
		"comment only":                "# nothing\n",
		"root sequence":               "- a\n- b\n",
		"root scalar":                 "hello\n",
		"tab indentation":             "a:\n\tb: 1\n",
		"tab in value":                "a: b\tc\n",
		"anchor":                      "a: &x 1\nb: 2\n",
		"alias":                       "a: 1\nb: *x\n",
		"tag":                         "a: !!str 1\n",
		"complex key":                 "? a\n: b\n",
		"merge key":                   "base: {a: 1}\n<<: {b: 2}\n",
		"quoted merge key":            "\"<<\": 1\n",
		"directive":                   "%YAML 1.2\n---\na: 1\n",
		"multi-line plain key":        "a: one\n  two: x\n",
		"plain after comment":         "a: one # c\n  two\n",
		"plain after comment line":    "a: one\n  # c\n  two\n",
		"plain then dash":             "a: one\n  - two\n",
		"template across fold":        "a: x {{\n  .Values.y }}\n",
		"multi-line quoted":           "a: \"one\n  two\"\n",
		"multi-line single":           "a: 'one\n  two'\n",
		"multi-line flow":             "a: [1,\n  2]\n",
		"flow with empty":             "a: {b: }\n",
		"flow key only":               "a: {b}\n",
		"flow trailing comma":         "a: [1, 2,]\n",
		"flow mapping in seq":         "a: [b: 1]\n",
		"helm action":                 "a: {{ .Values.x }}\n",
		"helm in plain":               "a: x-{{ .Values.x }}\n",
		"helm include":                "a: x {{- include \"y\" . }}\n",
		"duplicate key":               "a: 1\nb: 2\na: 3\n",
		"duplicate flow key":          "a: {b: 1, b: 2}\n",
		"duplicate quoted":            "a: 1\n\"a\": 2\n",
		"invalid utf8":                "a: \xff\xfe\n",
		"control character":           "a: b\x01\n",
		"byte order mark":             "\xef\xbb\xbfa: 1\n",
		"lone CR":                     "a: 1\rb: 2\n",
		"NEL":                         "a: x\u0085y\n",
		"key without space":           "a:1\n",
		"nested map value":            "a: b: c\n",
		"value ends in colon":         "a: b:\n",
		"dash value":                  "a: - b\n",
		"compact nested seq":          "a:\n- - b\n",
		"bad indentation":             "a:\n    b: 1\n  c: 2\n",
		"deeper sibling":              "a: 1\n  b: 2\n",
		"scalar on next line":         "a:\n  b\n",
		"indent indicator":            "a: |2\n   x\n",
		"empty block scalar":          "a: |\nb: 1\n",
		"block more indented leading": "a: |\n      \n    x\n",
		"unknown escape":              "a: \"\\/\"\n",
		"surrogate escape":            "a: \"\\ud800\"\n",
		"escaped line break":          "a: \"x\\\n  y\"\n",
		"trailing junk":               "a: \"x\" y\n",
		"second document":             "a: 1\n---\nb: 2\n",
		"document end":                "a: 1\n...\n",
		"marker with content":         "--- a: 1\n",
		"reserved start":              "a: @x\n",
		"backquote start":             "a: `x`\n",
		"long key":                    strings.Repeat("k", 1100) + ": 1\n",
		"comma start":                 "a: ,x\n",
		"hash without space":          "a: \"x\"#c\n",
		"too deep":                    strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
		"deep block":                  deepBlock(120),
		"seq item sibling":            "a:\n  - b\n  c: 1\n",
		"block seq in map":            "a: 1\n- b\n",
	}
	for name, doc := range cases {
		if v, ok := fastyaml.Decode([]byte(doc)); ok {
			t.Errorf("%s: accepted %q as %#v; want a decline", name, doc, v)
		}
	}
}

func deepBlock(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%sk:\n", strings.Repeat(" ", i))
	}
	fmt.Fprintf(&b, "%sk: v\n", strings.Repeat(" ", n))
	return b.String()
}

// TestFastYAMLAccepts lists supported constructs: each must be accepted and
// equal the slow path's value.
func TestFastYAMLAccepts(t *testing.T) {
	cases := map[string]string{
		"block mapping":         "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  labels:\n    app: b\n",
		"leading marker":        "---\na: 1\n",
		"marker comment":        "--- # first\na: 1\n",
		"block sequence":        "a:\n  - x\n  - y\n",
		"indentless sequence":   "a:\n- x\n- y\nb: 1\n",
		"compact mappings":      "a:\n- name: x\n  port: 80\n- name: y\n  port: 81\n",
		"wide compact mapping":  "a:\n  -   name: x\n      port: 80\n",
		"nested compact":        "a:\n- b:\n  - c: 1\n    d: 2\n  e: 3\n",
		"seq item on next line": "a:\n-\n  b: 1\n- \n",
		"null values":           "a:\nb: ~\nc: null\nd: Null\ne:\n  # only a comment\nf: 1\n",
		"booleans":              "a: true\nb: False\nc: yes\nd: no\ne: on\nf: off\ng: y\nh: n\ni: TRUE\n",
		"integers":              "a: 1\nb: -5\nc: 0\nd: 0x1F\ne: 0o17\nf: 0777\ng: 1_000\nh: +3\ni: 080\nj: 123456789012345678901\nk: 0b101\n",
		"floats":                "a: 1.5\nb: 1.0\nc: 1e3\nd: .5\ne: .inf\nf: -.inf\ng: .nan\nh: 1e400\ni: 6.02e23\n",
		"strings":               "a: 5m\nb: 1.0.0\nc: 2024-01-01\nd: 2024-01-01T10:00:00Z\ne: http://x:90/y\nf: a#b\ng: a  b\n",
		"quoted":                "a: \"x: y # z\"\nb: 'it''s'\nc: \"\"\nd: ''\ne: \"1\"\nf: 'true'\n",
		"escapes":               "a: \"t\\tn\\nq\\\"b\\\\u\\u00e9U\\U0001F600x\\x41 0\\0 e\\e N\\N _\\_ L\\L P\\P\"\n",
		"comments":              "# head\na: 1 # one\n  # indented comment\nb: # nothing\n  c: 2\n",
		"blank lines":           "a: 1\n\n\nb:\n\n  c: 2\n",
		"flow":                  "a: {app: checkout, tier: web}\nb: [x, y, 'z', \"w\"]\nc: {}\nd: []\ne: [{name: http, port: 80}, {name: grpc, port: 81}]\nf: {x: [1, 2], y: {z: 1}}\n",
		"json line":             "{\"apiVersion\": \"v1\", \"kind\":\"Service\", \"metadata\": {\"name\": \"x\"}}\n",
		"literal":               "a: |\n  line one\n  line two\n\n  after blank\nb: 1\n",
		"literal strip":         "a: |-\n  x\n  y\n\n\nb: 1\n",
		"literal keep":          "a: |+\n  x\n\n\nb: 1\n",
		"folded":                "a: >\n  one\n  two\n\n  three\n    indented\n  four\nb: 1\n",
		"folded strip":          "a: >-\n  one\n  two\n",
		"folded keep":           "a: >+\n  one\n\n",
		"literal at end no NL":  "a: |\n  x\n  y",
		"literal comment lines": "a: |\n  # not a comment\n  x\n# a comment\nb: 1\n",
		"literal spaces line":   "a: |\n  x\n     \n  y\n",
		"literal in seq":        "a:\n- |\n  x\n- >-\n  y\n  z\n",
		"block scalar comment":  "a: | # note\n  x\n",
		"crlf":                  "a: 1\r\nb:\r\n  c: |\r\n    x\r\n    y\r\n  d: 'q'\r\n",
		"argo placeholder":      "q: sum(rate(x{a=\"{{args.name}}\"}[5m]))\n",
		"indented root":         "  a: 1\n  b: 2\n",
		"spaces before colon":   "a  : 1\n",
		"dash keys":             "-x: 1\n-: 2\n",
		"unicode":               "a: héllo ☃ 😀\n",
		"quoted keys":           "\"a b\": 1\n'c': 2\n",
		"multi-line plain":      "a: one\n  two\n\n  three\n   four  \n\n\nb: 1\n",
		"multi-line in seq":     "s:\n- a\n  b\n- c\n   d # c\nt:\n  - k: a\n      b\n    j: 2\n",
		"multi-line numbers":    "a: 1\n  2\nb: x\n  y#z\n",
	}
	for name, doc := range cases {
		if !checkChunk(t, name, []byte(doc), fastyaml.DefaultMaxNodes) {
			slow, clean := load.SlowDecode([]byte(doc), fastyaml.DefaultMaxNodes)
			t.Errorf("%s: declined %q (slow path: clean=%v %#v)", name, doc, clean, slow)
		}
	}
}

// TestFastYAMLMutations damages real documents one edit at a time (an
// indicator, a comment, a quote, a break, an indentation change inserted at
// each position, or a byte removed) and checks the contract on every result:
// most mutants must be declined or decoded exactly like the slow path.
func TestFastYAMLMutations(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a # c\n  labels: {app: b, 'x': \"y\"}\nspec:\n  ports:\n  - name: http\n    port: 80\n",
		"a:\n- b: |\n    x\n     y\n\n  c: >-\n    p\n    q\n- [1, 2.5, -3]\nd: 'e'\n",
	}
	for i, in := range corpus.Generate(corpus.Options{Rollouts: 2, Seed: 11}) {
		for j, c := range load.SplitDocuments(in.Data) {
			if (i+j)%3 == 0 {
				docs = append(docs, string(c))
			}
		}
	}
	edits := []string{" ", "  ", "#", " #", ":", ": ", "- ", "-", "'", "\"", "|", ">", "{", "[", "]", ",", "\n", "\n  ", "\r\n", "&a ", "*a", "!t ", "? ", "<<: ", "\\", "{{ .x }}", "\t", "\u00e9", "---\n", "~"}
	step := 3 // every position takes 11 s on a shared 2-core machine
	if testing.Short() {
		step = 9
	}
	var checked, accepted int
	for d, doc := range docs {
		for pos := 0; pos <= len(doc); pos += step {
			for _, e := range edits {
				m := doc[:pos] + e + doc[pos:]
				checked++
				if checkChunk(t, fmt.Sprintf("doc %d insert %q at %d", d, e, pos), []byte(m), fastyaml.DefaultMaxNodes) {
					accepted++
				}
			}
			if pos < len(doc) {
				m := doc[:pos] + doc[pos+1:]
				checked++
				if checkChunk(t, fmt.Sprintf("doc %d delete at %d", d, pos), []byte(m), fastyaml.DefaultMaxNodes) {
					accepted++
				}
			}
		}
	}
	t.Logf("%d mutants, %d accepted by the fast path", checked, accepted)
}

// TestFastYAMLNodeBudget checks the node count against the slow path's
// converter: a budget one below the count declines, the count itself passes.
func TestFastYAMLNodeBudget(t *testing.T) {
	doc := []byte("a: 1\nb: [1, 2, {c: 3}]\nd:\n- e: f\n  g:\nh: |\n  x\n")
	// Nodes: root, a, b, 1, 2, {c}, 3, d, item map, f, g(null), h = 12.
	const nodes = 12
	if _, clean := load.SlowDecode(doc, nodes); !clean {
		t.Fatalf("slow path rejects the document at %d nodes", nodes)
	}
	if _, clean := load.SlowDecode(doc, nodes-1); clean {
		t.Fatalf("slow path accepts the document at %d nodes", nodes-1)
	}
	if !checkChunk(t, "budget", doc, nodes) {
		t.Errorf("declined within the budget")
	}
	if _, ok := fastyaml.DecodeLimit(doc, nodes-1); ok {
		t.Errorf("accepted over the budget")
	}
}

// FuzzFastYAML checks the contract on arbitrary input: no panic, and an
// accepted document equals the slow path's value.
func FuzzFastYAML(f *testing.F) {
	seeds := []string{
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  ports: [{name: http, port: 80}]\n",
		"a: 1\r\nb:\r\n- c\r\n",
		"a: \xc3\x28\n",
		"a:\n" + strings.Repeat("  ", 50) + "b: 1\n",
		"a: |\n  x\n   y\n  z\n",
		"a: |-\n\n  x\n",
		"a: >\n  x\n\n   y\n  z\n",
		"a: |+\n  x\n  \n \n",
		"a: \"x # y\" # z\n",
		"a: 'x # y'#z\n",
		"a:b\n",
		"- a\n",
		"-x: 1\n",
		"a: x  \nb: y \n",
		"a:\n  - b\n  -c\n",
		"a: [x, {y: [z]}]\n",
		"a: {\"b\":1}\n",
		"a: \"\\x41\\u00e9\"\n",
		"a: \xe2\x82\nb: \xf0\x9f\x98\n",
		"a: " + strings.Repeat("[", 120) + strings.Repeat("]", 120) + "\n",
		"a: |\n    x\n  y\n    z\n",
		"a: |\n  x\n\ty\n",
		"a: >\n\n  x\n  \n   y\nb: |+\n",
		"a: \"q#\" #c\nb: 'q #' # c\nc: q#q #c\n",
		"a: b   \n- c  \n",
		"a:\n -x\n - y\n",
		"\r\n\r\na: 1\r\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("../../testdata/rules/*/*.yaml")
	for i, path := range files {
		if i%8 != 0 {
			continue
		}
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Count(data, []byte("\n")) > 2000 {
			return
		}
		start := time.Now()
		fastyaml.DecodeLimit(data, 5000)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("fast path took %v", d)
		}
		start = time.Now()
		load.SlowDecode(data, 5000)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("slow path took %v", d)
		}
		checkChunk(t, "fuzz", data, 5000)
	})
}

// BenchmarkFastYAML compares the fast decoder with the slow path (yaml.v3
// nodes, the loader's checks and conversion) on generated corpus documents,
// with its maps recycled as the loader does, and reading a few fields again
// (parsed or skipped); one op is one document, so ns/op, B/op and allocs/op
// are per document.
func BenchmarkFastYAML(b *testing.B) {
	var chunks [][]byte
	for _, in := range corpus.Generate(corpus.Options{Rollouts: 400, Seed: 7, MistakeRate: 0.1}) {
		for _, c := range load.SplitDocuments(in.Data) {
			if _, clean := load.SlowDecode(c, fastyaml.DefaultMaxNodes); clean {
				chunks = append(chunks, c) // not the empty chunk after a final ---
			}
		}
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		cpu := int64(proccpu.Self())
		for i := 0; b.Loop(); i++ {
			if _, ok := fastyaml.Decode(chunks[i%len(chunks)]); !ok {
				b.Fatal("declined a corpus document")
			}
		}
		b.ReportMetric(float64(int64(proccpu.Self())-cpu)/float64(b.N), "cpu-ns/op")
	})
	// The loader's way: decode, then hand the maps back for the next document.
	b.Run("fast-recycled", func(b *testing.B) {
		b.ReportAllocs()
		cpu := int64(proccpu.Self())
		for i := 0; b.Loop(); i++ {
			obj, ok := fastyaml.DecodeShared(chunks[i%len(chunks)], fastyaml.DefaultMaxNodes)
			if !ok {
				b.Fatal("declined a corpus document")
			}
			fastyaml.Recycle(obj)
		}
		b.ReportMetric(float64(int64(proccpu.Self())-cpu)/float64(b.N), "cpu-ns/op")
	})
	// A few fields read again, as the Rego input does: parsing what is not
	// selected, or skipping it by indentation (the document was accepted).
	sel := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{
		"metadata": {Sub: map[string]*fastyaml.Fields{"name": nil}},
		"spec":     {Sub: map[string]*fastyaml.Fields{"replicas": nil, "selector": nil}},
	}}
	b.Run("fields-parsed", func(b *testing.B) {
		b.ReportAllocs()
		cpu := int64(proccpu.Self())
		for i := 0; b.Loop(); i++ {
			if _, ok := fastyaml.DecodeSharedFields(chunks[i%len(chunks)], sel); !ok {
				b.Fatal("declined a corpus document")
			}
		}
		b.ReportMetric(float64(int64(proccpu.Self())-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("fields-skipped", func(b *testing.B) {
		b.ReportAllocs()
		cpu := int64(proccpu.Self())
		for i := 0; b.Loop(); i++ {
			if _, ok := fastyaml.DecodeAcceptedFields(chunks[i%len(chunks)], sel); !ok {
				b.Fatal("declined a corpus document")
			}
		}
		b.ReportMetric(float64(int64(proccpu.Self())-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("slow", func(b *testing.B) {
		b.ReportAllocs()
		cpu := int64(proccpu.Self())
		for i := 0; b.Loop(); i++ {
			if _, ok := load.SlowDecode(chunks[i%len(chunks)], fastyaml.DefaultMaxNodes); !ok {
				b.Fatal("slow path rejected a corpus document")
			}
		}
		b.ReportMetric(float64(int64(proccpu.Self())-cpu)/float64(b.N), "cpu-ns/op")
	})
}

// FuzzDecodeTape is FuzzFastYAML seeded with the typed kinds DecodeTape
// decodes (Rollouts, Services, AnalysisTemplates of generated corpora, with
// mistakes), so that its mutants exercise the typed decoder against the
// converter (checkTyped) as much as the tape against Decode.
func FuzzDecodeTape(f *testing.F) {
	for _, in := range corpus.Generate(corpus.Options{Rollouts: 4, Seed: 5, MistakeRate: 0.3}) {
		for _, c := range load.SplitDocuments(in.Data) {
			if obj, ok := fastyaml.Decode(c); ok {
				if kind, _ := obj["kind"].(string); kinds.TapeKind(kind) {
					f.Add(c)
				}
			}
		}
	}
	for _, doc := range leafDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Count(data, []byte("\n")) > 2000 {
			return
		}
		checkChunk(t, "fuzz", data, 5000)
	})
}

// leafDocs hold the scalars, string maps and string lists DecodeTape stores
// without reflection, each in forms it stores and forms it leaves to the
// reflective walk: out-of-range and negative integers, plain .inf text,
// nulls, invalid UTF-8, values of the wrong kind.
var leafDocs = []string{
	"apiVersion: v1\nkind: Service\nmetadata: {name: s, labels: {a: b, c: null, d: ''}}\n" +
		"spec: {ports: [{port: 80, targetPort: 8080, nodePort: -3}, {port: 4294967297, targetPort: http}], " +
		"publishNotReadyAddresses: true, externalIPs: [a, null, b], allocateLoadBalancerNodePorts: false}\n",
	"apiVersion: v1\nkind: Service\nmetadata: {name: s, labels: {a: .inf}}\nspec: {ports: [{port: 80, targetPort: 2147483648}]}\n",
	"apiVersion: v1\nkind: Service\nmetadata: {name: s, labels: {a: 1}}\nspec: {externalIPs: [a, 1]}\n",
	"apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {externalIPs: [.nan], ports: [{port: true, targetPort: -2147483648}]}\n",
	"apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {externalIPs: {a: b}, selector: [a], publishNotReadyAddresses: 1}\n",
	"apiVersion: v1\nkind: Service\nmetadata: {name: \"\\xff\", labels: {}}\nspec: {externalIPs: [], ports: [{port: 1, targetPort: \"\\xff\"}]}\n",
	"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec:\n  replicas: -5\n  revisionHistoryLimit: 9999999999\n" +
		"  paused: true\n  selector: {matchLabels: {app: r}}\n  strategy:\n    canary:\n      dynamicStableScale: false\n" +
		"      maxSurge: 25%\n      maxUnavailable: 0\n      steps: [{setWeight: 2147483648}, {pause: {duration: 1h}}, {pause: {duration: 30}}]\n",
	"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec: {replicas: 1.0, paused: yes, strategy: {canary: {maxSurge: 5000000000}}}\n",
	// Istio's integers, enums and singular messages: documents DecodeTape
	// takes, then one refused value each.
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: a, subset: s, port: {number: 8080}}, weight: 90}, {destination: {host: b, port: {number: 4294967295}}, weight: -2147483648}]\n" +
		"    timeout: 5s\n    retries: {attempts: 3, perTryTimeout: 1s}\n  - route: [{destination: null}, {destination: {host: c, port: null}, weight: 0}]\n",
	"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d}\nspec:\n  host: a\n  trafficPolicy: {loadBalancer: {simple: ROUND_ROBIN}, tls: {mode: ISTIO_MUTUAL}}\n  subsets: [{name: v1, labels: {v: '1'}, trafficPolicy: {loadBalancer: {simple: LEAST_REQUEST}}}]\n",
	"apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: g}\nspec:\n  selector: {istio: ingressgateway}\n  servers: [{port: {number: 443, name: https, protocol: HTTPS}, hosts: [a], tls: {mode: SIMPLE, credentialName: c}}]\n",
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: b, port: {number: -1}}}]\n",
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: a, port: {number: 4294967296}}}]\n",
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: a}, weight: 2147483648}]\n",
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: a, port: {number: '80'}}}]\n",
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: a}, weight: '5'}]\n",
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: [a]}]\n",
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: a, port: {number: 1.5}}}]\n",
	"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec:\n  hosts: [a]\n  http:\n  - route: [{destination: {host: a, bogus: 1}}]\n",
	"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d}\nspec:\n  host: a\n  trafficPolicy: {loadBalancer: {simple: BOGUS}}\n",
	"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d}\nspec:\n  host: a\n  trafficPolicy: {loadBalancer: {simple: 1}}\n",
	"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d}\nspec:\n  host: a\n  trafficPolicy: {tls: {mode: .inf}}\n",
	"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: d}\nspec:\n  host: a\n  trafficPolicy: {tls: {mode: \"\\xff\"}}\n",
	// A mapping for a struct with its own decoding (IntOrString, a Quantity,
	// a Time) once made DecodeTape dereference the plan such a type has not.
	"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r, creationTimestamp: {a: 1}}\nspec: {strategy: {canary: {maxSurge: {a: 1}}}}\n",
	"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec: {replicas: '3', strategy: {canary: {maxSurge: [1], steps: [{pause: {duration: null}}]}}}\n",
}

// TestDecodeTapeLeaves holds DecodeTape's direct stores to the generic
// route (checkChunk's checkTyped) on leafDocs.
func TestDecodeTapeLeaves(t *testing.T) {
	for i, doc := range leafDocs {
		if !checkChunk(t, fmt.Sprintf("leafDocs[%d]", i), []byte(doc), 5000) {
			t.Errorf("leafDocs[%d] is not taped:\n%s", i, doc)
		}
	}
}
