package layers

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/rolloutlint/rolloutlint/"

// leaf packages import no package of the module.
var leaf = []string{
	"model/fastyaml",
	"internal/parallel", "internal/textdist", "internal/lookalike", "internal/memlimit", "internal/heapsize", "internal/testcert", "internal/recent",
	"internal/version", "internal/proccpu", "internal/fifo",
}

// layer is one row of the table: the packages it holds (a pattern ending in
// /... holds a directory and everything under it) and the module packages
// they may import. The first row whose packages match a package applies, so
// specific rows come before general ones.
type layer struct {
	name     string
	packages []string
	may      []string
}

// layers is the import picture of docs/architecture.md, from the bottom up.
// Keep the two in step.
var layers = []layer{
	{"leaf", leaf, nil},
	{"model", []string{"model/..."}, with(leaf, "model/...")},
	{"semantics", []string{"semantics/..."}, with(leaf, "model/...", "semantics/...")},
	// The rule registry lists the Go rules and adapts the built-in Rego
	// policies, so it sits above policies; the `# want` harness runs rules
	// through the driver.
	{"rule registry", []string{"rules/all"}, with(leaf, "model/...", "semantics/...", "rules/...", "policies")},
	{"rule test harness", []string{"rules/ruletest"}, with(leaf, "model/...", "semantics/...", "rules/...", "policies", "analyzer/...")},
	// A rule reads the model and the semantics and imports only the rule
	// framework (package rules), never another theme or anything above.
	{"rules", []string{"rules", "rules/..."}, with(leaf, "model/...", "semantics/...", "rules")},
	{"policies", []string{"policies/..."}, with(leaf, "model/...", "rules")},
	{"driver", []string{"analyzer/..."}, with(leaf, "model/...", "semantics/...", "rules", "analyzer/...")},
	{"live", []string{"live/..."}, with(leaf, "model/...", "semantics/...", "rules")},
	{"report", []string{"report/..."}, with(leaf, "model/...", "semantics/...", "rules", "rules/ruledoc", "analyzer/...", "report/...")},
	{"webhook", []string{"webhook/..."}, with(leaf, "model/...", "semantics/...", "rules", "analyzer/...", "live/...", "webhook/...")},
	// The docs are rendered from the registry, never through the CLI.
	{"docs generator", []string{"internal/docgen"}, with(leaf, "rules", "rules/ruledoc", "rules/all", "policies")},
	{"benchmark corpus", []string{"internal/corpus"}, with(leaf, "model/...")},
	// The xDS conformance comparer predicts with the model and reads the
	// harness's records; the harness itself (conformance/xds) is a module of
	// its own that imports nothing of this one (it runs the rolloutlint binary).
	{"xds conformance", []string{"internal/xdsconformance"}, with(leaf, "model/...", "semantics/...")},
	{"xds conformance harness", []string{"conformance/..."}, nil},
	// The ApplicationSet conformance comparer expands with model/units and
	// reads the records of conformance/appset (a module of its own).
	{"appset conformance", []string{"internal/appsetconformance"}, with(leaf, "model/...")},
	// Runs a command as a child and reports its rusage, for the
	// benchmark tools.
	{"benchmark support", []string{"internal/childrun"}, with(leaf)},
	{"dev tools", []string{"internal/tools/..."}, with(leaf, "internal/docgen", "internal/corpus", "internal/xdsconformance", "internal/childrun")},
	// The release's image assembler: a module of its own that builds nothing
	// of this one (it packs the built binary).
	{"release tools", []string{"tools/..."}, nil},
	// A real kube-apiserver for end-to-end tests: it runs processes, and
	// imports nothing of the module.
	{"test support", []string{"internal/kubetest"}, nil},
	// Test-only packages: their non-test files import nothing.
	{"test packages", []string{"internal/golden", "internal/ghaction", "internal/layers"}, nil},
	// The command's first import: it raises GOGC before the other
	// packages' initialisers run, so it may import only leaves.
	{"command start", []string{"internal/earlygc"}, with(leaf)},
	{"command", []string{"cmd/..."}, []string{"..."}},
}

// ioPkgs names standard packages that talk to the network or run programs: only
// the live checks, the webhook and the command may (and the test
// certificate maker, which names loopback IPs, the e2e tests' API
// server starter, and the renderer's client of the rolloutlint-helm
// companion, which holds Helm, and internal/childrun, with which the
// benchmark tools time the command as a child process): a rule never does
// I/O.
var ioPkgs = []string{"net", "net/http", "os/exec"}

var ioAllowed = []string{"live/...", "webhook/...", "cmd/...", "internal/testcert", "internal/kubetest", "conformance/...", "model/render/helmrpc",
	"internal/childrun"}

func with(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

// matches reports whether a module-relative package path matches a pattern.
func matches(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

func matchesAny(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if matches(p, pkg) {
			return true
		}
	}
	return false
}

func layerOf(pkg string) *layer {
	for i := range layers {
		if matchesAny(layers[i].packages, pkg) {
			return &layers[i]
		}
	}
	return nil
}

// check returns one message per import the table forbids. imports maps a
// module-relative package path to its imports (full paths).
func check(imports map[string][]string) []string {
	var out []string
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		l := layerOf(pkg)
		if l == nil {
			out = append(out, fmt.Sprintf("%s is in no layer: add it to the table in internal/layers and to docs/architecture.md", pkg))
			continue
		}
		for _, imp := range imports[pkg] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				if !matchesAny(l.may, rel) {
					out = append(out, fmt.Sprintf("%s (%s layer) imports %s (%s layer): the %s layer may import only %s",
						pkg, l.name, rel, layerName(rel), l.name, describe(l.may)))
				}
				continue
			}
			if matchesAny(ioPkgs, imp) && !matchesAny(ioAllowed, pkg) {
				out = append(out, fmt.Sprintf("%s (%s layer) imports %s: only %s may do network or process I/O",
					pkg, l.name, imp, strings.Join(ioAllowed, ", ")))
			}
		}
	}
	return out
}

func layerName(pkg string) string {
	if l := layerOf(pkg); l != nil {
		return l.name
	}
	return "no"
}

func describe(may []string) string {
	if len(may) == 0 {
		return "no package of the module"
	}
	var rest []string
	hasLeaf := true
	for _, l := range leaf {
		if !matchesAny(may, l) {
			hasLeaf = false
		}
	}
	for _, m := range may {
		if hasLeaf && matchesAny(leaf, m) && !strings.HasSuffix(m, "/...") {
			continue
		}
		rest = append(rest, m)
	}
	if hasLeaf {
		rest = append(rest, "the leaf packages")
	}
	return strings.Join(rest, ", ")
}

// moduleImports reads the non-test imports of every package of the module,
// as go list does for this platform.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not at %s: %v", root, err)
	}
	out := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading package %s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			rel = ""
		}
		out[filepath.ToSlash(rel)] = pkg.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayering fails naming every import that runs against the layering of
// docs/architecture.md.
func TestLayering(t *testing.T) {
	t.Parallel()
	imports := moduleImports(t)
	if len(imports) < 30 {
		t.Fatalf("found only %d packages: is the module root right?", len(imports))
	}
	for _, msg := range check(imports) {
		t.Error(msg)
	}
}

// TestCheckNamesTheOffendingImport runs the checker on a made-up import
// graph with one arrow of each forbidden kind.
func TestCheckNamesTheOffendingImport(t *testing.T) {
	t.Parallel()
	got := check(map[string][]string{
		"model/graph":     {module + "model/fastyaml", "sort"},
		"live/promcheck":  {module + "rules", module + "analyzer", "net/http"},
		"internal/docgen": {module + "rules/all", module + "cmd/rolloutlint/cli"},
		"rules/traffic":   {module + "rules", module + "rules/istio"},
		"semantics/plan":  {module + "model/graph", "net/http"},
		"newthing":        nil,
	})
	want := []string{
		"internal/docgen (docs generator layer) imports cmd/rolloutlint/cli (command layer): the docs generator layer may import only rules, rules/ruledoc, rules/all, policies, the leaf packages",
		"live/promcheck (live layer) imports analyzer (driver layer): the live layer may import only model/..., semantics/..., rules, the leaf packages",
		"newthing is in no layer: add it to the table in internal/layers and to docs/architecture.md",
		"rules/traffic (rules layer) imports rules/istio (rules layer): the rules layer may import only model/..., semantics/..., rules, the leaf packages",
		"semantics/plan (semantics layer) imports net/http: only live/..., webhook/..., cmd/..., internal/testcert, internal/kubetest, conformance/..., model/render/helmrpc, internal/childrun may do network or process I/O",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("check:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
