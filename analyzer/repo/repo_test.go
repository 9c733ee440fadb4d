package repo_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/repo"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
	"github.com/rolloutlint/rolloutlint/rules/ruletest"
)

const repos = "../../testdata/repos"

func options(root string) repo.Options {
	return repo.Options{
		Analyzer: analyzer.Options{Rules: all.Rules(), Mode: rules.ModeCLI, Globals: rules.Globals{IstioVersion: "1.28"}},
		RepoRoot: root,
	}
}

func lint(t *testing.T, root string, paths ...string) *analyzer.Result {
	t.Helper()
	rep, err := repo.Lint(paths, options(root))
	if err != nil {
		t.Fatal(err)
	}
	return rep.Result
}

// wantsUnder reads every `# want` comment of a tree.
func wantsUnder(t *testing.T, dir string) []*ruletest.Want {
	t.Helper()
	var out []*ruletest.Want
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		ws, err := ruletest.ParseWants(p, data)
		out = append(out, ws...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkWants matches findings with the `# want` comments of the tree: each
// want needs a finding on its line, and every finding needs a want.
func checkWants(t *testing.T, res *analyzer.Result, dir string) {
	t.Helper()
	wants := wantsUnder(t, dir)
	matched := make([]bool, len(wants))
	for _, d := range res.Active() {
		ok := false
		for i, w := range wants {
			if !matched[i] && filepath.Clean(w.File) == filepath.Clean(d.Pos.File) && w.Line == d.Pos.Line && w.Pattern.MatchString(d.FullMessage()) {
				matched[i], ok = true, true
				break
			}
		}
		if !ok {
			t.Errorf("unexpected %s at %s: %s", d.RuleID, d.Pos, d.FullMessage())
		}
	}
	for i, w := range wants {
		if !matched[i] {
			t.Errorf("%s:%d: no finding matching %q", w.File, w.Line, w.Pattern)
		}
	}
}

// userFilesOnly fails on any position that is not a file on disk inside
// the tree (a renderer's output, a temporary file).
func userFilesOnly(t *testing.T, res *analyzer.Result, dir string) {
	t.Helper()
	check := func(file string, line int, what string) {
		st, err := os.Stat(file)
		if err != nil || st.IsDir() || !strings.HasPrefix(filepath.Clean(file), filepath.Clean(dir)) {
			t.Errorf("%s points at %s:%d, not a file of the repository", what, file, line)
			return
		}
		data, _ := os.ReadFile(file)
		if n := strings.Count(string(data), "\n") + 1; line < 1 || line > n {
			t.Errorf("%s points at %s:%d, past the file's %d lines", what, file, line, n)
		}
	}
	for _, d := range res.Diagnostics {
		check(d.Pos.File, d.Pos.Line, d.RuleID)
		for _, r := range d.Related {
			check(r.File, r.Line, d.RuleID+" related location")
		}
	}
}

// TestMixedRepository lints a repository holding a Kustomize base with
// dev, prod and staging overlays, a Helm chart with a vendored dependency,
// Argo CD Applications for them and for two plain directories deploying to
// one namespace, and YAML that is not Kubernetes (CI pipelines,
// docker-compose, OpenAPI): the seeded mistakes are found at their lines
// and nothing else is reported.
func TestMixedRepository(t *testing.T) {
	dir := filepath.Join(repos, "mixed")
	res := lint(t, dir, dir)
	checkWants(t, res, dir)
	userFilesOnly(t, res, dir)
	related := func(file string, line int) bool {
		for _, d := range res.Diagnostics {
			for _, r := range d.Related {
				if strings.HasSuffix(r.File, file) && r.Line == line {
					return true
				}
			}
		}
		return false
	}
	// The JSON 6902 patch's finding names the base value it replaced; the
	// template's names the values file item the range read.
	if !related("kustomize/checkout/base/rollout.yaml", 33) {
		t.Error("the prod weight finding does not relate the base's setWeight (rollout.yaml:33)")
	}
	if !related("charts/reviews/values-prod.yaml", 3) {
		t.Error("the chart weight finding does not relate values-prod.yaml:3")
	}
}

// TestPublicExampleShapes lints fixtures laid out like public example
// repositories (a rollouts demo with one kustomization per example, Argo
// CD's example apps with a plain directory, a chart, a kustomization and an
// app-of-apps chart, Istio's bookinfo): nothing is wrong in them, so
// nothing is reported. Linted as files, the same trees draw errors on
// kustomization.yaml and the templates.
func TestPublicExampleShapes(t *testing.T) {
	for _, name := range []string{"rollouts-demo", "argocd-example-apps", "bookinfo"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(repos, name)
			res := lint(t, dir, dir)
			for _, d := range res.Active() {
				t.Errorf("%s at %s: %s", d.RuleID, d.Pos, d.Message)
			}
			if res.Summary.Objects == 0 {
				t.Error("no object linted")
			}
		})
	}
}

// TestGivenFiles is the pre-commit case: a changed file is linted with the
// whole of its unit, and only findings on it, or on objects rendered from
// it, are reported.
func TestGivenFiles(t *testing.T) {
	dir := filepath.Join(repos, "mixed")
	cases := []struct {
		file string
		want []string // rule and file:line of every finding
	}{
		{"kustomize/checkout/overlays/prod/weights.yaml", []string{"RL1001 kustomize/checkout/overlays/prod/weights.yaml:7"}},
		// Values files: the finding is in the template rendered with them.
		{"charts/reviews/values-prod.yaml", []string{"RL1001 charts/reviews/templates/rollout.yaml:34"}},
		// The Application deploying the chart.
		{"apps/reviews.yaml", []string{"RL1001 charts/reviews/templates/rollout.yaml:34"}},
		// The staging overlay breaks references written in the base.
		{"kustomize/checkout/overlays/staging/kustomization.yaml", []string{
			"RL2019 kustomize/checkout/base/rollout.yaml:22", "RL2019 kustomize/checkout/base/rollout.yaml:23",
			"RL2002 kustomize/checkout/base/rollout.yaml:27", "RL4001 kustomize/checkout/base/rollout.yaml:36",
			"RL3001 kustomize/checkout/base/virtualservice.yaml:12", "RL3001 kustomize/checkout/base/virtualservice.yaml:15"}},
		{"docker-compose.yml", nil},
		{"kustomize/checkout/overlays/dev/fast-steps.yaml", nil},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			res := lint(t, dir, filepath.Join(dir, c.file))
			var got []string
			for _, d := range res.Active() {
				rel, _ := filepath.Rel(dir, d.Pos.File)
				got = append(got, d.RuleID+" "+filepath.ToSlash(rel)+":"+itoa(d.Pos.Line))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	if s == "" {
		return "0"
	}
	return s
}

// Options.Live adds inputs to each bundle, given the bundle's graph: a
// Rollout of the bundle and one added that claim the same route share it.
func TestLiveInputs(t *testing.T) {
	dir := t.TempDir()
	rollout := func(name string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: " + name + ", namespace: shop}\n" +
			"spec:\n  selector: {matchLabels: {app: " + name + "}}\n  template: {metadata: {labels: {app: " + name + "}}}\n" +
			"  strategy: {canary: {trafficRouting: {istio: {virtualService: {name: vs, routes: [primary]}}}}}\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(rollout("a")), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := options(dir)
	calls := 0
	opts.Live = func(g *graph.Graph) ([]load.Input, error) {
		calls++
		if g.Get("Rollout", "shop", "a") == nil {
			t.Error("Live was not given the bundle's graph")
		}
		vs := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: shop}\n" +
			"spec: {hosts: [x], http: [{name: primary, route: [{destination: {host: x}}]}]}\n"
		return []load.Input{
			{Path: graph.LiveFile("Rollout", "shop", "b"), Data: []byte(rollout("b"))},
			{Path: graph.LiveFile("VirtualService", "shop", "vs"), Data: []byte(vs)},
		}, nil
	}
	rep, err := repo.Lint([]string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("Live called %d times for one bundle", calls)
	}
	shared := false
	for _, d := range rep.Result.Diagnostics {
		if d.RuleID == "RL2001" && strings.HasSuffix(d.Pos.File, "a.yaml") && len(d.Related) > 0 && d.Related[0].File == "cluster:Rollout/shop/b" {
			shared = true
		}
	}
	if !shared {
		t.Errorf("no shared route with the added Rollout: %+v", rep.Result.Diagnostics)
	}
	for _, f := range rep.Files() {
		if graph.IsLive(f) {
			t.Errorf("a live object counted as a user file: %s", f)
		}
	}
}

// TestClusterTemplatesAcrossUnits: a ClusterAnalysisTemplate is in the
// cluster for every unit, so a Rollout of an overlay runs one that a plain
// directory holds, and a plain directory's Rollout one that a kustomization
// renders. Their argument checks apply (RL4002 at the shared template, with
// the rendered one's line in its source file); a template no unit defines
// is still RL4001; the borrowed templates are counted once.
func TestClusterTemplatesAcrossUnits(t *testing.T) {
	dir := filepath.Join(repos, "shared-templates")
	res := lint(t, dir, dir)
	checkWants(t, res, dir)
	userFilesOnly(t, res, dir)
	if res.Summary.Objects != 5 {
		t.Errorf("%d objects, want 5 (2 Rollouts, 1 AnalysisTemplate, 2 ClusterAnalysisTemplates)", res.Summary.Objects)
	}
	// The overlay alone is its own bundle, with nothing to borrow from.
	res = lint(t, dir, filepath.Join(dir, "kustomize/shop/overlays/prod"))
	if ds := res.Active(); len(ds) != 1 || ds[0].RuleID != "RL4001" {
		t.Errorf("overlay alone: %v, want one RL4001", ds)
	}
}

// TestAppOfApps: an app-of-apps chart's Applications deploy a Kustomize
// overlay and a chart, an ApplicationSet's list and git directories
// generators make Applications of the tree's directories, each linted as
// its Application deploys it; a generator that needs a cluster and a root
// that deploys itself are info findings at their lines, and every
// position is in a file of the repository.
func TestAppOfApps(t *testing.T) {
	dir := filepath.Join(repos, "appofapps")
	rep, err := repo.Lint([]string{dir}, options(dir))
	if err != nil {
		t.Fatal(err)
	}
	checkWants(t, rep.Result, dir)
	userFilesOnly(t, rep.Result, dir)
	var got []string
	for _, b := range rep.Bundles {
		for _, u := range b.Units {
			if u.App != nil && u.App.Origin != nil {
				got = append(got, u.App.Name+" "+filepath.ToSlash(u.Dir[len(dir)+1:]))
			}
		}
	}
	sort.Strings(got)
	want := []string{
		"cart services/cart", "checkout kustomize/checkout/overlays/prod", "checkout-prod kustomize/checkout/overlays/prod",
		"reviews charts/reviews", "root loop", "search services/search",
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("units of rendered and generated Applications:\n%s\nwant:\n%s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
	// The chart the app of apps deploys is rendered with the child's
	// parameter only, not a second time with its defaults (whose pause,
	// 10m, is valid): one RL1003 per pause step.
	n := 0
	for _, d := range rep.Result.Active() {
		if d.RuleID == "RL1003" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d RL1003 findings, want 2", n)
	}
}

// TestApplicationSetFeatures: an ApplicationSet with Sprig functions, a
// generator's selector, a generator's own template and a templatePatch
// generates the Applications Argo CD would (legacy left out by the
// selector, search deployed twice), each linted as it deploys its
// directory; the GitOps findings on the generated Applications point at
// the ApplicationSet's lines: the templatePatch's, or the generator
// template's where that set the field.
func TestApplicationSetFeatures(t *testing.T) {
	dir := filepath.Join(repos, "appsets")
	rep, err := repo.Lint([]string{dir}, options(dir))
	if err != nil {
		t.Fatal(err)
	}
	checkWants(t, rep.Result, dir)
	userFilesOnly(t, rep.Result, dir)
	var got []string
	for _, b := range rep.Bundles {
		for _, u := range b.Units {
			if u.App != nil && u.App.Origin != nil {
				got = append(got, u.App.Name+" "+u.App.Destination.Namespace+" "+filepath.ToSlash(u.Dir[len(dir)+1:]))
			}
		}
	}
	sort.Strings(got)
	want := []string{"cart-app cart services/cart", "search-app search services/search", "search-canary search-canary services/search"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("units of generated Applications:\n%s\nwant:\n%s", strings.Join(got, ", "), strings.Join(want, ", "))
	}
}
