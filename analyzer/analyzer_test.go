package analyzer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: checkout, image: checkout:1}]}
  strategy:
    canary:
      steps:
      - setWeight: 120
      - setWeight: 150
`

func bundle(t testing.TB, files ...string) *graph.Graph {
	t.Helper()
	var in []load.Input
	for i := 0; i+1 < len(files); i += 2 {
		in = append(in, load.Input{Path: files[i], Data: []byte(files[i+1])})
	}
	return load.Inputs(in, load.Options{})
}

// fake builds a rule whose Run is fn.
func fake(id string, fn func(*rules.Pass) error) *rules.Rule {
	return &rules.Rule{ID: id, Name: "fake-" + strings.ToLower(id), Summary: "test rule", Doc: rules.Doc{Why: "test rule"},
		Severity: rules.Error, Source: rules.SourceGo, Run: fn}
}

// active returns "RULE@line:col message" for the unsuppressed findings.
func active(res *analyzer.Result) []string {
	var out []string
	for _, d := range res.Active() {
		out = append(out, d.RuleID+"@"+d.Pos.String()+" "+d.Message)
	}
	return out
}

func count(res *analyzer.Result, id string, suppressed bool) int {
	n := 0
	for _, d := range res.Diagnostics {
		if d.RuleID == id && (d.Suppressed != nil) == suppressed {
			n++
		}
	}
	return n
}

func TestRulePanicIsReported(t *testing.T) {
	g := bundle(t, "r.yaml", rollout)
	var nilMap map[string]int
	rs := append(all.Rules(),
		fake("RL9901", func(p *rules.Pass) error {
			// Report first, then panic: the partial finding is kept.
			p.Report(p.Graph.OfKind("Rollout")[0], "metadata.name", "before the panic")
			nilMap["boom"]++
			return nil
		}),
		fake("RL9902", func(*rules.Pass) error { return errors.New("backend unavailable") }),
	)
	res := analyzer.Run(g, analyzer.Options{Rules: rs})
	var internal []string
	for _, d := range res.Diagnostics {
		if d.RuleID == analyzer.RuleInternal {
			internal = append(internal, d.Message)
			if d.Severity != rules.Error || d.Pos.File != "r.yaml" || d.Pos.Line != 1 {
				t.Errorf("RL0009 at %v severity %v", d.Pos, d.Severity)
			}
		}
	}
	if len(internal) != 2 {
		t.Fatalf("want 2 RL0009 findings, got %q", internal)
	}
	joined := strings.Join(internal, "\n")
	for _, want := range []string{"rule RL9901 (fake-rl9901) failed", "assignment to entry in nil map", "rule RL9902 (fake-rl9902) failed", "backend unavailable"} {
		if !strings.Contains(joined, want) {
			t.Errorf("RL0009 messages lack %q:\n%s", want, joined)
		}
	}
	if count(res, "RL1001", false) != 2 {
		t.Errorf("other rules must still report: RL1001 findings %v", active(res))
	}
	if count(res, "RL9901", false) != 1 {
		t.Errorf("the finding made before the panic is lost")
	}
}

func TestSuppressionComments(t *testing.T) {
	src := `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  selector:
    matchLabels: {app: checkout}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: checkout, image: checkout:1}]}
  strategy:
    canary:
      steps:
      - setWeight: 120 # rolloutlint:ignore RL1001 -- load test goes above 100 on purpose
      # rolloutlint:ignore RL1* -- line above, glob
      - setWeight: 150
      - setWeight: 130 # rolloutlint:ignore RL1001
      - setWeight: 20 # rolloutlint:ignore RL1001 -- nothing to suppress here
      - setWeight: 30 # rolloutlint:ignore RL7777 -- not a rule
`
	res := analyzer.Run(bundle(t, "r.yaml", src), analyzer.Options{Rules: all.Rules()})
	if n := count(res, "RL1001", true); n != 3 {
		t.Errorf("suppressed RL1001: %d, want 3 (trailing, line-above glob, no-reason); active %v", n, active(res))
	}
	if n := count(res, "RL1001", false); n != 0 {
		t.Errorf("unsuppressed RL1001 left: %v", active(res))
	}
	want := map[string]string{
		"RL0007@r.yaml:17": "suppression of RL1001 gives no reason",
		"RL0008@r.yaml:18": "suppression of RL1001 matches no finding here",
		"RL0008@r.yaml:19": "suppression names RL7777, which is not a rule",
	}
	for _, d := range res.Active() {
		if d.RuleID != "RL0007" && d.RuleID != "RL0008" {
			continue
		}
		k := d.RuleID + "@" + d.Pos.File + ":" + itoa(d.Pos.Line)
		if w, ok := want[k]; !ok || !strings.Contains(d.Message, w) {
			t.Errorf("unexpected %s: %s", k, d.Message)
		}
		delete(want, k)
	}
	for k, w := range want {
		t.Errorf("missing %s %q", k, w)
	}
	for _, d := range res.Diagnostics {
		if d.Suppressed != nil && d.Pos.Line == 14 && d.Suppressed.Reason != "load test goes above 100 on purpose" {
			t.Errorf("reason not kept: %+v", d.Suppressed)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestSuppressionAnnotation(t *testing.T) {
	src := strings.Replace(rollout, "  name: checkout\n", "  name: checkout\n  annotations:\n    rolloutlint.io/ignore: \"RL10*, RL2001 -- migrating\"\n", 1)
	res := analyzer.Run(bundle(t, "r.yaml", src), analyzer.Options{Rules: all.Rules()})
	if n := count(res, "RL1001", true); n != 2 {
		t.Errorf("annotation suppressed %d RL1001, want 2: %v", n, active(res))
	}
	for _, d := range res.Diagnostics {
		if d.Suppressed != nil && (d.Suppressed.Kind != "external" || d.Suppressed.Reason != "migrating") {
			t.Errorf("suppression = %+v", d.Suppressed)
		}
	}
	// RL2001 is not a rule of this build (or matches nothing): either way it
	// is reported at the annotation, never silently accepted.
	found := false
	for _, d := range res.Active() {
		if d.RuleID == "RL0008" && strings.Contains(d.Message, "RL2001") {
			found = true
			if d.Pos.Line != 6 {
				t.Errorf("RL0008 at line %d, want the annotation's line 6", d.Pos.Line)
			}
		}
	}
	if !found {
		t.Errorf("no RL0008 for the annotation's RL2001: %v", active(res))
	}
	// The annotation does not reach other objects.
	other := strings.Replace(rollout, "name: checkout", "name: other", 1)
	res = analyzer.Run(bundle(t, "r.yaml", src, "o.yaml", other), analyzer.Options{Rules: all.Rules()})
	for _, d := range res.Active() {
		if d.RuleID == "RL1001" && d.Pos.File != "o.yaml" {
			t.Errorf("RL1001 on the annotated object: %v", d.Pos)
		}
	}
	if count(res, "RL1001", false) != 2 {
		t.Errorf("the other object's findings were suppressed: %v", active(res))
	}
}

func TestConfigSeverityOverride(t *testing.T) {
	cfg, err := config.Parse(".rolloutlint.yaml", []byte("rules:\n  RL1*: warning\n  RL1001: info\n  RL1002: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(rollout, "      - setWeight: 150\n", "      - {}\n", 1)
	res := analyzer.Run(bundle(t, "r.yaml", src), analyzer.Options{Rules: all.Rules(), Config: cfg})
	for _, d := range res.Diagnostics {
		switch d.RuleID {
		case "RL1001":
			if d.Severity != rules.Info {
				t.Errorf("RL1001 severity %v, want info (exact ID wins over glob)", d.Severity)
			}
		case "RL1002":
			t.Errorf("RL1002 is off but reported: %s", d.Message)
		}
	}
	if res.Summary.Infos != 1 || res.Summary.Errors != 0 {
		t.Errorf("summary %+v", res.Summary)
	}
	if res.Fails(rules.Warning) || !res.Fails(rules.Info) {
		t.Errorf("Fails: an info finding must fail only at info")
	}
	// Flags win over config.
	res = analyzer.Run(bundle(t, "r.yaml", src), analyzer.Options{Rules: all.Rules(), Config: cfg, Enable: []string{"RL1002"}})
	if count(res, "RL1002", false) != 1 {
		t.Errorf("--enable RL1002 did not override the config")
	}
}

// TestDeterministic runs the same bundle repeatedly with 1 and 4 procs and
// concurrency, and compares the JSON of the results byte for byte.
func TestDeterministic(t *testing.T) {
	files := []string{"b.yaml", rollout, "a.yaml", strings.ReplaceAll(rollout, "checkout", "cart"),
		"c.yaml", "kind: [\n", "d.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  sellector: {}\n"}
	render := func(procs, par int) string {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		res := analyzer.Run(bundle(t, files...), analyzer.Options{Rules: all.Rules(), Parallelism: par})
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(res.Diagnostics); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	first := render(1, 1)
	if !strings.Contains(first, "RL1001") || !strings.Contains(first, "RL0001") {
		t.Fatalf("bundle produced too little to compare: %s", first)
	}
	for i := 0; i < 10; i++ {
		if got := render(4, 0); got != first {
			t.Fatalf("run %d with GOMAXPROCS 4 differs:\n%s\nvs\n%s", i, got, first)
		}
	}
	var ds []struct {
		RuleID       string `json:"ruleId"`
		File         string `json:"file"`
		Line, Column int
	}
	if err := json.Unmarshal([]byte(first), &ds); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ds); i++ {
		a, b := ds[i-1], ds[i]
		if a.File > b.File || a.File == b.File && (a.Line > b.Line || a.Line == b.Line && (a.Column > b.Column || a.Column == b.Column && a.RuleID > b.RuleID)) {
			t.Errorf("not sorted by file, line, column, rule: %+v before %+v", a, b)
		}
	}
	if ds[0].File != "a.yaml" {
		t.Errorf("first finding is in %s, want a.yaml (sorted by file, not load order)", ds[0].File)
	}
}

// TestStagesForgetGoMemos: the Go rules run before the policies, and what
// they memoized is forgotten before the policies start; a memo made before
// the lint (or by an earlier lint) is kept.
func TestStagesForgetGoMemos(t *testing.T) {
	g := bundle(t, "r.yaml", rollout)
	early, shared := graph.NewMemo[string]("early"), graph.NewMemo[string]("shared")
	builds := map[string]int{}
	var mu sync.Mutex
	memo := func(m *graph.Memo[string], name string) {
		m.Get(g, func() string {
			mu.Lock()
			builds[name]++
			mu.Unlock()
			return name
		})
	}
	memo(early, "early")
	var order []string
	record := func(id string) {
		mu.Lock()
		order = append(order, id)
		mu.Unlock()
	}
	goRule := fake("RL1998", func(p *rules.Pass) error {
		memo(shared, "shared")
		memo(early, "early")
		record("go")
		return nil
	})
	policy := fake("RL1997", func(p *rules.Pass) error { // a lower ID: sorted first, run last
		memo(shared, "shared")
		memo(early, "early")
		record("policy")
		return nil
	})
	policy.Source = rules.SourceRego
	analyzer.Run(g, analyzer.Options{Rules: []*rules.Rule{goRule, policy}})
	if strings.Join(order, ",") != "go,policy" {
		t.Errorf("rules ran in the order %v, want the Go rule first", order)
	}
	if builds["shared"] != 2 || builds["early"] != 1 {
		t.Errorf("builds %v: want the Go rule's memo forgotten before the policy (2) and the earlier one kept (1)", builds)
	}
}

// TestCanceledContextSkipsTheRemainingRules cancels the lint from inside the
// first rule: the rules after it do not run, the result says why, and the
// first rule's error is not reported as a broken rule.
func TestCanceledContextSkipsTheRemainingRules(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran []string
	mk := func(id string, run func(*rules.Pass) error) *rules.Rule {
		return &rules.Rule{ID: id, Name: "r" + strings.ToLower(id), Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Error, Source: rules.SourceGo,
			Run: func(p *rules.Pass) error { ran = append(ran, id); return run(p) }}
	}
	first := mk("RL0901", func(p *rules.Pass) error { cancel(); return p.Context().Err() })
	second := mk("RL0902", func(*rules.Pass) error { return nil })
	res := analyzer.Run(bundle(t, "r.yaml", rollout), analyzer.Options{Rules: []*rules.Rule{second, first}, Parallelism: 1, Context: ctx})
	if strings.Join(ran, ",") != "RL0901" {
		t.Errorf("rules run: %v, want only RL0901", ran)
	}
	if !errors.Is(res.Err, context.Canceled) {
		t.Errorf("Result.Err = %v", res.Err)
	}
	for _, d := range res.Diagnostics {
		if d.RuleID == analyzer.RuleInternal {
			t.Errorf("cancellation reported as a broken rule: %s", d.Message)
		}
	}
	// Without a context nothing changes.
	ran = nil
	if res := analyzer.Run(bundle(t, "r.yaml", rollout), analyzer.Options{Rules: []*rules.Rule{second}}); res.Err != nil || len(ran) != 1 {
		t.Errorf("no context: err %v, ran %v", res.Err, ran)
	}
}
