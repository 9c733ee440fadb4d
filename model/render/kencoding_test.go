package render

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// fourDocs is three ConfigMaps and a Rollout, the bad object in document 4.
const fourDocs = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n---\n" +
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c2\n---\n" +
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c3\n---\n" +
	"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: web\nspec:\n  strategy:\n    canary:\n      steps:\n      - setWeight: 120\n"

func utf16With(s string, order binary.AppendByteOrder, bom []byte) string {
	out := append([]byte(nil), bom...)
	for _, u := range utf16.Encode([]rune(s)) {
		out = order.AppendUint16(out, u)
	}
	return string(out)
}

// renderedNames renders a kustomization and lists what it built, with its
// problems as "file:line:col message" relative to dir.
func renderedNames(t *testing.T, dir, unit string) (names, problems []string) {
	t.Helper()
	res := New(Options{}).Render(&units.Unit{Kind: units.Kustomize, Dir: filepath.Join(dir, unit)})
	for _, p := range res.Problems {
		problems = append(problems, short(dir, p.Pos)+" "+p.RuleID+" "+p.Message)
	}
	g := load.Inputs(res.Inputs, load.Options{})
	for _, r := range g.Resources {
		names = append(names, r.Kind+"/"+r.Name)
	}
	return names, problems
}

// TestKustomizeDropsDocumentsOfUTF16AndCRFiles: kustomize builds only the
// first document of a UTF-16 resource file, or one whose lines end in CR
// alone (kyaml cuts documents at "\n---" bytes), and said nothing: the
// Rollout in document 4 was neither deployed nor linted and the lint
// passed. Each is now an RL0010 at the first document not built. A UTF-16
// kustomization, which kustomize reads, was broken by rolloutlint's own
// edit (UTF-8 appended to UTF-16): it builds every object now.
func TestKustomizeDropsDocumentsOfUTF16AndCRFiles(t *testing.T) {
	kust := "resources:\n- r.yaml\n"
	le := utf16With(fourDocs, binary.LittleEndian, []byte{0xff, 0xfe})
	cr := strings.ReplaceAll(fourDocs, "\n", "\r")
	second := strings.Index(cr, "c2\r---\r") + len("c2")
	mixed := cr[:second] + "\n---\n" + cr[second+len("\r---\r"):]
	dir := writeTree(t, map[string]string{
		"le/kustomization.yaml":      kust,
		"le/r.yaml":                  le,
		"be/kustomization.yaml":      kust,
		"be/r.yaml":                  utf16With(fourDocs, binary.BigEndian, []byte{0xfe, 0xff}),
		"cr/kustomization.yaml":      kust,
		"cr/r.yaml":                  cr,
		"mixed/kustomization.yaml":   kust, // LF between documents 2 and 3 only: two pieces
		"mixed/r.yaml":               mixed,
		"lf/kustomization.yaml":      kust,
		"lf/r.yaml":                  fourDocs,
		"crlf/kustomization.yaml":    kust,
		"crlf/r.yaml":                strings.ReplaceAll(fourDocs, "\n", "\r\n"),
		"u16kust/kustomization.yaml": utf16With(kust, binary.LittleEndian, []byte{0xff, 0xfe}),
		"u16kust/r.yaml":             fourDocs,
	})
	all := []string{"ConfigMap/c1", "ConfigMap/c2", "ConfigMap/c3", "Rollout/web"}
	for _, c := range []struct {
		unit     string
		names    []string
		problems []string
	}{
		{"le", all[:1], []string{"le/r.yaml:5:1 RL0010 kustomize does not build this document, nor 2 more of the file: it is UTF-16"}},
		{"be", all[:1], []string{"be/r.yaml:5:1 RL0010 kustomize does not build this document, nor 2 more of the file: it is UTF-16"}},
		{"cr", all[:1], []string{"cr/r.yaml:5:1 RL0010 kustomize does not build this document, nor 2 more of the file: its lines end in CR alone"}},
		{"lf", all, nil},
		{"crlf", all, nil},
		{"u16kust", all, nil},
	} {
		names, problems := renderedNames(t, dir, c.unit)
		if strings.Join(names, " ") != strings.Join(c.names, " ") || strings.Join(problems, "\n") != strings.Join(c.problems, "\n") {
			t.Errorf("%s: built %v, problems\n%s\nwant %v and\n%s", c.unit, names, strings.Join(problems, "\n"), c.names, strings.Join(c.problems, "\n"))
		}
	}
	// "mixed": the LFs around document 3's `---` cut the file in two, and
	// kustomize builds the first document of each piece.
	names, problems := renderedNames(t, dir, "mixed")
	want := "mixed/r.yaml:5:1 RL0010 kustomize does not build this document, nor 1 more of the file: its lines end in CR alone"
	if strings.Join(names, " ") != "ConfigMap/c1 ConfigMap/c3" || strings.Join(problems, "\n") != want {
		t.Errorf("mixed: built %v, problems %q", names, problems)
	}
}

// TestKustomizeFilesAreBoundLikeTheLoaders: kustomize expands every YAML
// alias of the files it reads. A file of small alias bombs, each far under
// the limit, took minutes and gigabytes (1,000 of them: killed at 120 s and
// 9.8 GB), and an alias to a node that contains it overflowed the stack and
// killed the process. Both are now RL0005 at the alias, as the loader
// reports them, and the unit is not built.
func TestKustomizeFilesAreBoundLikeTheLoaders(t *testing.T) {
	bomb := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\ndata:\n" +
		"  a: &a [x,x,x,x,x,x,x,x,x]\n  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
		"  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
	var bombs []string
	for i := 0; i < 30; i++ { // 30 × 66,429 nodes: 2 million
		bombs = append(bombs, strings.Replace(bomb, "%d", itoa(i+1), 1))
	}
	dir := writeTree(t, map[string]string{
		"bombs/kustomization.yaml": "resources:\n- bombs.yaml\n",
		"bombs/bombs.yaml":         strings.Join(bombs, "---\n"),
		"self/kustomization.yaml":  "resources:\n- self.yaml\n",
		"self/self.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  a: &a [*a]\n",
		"key/kustomization.yaml":   "resources:\n- key.yaml\n",
		"key/key.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k\ndata: &d\n  ? *d\n  : x\n",
	})
	for unit, want := range map[string]string{
		"bombs": "bombs/bombs.yaml:141:19 RL0005 YAML aliases in this file expand to more than 1000000 nodes, the limit per file",
		"self":  "self/self.yaml:6:10 RL0005 a YAML alias refers to a node that contains it",
		"key":   "key/key.yaml:6:5 RL0005 a YAML alias refers to a node that contains it",
	} {
		names, problems := renderedNames(t, dir, unit)
		if len(names) != 0 || strings.Join(problems, "\n") != want {
			t.Errorf("%s: built %v, problems\n%s\nwant\n%s", unit, names, strings.Join(problems, "\n"), want)
		}
	}
}

// TestKustomizeErrorsDoNotQuoteSecrets: what kustomize's YAML parser
// quotes of a file that is not a manifest (a token file among the
// resources) is left out, as the loader leaves it out, and so is the text
// of a bad separator line.
func TestKustomizeErrorsDoNotQuoteSecrets(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"anchor/kustomization.yaml":   "resources:\n- token.yaml\n",
		"anchor/token.yaml":           "token: *ghp_SECRET1\n",
		"sep/kustomization.yaml":      "resources:\n- token.yaml\n",
		"sep/token.yaml":              "a: 1\n--- ghp_SECRET2\nb: 2\n",
		"manifest/kustomization.yaml": "resources:\n- cm.yaml\n",
		"manifest/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: *missing}\n",
	})
	for unit, want := range map[string]string{
		"anchor":   "unknown anchor (…) referenced",
		"sep":      "invalid document separator (a --- line followed by text that is not a comment)",
		"manifest": "unknown anchor 'missing' referenced", // a manifest's own names are quoted, as the loader quotes them
	} {
		_, problems := renderedNames(t, dir, unit)
		got := strings.Join(problems, "\n")
		if !strings.Contains(got, want) || strings.Contains(got, "SECRET") {
			t.Errorf("%s: %s\nwant it to say %q and not to quote the file", unit, got, want)
		}
	}
}

// TestHelmValuesErrorsDoNotQuoteSecrets: a values file is not a manifest
// and often holds credentials; what the YAML parsers and Helm quoted of it
// (an unknown anchor's name, the text after a bad `---`) reached the
// finding.
func TestHelmValuesErrorsDoNotQuoteSecrets(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"anchor/Chart.yaml":        "apiVersion: v2\nname: a\nversion: 0.1.0\n",
		"anchor/values.yaml":       "token: *ghp_SECRET1\n",
		"anchor/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"sep/Chart.yaml":           "apiVersion: v2\nname: s\nversion: 0.1.0\n",
		"sep/values.yaml":          "a: 1\n--- ghp_SECRET2\n",
		"sep/templates/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n",
		"given/Chart.yaml":         "apiVersion: v2\nname: g\nversion: 0.1.0\n",
		"given/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: g\n",
		"prod.yaml":                "token: *ghp_SECRET3\n",
	})
	for unit, opts := range map[string]Options{
		"anchor": {},
		"sep":    {},
		"given":  {HelmValueFiles: []string{filepath.Join(dir, "prod.yaml")}},
	} {
		res := New(opts).Render(&units.Unit{Kind: units.Helm, Dir: filepath.Join(dir, unit)})
		var msgs []string
		for _, p := range res.Problems {
			msgs = append(msgs, p.Message)
		}
		got := strings.Join(msgs, "\n")
		if len(msgs) == 0 || strings.Contains(got, "SECRET") {
			t.Errorf("%s: %q: want a problem that does not quote the values file", unit, got)
		}
	}
}
