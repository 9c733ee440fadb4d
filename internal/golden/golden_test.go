package golden_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/bundles/")

const bundlesDir = "testdata/bundles"

// messageLink matches an embedded link to a related location, [text](id),
// whose text has no unescaped bracket.
var messageLink = regexp.MustCompile(`\[(?:[^\[\]\\]|\\.)*\]\((\d+)\)`)

// repoRoot finds the module root, so paths in goldens are repository-relative
// whatever directory the test runs in.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// bundle is one directory of manifests under testdata/bundles.
type bundle struct {
	dir    string   // repository-relative, slash-separated
	files  []string // its manifests (not subdirectories, not goldens)
	config string   // its .rolloutlint.yaml, if any
	tree   string   // its tree/ subdirectory, linted as a directory (walked: symlinks, RL0011)
}

// findBundles returns every directory under testdata/bundles holding YAML or
// JSON manifests directly, sorted. Subdirectories are bundles of their own.
func findBundles(t *testing.T) []bundle {
	t.Helper()
	var out []bundle
	err := filepath.WalkDir(bundlesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != bundlesDir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.Name() == treeDir {
			return filepath.SkipDir // linted as a directory with its bundle
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		b := bundle{dir: filepath.ToSlash(path)}
		for _, e := range entries {
			name := e.Name()
			switch {
			case e.IsDir() && name == treeDir:
				b.tree = filepath.Join(path, name)
			case e.IsDir():
			case name == ".rolloutlint.yaml" || name == ".rolloutlint.yml":
				b.config = filepath.Join(path, name)
			case load.IsManifestName(name):
				b.files = append(b.files, filepath.Join(path, name))
			}
		}
		if len(b.files) > 0 {
			sort.Strings(b.files)
			out = append(out, b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", bundlesDir, err)
	}
	return out
}

// treeDir is a bundle's subdirectory passed to lint as a directory, so that
// what only a directory walk meets (a symlink out of it) is covered.
const treeDir = "tree"

// lint runs `rolloutlint lint` on a bundle's files in one format.
func lint(t *testing.T, b bundle, format string) []byte {
	t.Helper()
	args := []string{"lint", "--format", format, "--sarif-root", ".", "--color", "never"}
	if b.config != "" {
		args = append(args, "--config", b.config)
	}
	args = append(args, b.files...)
	if b.tree != "" {
		args = append(args, b.tree)
	}
	var out, errw bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errw)
	if code != cli.ExitOK && code != cli.ExitFindings {
		t.Fatalf("rolloutlint %s: exit %d: %s", strings.Join(args, " "), code, errw.String())
	}
	return out.Bytes()
}

func TestGolden(t *testing.T) {
	root := repoRoot(t)
	t.Chdir(root)
	bundles := findBundles(t)
	if len(bundles) == 0 {
		t.Fatalf("no bundles under %s", bundlesDir)
	}
	schema, err := jsonschema.NewCompiler().Compile("report/testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatalf("compiling the SARIF schema: %v", err)
	}
	// The SARIF run records the absolute source root; goldens keep a
	// placeholder so they do not depend on where the checkout lives.
	rootURI := "file://" + filepath.ToSlash(root) + "/"
	if !strings.HasPrefix(filepath.ToSlash(root), "/") {
		rootURI = "file:///" + filepath.ToSlash(root) + "/"
	}
	catalogue := ruleCatalogue(t)
	defaults := defaultRuleCount()
	for _, b := range bundles {
		t.Run(strings.TrimPrefix(b.dir, bundlesDir+"/"), func(t *testing.T) {
			outputs := map[string][]byte{}
			for _, format := range []string{"text", "json", "sarif"} {
				outputs[format] = lint(t, b, format)
			}
			outputs["sarif"] = bytes.ReplaceAll(outputs["sarif"], []byte(rootURI), []byte("file:///REPOSITORY/"))
			checkSARIF(t, schema, outputs["json"], outputs["sarif"])
			outputs["sarif"] = withoutCatalogue(t, catalogue, outputs["sarif"])
			outputs["text"] = withoutRuleCount(t, "text", outputs["text"], defaults)
			outputs["json"] = withoutRuleCount(t, "json", outputs["json"], defaults)
			for _, format := range []string{"text", "json", "sarif"} {
				compare(t, filepath.Join(b.dir, format+".golden"), outputs[format])
			}
		})
	}
}

// defaultRuleCount is how many registered rules a lint runs when no config or
// flag changes the selection: every built-in rule but the opt-in ones and the
// live ones (which need a system to ask). It is counted from the registry,
// not from a lint's output, so the goldens can be checked against it.
func defaultRuleCount() int {
	n := 0
	for _, r := range all.Rules() {
		if !r.OptIn && r.Source != rules.SourceLive {
			n++
		}
	}
	return n
}

// The enabled-rule count in the text summary line and the JSON summary.
var (
	textRuleCount = regexp.MustCompile(`(, )(\d+)( rules?\n)$`)
	jsonRuleCount = regexp.MustCompile(`(\n    "rules": )(\d+)(\n  }\n}\n)$`)
)

// withoutRuleCount writes the enabled-rule count of a text or JSON output
// relative to the registry's default set ({default}, {default}+2 when a
// bundle's config enables two more rules), so that adding a rule regenerates
// only the goldens of bundles where it fires, while a bundle's own selection
// (the opt-in rules and policies its config adds) stays pinned.
func withoutRuleCount(t *testing.T, format string, out []byte, defaults int) []byte {
	t.Helper()
	re, quote := textRuleCount, ""
	if format == "json" {
		re, quote = jsonRuleCount, `"`
	}
	m := re.FindSubmatchIndex(out)
	if m == nil {
		t.Fatalf("%s output has no enabled-rule count at its end:\n%s", format, out)
	}
	n, _ := strconv.Atoi(string(out[m[4]:m[5]]))
	rel := "{default}"
	if d := n - defaults; d != 0 {
		rel += fmt.Sprintf("%+d", d)
	}
	var b bytes.Buffer
	b.Write(out[:m[4]])
	b.WriteString(quote + rel + quote)
	b.Write(out[m[5]:])
	return b.Bytes()
}

func compare(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v (run: go test ./internal/golden -update)", path, err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run: go test ./internal/golden -update and review the diff):\n%s", path, firstDiff(want, got))
	}
}

// firstDiff shows the first differing line, which is enough to see what moved.
func firstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  golden: %s\n  output: %s", i+1, wl, gl)
		}
	}
	return "(no line differs)"
}

// checkSARIF validates the SARIF against the 2.1.0 schema and checks that
// every result's region is its finding's line and column in the JSON output.
func checkSARIF(t *testing.T, schema *jsonschema.Schema, jsonOut, sarifOut []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sarifOut))
	if err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("SARIF fails the 2.1.0 schema: %v", err)
	}
	var js struct {
		Diagnostics []struct {
			RuleID                           string
			File                             string
			Line, Column, EndLine, EndColumn int
		}
	}
	if err := json.Unmarshal(jsonOut, &js); err != nil {
		t.Fatal(err)
	}
	var sf struct {
		Runs []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
				RelatedLocations []struct {
					ID int `json:"id"`
				} `json:"relatedLocations"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine, StartColumn, EndLine, EndColumn int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(sarifOut, &sf); err != nil {
		t.Fatal(err)
	}
	// GitHub shows a related location only when the message links it: every
	// related location up to the tenth is linked as [text](id), and every link
	// names one.
	for _, r := range sf.Runs[0].Results {
		ids := map[int]bool{}
		for _, rl := range r.RelatedLocations {
			ids[rl.ID] = true
		}
		linked := map[int]bool{}
		for _, m := range messageLink.FindAllStringSubmatch(r.Message.Text, -1) {
			id, _ := strconv.Atoi(m[1])
			if !ids[id] {
				t.Errorf("%s: message links (%d), which is no related location: %s", r.RuleID, id, r.Message.Text)
			}
			linked[id] = true
		}
		for i, rl := range r.RelatedLocations {
			if i < 10 && !linked[rl.ID] {
				t.Errorf("%s: related location %d is not linked from the message: %s", r.RuleID, rl.ID, r.Message.Text)
			}
		}
	}
	// SARIF keeps suppressed findings; JSON lists active ones. Match each JSON
	// finding to a SARIF result in order.
	results := sf.Runs[0].Results
	k := 0
	for _, d := range js.Diagnostics {
		found := false
		for ; k < len(results); k++ {
			r := results[k]
			pl := r.Locations[0].PhysicalLocation
			if r.RuleID == d.RuleID && pl.ArtifactLocation.URI == d.File {
				reg := pl.Region
				if reg.StartLine != d.Line || reg.StartColumn != d.Column || reg.EndLine != d.EndLine || reg.EndColumn != d.EndColumn {
					t.Errorf("%s at %s:%d:%d: SARIF region %+v", d.RuleID, d.File, d.Line, d.Column, reg)
				}
				found = true
				k++
				break
			}
		}
		if !found {
			t.Errorf("JSON finding %s at %s:%d:%d has no SARIF result", d.RuleID, d.File, d.Line, d.Column)
		}
	}
}
