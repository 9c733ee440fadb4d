package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// planDoc is what these tests read of plan's JSON.
type planDoc struct {
	Rollouts []struct {
		Rollout struct{ Namespace, Name string }
		File    string
		Line    int
		Unit    *struct{ Kind, Dir, Application string }
		States  []struct {
			Phase  string
			Weight int
			Routes []struct {
				VirtualService struct{ Name string } `json:"virtualService"`
			}
		}
		Rejected []struct {
			RuleID string `json:"ruleId"`
			File   string
			Line   int
		}
	}
}

func planJSON(t *testing.T, dir string, args ...string) planDoc {
	t.Helper()
	r := run(t, dir, "", append([]string{"plan", "--config", "/dev/null", "-f", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("plan %v: exit %d: %s", args, r.code, r.err)
	}
	var doc planDoc
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("plan %v: %v\n%s", args, err, r.out)
	}
	return doc
}

// stepWeights are the weights of a plan's step states.
func stepWeights(doc planDoc, i int) []int {
	var out []int
	for _, s := range doc.Rollouts[i].States {
		if s.Phase == "step" {
			out = append(out, s.Weight)
		}
	}
	return out
}

// TestPlanRendersUnits: plan of a repository plans the Rollouts its
// units deploy, each in its own unit's bundle (the base three overlays
// share is planned once per overlay), with names, namespaces and weights
// of the rendered output and positions in the files written.
func TestPlanRendersUnits(t *testing.T) {
	t.Parallel()
	doc := planJSON(t, "../../../testdata/repos/mixed", "kustomize")
	type row struct {
		ns, name, file string
		line           int
		unit           string
	}
	var got []row
	for _, r := range doc.Rollouts {
		u := ""
		if r.Unit != nil {
			u = r.Unit.Kind + " " + r.Unit.Dir
		}
		got = append(got, row{r.Rollout.Namespace, r.Rollout.Name, r.File, r.Line, u})
	}
	base := "kustomize/checkout/base/rollout.yaml"
	want := []row{
		{"checkout-dev", "dev-checkout", base, 4, "kustomize kustomize/checkout/overlays/dev"},
		{"checkout-prod", "checkout", base, 4, "kustomize kustomize/checkout/overlays/prod"},
		{"checkout-staging", "staging-checkout", base, 4, "kustomize kustomize/checkout/overlays/staging"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plans\n got %v\nwant %v", got, want)
	}
	// dev's patch (fast-steps.yaml) replaces the steps; staging keeps the
	// base's; the routes are the renamed VirtualService of each overlay.
	if w := stepWeights(doc, 0); !reflect.DeepEqual(w, []int{50, 50}) {
		t.Errorf("dev step weights %v, want the patch's [50 50]", w)
	}
	if w := stepWeights(doc, 2); !reflect.DeepEqual(w, []int{10, 10, 50, 50, 80, 80}) {
		t.Errorf("staging step weights %v, want the base's", w)
	}
	if rs := doc.Rollouts[0].States[0].Routes; len(rs) == 0 || rs[0].VirtualService.Name != "dev-checkout" {
		t.Errorf("dev routes %+v, want VirtualService dev-checkout (the overlay's namePrefix)", rs)
	}
	// prod's JSON 6902 patch sets setWeight 120: Argo refuses the Rollout,
	// and the finding is at the patch's line, not in the rendered output.
	rj := doc.Rollouts[1].Rejected
	if len(rj) != 1 || rj[0].RuleID != "RL1001" || rj[0].File != "kustomize/checkout/overlays/prod/weights.yaml" || rj[0].Line != 7 {
		t.Errorf("prod rejected %+v, want RL1001 at kustomize/checkout/overlays/prod/weights.yaml:7", rj)
	}
	for _, r := range doc.Rollouts {
		if strings.Contains(r.File, "rendered") || strings.HasPrefix(r.File, "<") {
			t.Errorf("Rollout %s at %s: not a file the user wrote", r.Rollout.Name, r.File)
		}
	}
}

// TestPlanRendersApplicationsAndCharts: the Applications of the
// repository render the chart with their values and namespace.
func TestPlanRendersApplicationsAndCharts(t *testing.T) {
	t.Parallel()
	doc := planJSON(t, "../../../testdata/repos/mixed", ".")
	var reviews, ratings int
	for _, r := range doc.Rollouts {
		if r.Unit == nil {
			t.Errorf("Rollout %s/%s has no unit", r.Rollout.Namespace, r.Rollout.Name)
			continue
		}
		switch r.Unit.Dir {
		case "charts/reviews":
			reviews++
			if r.Rollout.Namespace != "reviews" || r.Rollout.Name != "reviews-reviews" || r.Unit.Application != "argocd/reviews" ||
				r.File != "charts/reviews/templates/rollout.yaml" || r.Line != 4 {
				t.Errorf("reviews: %+v", r)
			}
			// values-prod.yaml (the Application's) sets weight 150 at the template's line.
			if len(r.Rejected) != 1 || r.Rejected[0].File != "charts/reviews/templates/rollout.yaml" || r.Rejected[0].Line != 34 {
				t.Errorf("reviews rejected %+v, want RL1001 at the template's line 34", r.Rejected)
			}
		case "plain/ratings", "plain/ratings-v2":
			ratings++
			if r.Rollout.Namespace != "ratings" || r.Unit.Kind != "directory" {
				t.Errorf("ratings: %+v, want namespace ratings from the Application", r)
			}
		}
	}
	if reviews != 1 || ratings != 2 || len(doc.Rollouts) != 6 {
		t.Errorf("%d plans (%d reviews, %d ratings), want 6 (1, 2)", len(doc.Rollouts), reviews, ratings)
	}
	// Without the Application, the chart renders with its own values.
	own := planJSON(t, "../../../testdata/repos/mixed", "charts/reviews")
	if len(own.Rollouts) != 1 || own.Rollouts[0].Rollout.Name != "release-name-reviews" || own.Rollouts[0].Unit.Application != "" {
		t.Errorf("charts/reviews alone: %+v", own.Rollouts)
	}
	if w := stepWeights(own, 0); !reflect.DeepEqual(w, []int{20, 20, 40, 40, 60, 60}) {
		t.Errorf("chart's own weights %v", w)
	}
}

// TestPlanRenderFalse: --render=false plans the files as written, as
// plan always did: the base's and the patch's Rollout, in the default
// namespace, without units; --values is then a usage error.
func TestPlanRenderFalse(t *testing.T) {
	t.Parallel()
	doc := planJSON(t, "../../../testdata/repos/mixed", "--render=false", "kustomize")
	var got []string
	for _, r := range doc.Rollouts {
		if r.Unit != nil {
			t.Errorf("%s: unit %+v with --render=false", r.Rollout.Name, r.Unit)
		}
		got = append(got, r.Rollout.Namespace+"/"+r.Rollout.Name+" "+r.File)
	}
	want := []string{"default/checkout kustomize/checkout/base/rollout.yaml", "default/checkout kustomize/checkout/overlays/dev/fast-steps.yaml"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	r := run(t, "../../../testdata/repos/mixed", "", "plan", "--config", "/dev/null", "--render=false", "--values", "x.yaml", "charts/reviews")
	if r.code != 2 || !strings.Contains(r.err, "with --render=false no chart is rendered") {
		t.Errorf("--render=false --values: exit %d %q", r.code, r.err)
	}
	r = run(t, "../../../testdata/repos/mixed", "", "plan", "--config", "/dev/null", "--set", "a=b", "kustomize")
	if r.code != 2 || !strings.Contains(r.err, "holds none: they would do nothing") {
		t.Errorf("--set without a chart: exit %d %q", r.code, r.err)
	}
}

// TestPlanGivenFile: a file of a base given alone plans the Rollout of
// every unit rendered from it; a file only one overlay uses plans that
// overlay's; a plain file is planned as written.
func TestPlanGivenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../../testdata/repos/mixed")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	names := func(doc planDoc) []string {
		var out []string
		for _, r := range doc.Rollouts {
			out = append(out, r.Rollout.Namespace+"/"+r.Rollout.Name)
		}
		return out
	}
	if got, want := names(planJSON(t, dir, "kustomize/checkout/base/rollout.yaml")),
		[]string{"checkout-dev/dev-checkout", "checkout-prod/checkout", "checkout-staging/staging-checkout"}; !reflect.DeepEqual(got, want) {
		t.Errorf("base file: %v, want %v", got, want)
	}
	if got, want := names(planJSON(t, dir, "kustomize/checkout/overlays/prod/weights.yaml")), []string{"checkout-prod/checkout"}; !reflect.DeepEqual(got, want) {
		t.Errorf("prod patch: %v, want %v", got, want)
	}
	// --rollout picks among the units' Rollouts by rendered name.
	if got, want := names(planJSON(t, dir, "--rollout", "checkout-dev/dev-checkout", "kustomize")), []string{"checkout-dev/dev-checkout"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--rollout: %v, want %v", got, want)
	}
	r := run(t, dir, "", "plan", "--config", "/dev/null", "--rollout", "default/checkout", "kustomize")
	if r.code != 2 || !strings.Contains(r.err, "have: checkout-dev/dev-checkout, checkout-prod/checkout, checkout-staging/staging-checkout") {
		t.Errorf("--rollout of an unrendered name: exit %d %q", r.code, r.err)
	}
}

// TestPlanClusterNeedsFilesAsWritten: --cluster with a directory that
// holds a unit plan renders is a usage error naming --render=false.
func TestPlanClusterNeedsFilesAsWritten(t *testing.T) {
	t.Parallel()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: shop}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "../../../testdata/repos/mixed", "", "plan", "--config", "/dev/null", "--cluster", "--kubeconfig", kc, "kustomize")
	if r.code != 2 || !strings.Contains(r.err, "--cluster plans the files as written") || !strings.Contains(r.err, "--render=false") {
		t.Errorf("exit %d %q", r.code, r.err)
	}
}

// TestPlanBorrowsClusterTemplates: an overlay planned with the repository
// sees the ClusterAnalysisTemplates another unit defines (as lint does);
// planned alone it lists them as not in the bundle.
func TestPlanBorrowsClusterTemplates(t *testing.T) {
	t.Parallel()
	missing := func(args ...string) map[string][]string {
		r := run(t, "../../../testdata/repos/shared-templates", "", append([]string{"plan", "--config", "/dev/null", "-f", "json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.err)
		}
		var doc struct {
			Rollouts []struct {
				Rollout     struct{ Namespace, Name string }
				NotInBundle []struct{ Name string } `json:"notInBundle"`
			}
		}
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, ro := range doc.Rollouts {
			k := ro.Rollout.Namespace + "/" + ro.Rollout.Name
			out[k] = []string{}
			for _, n := range ro.NotInBundle {
				out[k] = append(out[k], n.Name)
			}
		}
		return out
	}
	if got := missing("."); !reflect.DeepEqual(got["shop/checkout"], []string{}) {
		t.Errorf("with the repository: shop/checkout lacks %v (all: %v), want nothing", got["shop/checkout"], got)
	}
	if got := missing("kustomize/shop/overlays/prod"); !reflect.DeepEqual(got, map[string][]string{"shop/checkout": {"success-rate"}}) {
		t.Errorf("the overlay alone: %v, want shop/checkout lacking success-rate", got)
	}
}

// TestPlanSaysWhatALimitLeftOut: a kustomization whose resource the alias
// bound refuses (RL0005 in lint) is not built; plan printed only "no
// Rollout in the input" and exited 0. It says on standard error, as for a
// render failure, which file and alias left the unit out.
func TestPlanSaysWhatALimitLeftOut(t *testing.T) {
	dir := write(t, map[string]string{
		"app/kustomization.yaml": "resources:\n- rollout.yaml\n",
		"app/rollout.yaml":       "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: web\nspec:\n  x: &a [*a]\n",
	})
	r := run(t, dir, "", "plan", "app")
	want := "rolloutlint: plan: app/rollout.yaml:6:10: a YAML alias refers to a node that contains it (what it holds is not planned; see rolloutlint lint)"
	if !strings.Contains(r.err, want) {
		t.Errorf("exit %d, stderr %q; want %q", r.code, r.err, want)
	}
}
