package render

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render/helmengine"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// chartUnits are the Helm units of the repository test data and the
// RL0010 charts, as discovery finds them (with their Applications).
func chartUnits(t *testing.T) []*units.Unit {
	t.Helper()
	var out []*units.Unit
	for _, root := range []string{"../../testdata/repos/mixed", "../../testdata/repos/argocd-example-apps", "../../testdata/rules/RL0010"} {
		set, err := units.Discover([]string{root}, units.Options{RepoRoot: root})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range set.Units {
			if u.Kind == units.Helm {
				out = append(out, u)
			}
		}
	}
	if len(out) < 5 {
		t.Fatalf("%d chart units, want the 5 or more of the test data", len(out))
	}
	return out
}

// summary is what a render gives the lint: every input, problem and
// file, and where each rendered field maps to.
func summary(res *Result) string {
	var b strings.Builder
	for _, in := range res.Inputs {
		fmt.Fprintf(&b, "input %s %v %q\n", in.Path, in.Role, in.Data)
	}
	for _, p := range res.Problems {
		fmt.Fprintf(&b, "problem %s %s %s\n", p.Pos, p.Message, p.Detail)
	}
	fmt.Fprintf(&b, "files %v\n", res.Files)
	g := load.Inputs(res.Inputs, load.Options{})
	for _, r := range g.Resources {
		for _, path := range []string{"", "metadata.name", "spec.replicas", "spec.strategy.canary.steps[0]", "spec.template.spec.containers[0].image"} {
			pos, rel := res.Mapper.MapPos(r.Pos(path))
			fmt.Fprintf(&b, "%s/%s %q → %s %v\n", r.Kind, r.Name, path, pos, rel)
		}
	}
	return b.String()
}

// TestCompanionMatchesInProcess renders every chart of the test data with
// Helm in process and through the companion: the same inputs, problems,
// files and mapped positions.
func TestCompanionMatchesInProcess(t *testing.T) {
	companion := New(Options{})
	defer func() { _ = companion.Close() }()
	inProcess := New(Options{Helm: helmengine.InProcess{}})
	mapped := 0
	for _, u := range chartUnits(t) {
		got, want := summary(companion.Render(u)), summary(inProcess.Render(u))
		if got != want {
			t.Errorf("%s through the companion:\n%s\nin process:\n%s", u.Dir, got, want)
		}
		mapped += strings.Count(got, " → ")
	}
	if mapped < 50 {
		t.Errorf("%d positions mapped: the charts no longer render objects to compare", mapped)
	}
	if companion.client == nil || companion.client != companion.engine {
		t.Error("the default engine is not the companion")
	}
}

// TestMissingCompanion: with no rolloutlint-helm, each chart is an RL0010
// at Chart.yaml:1 that says so and gives the command that installs it;
// the rest of the repository renders.
func TestMissingCompanion(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "rolloutlint-helm")
	t.Setenv(helmrpc.EnvPath, missing)
	r := New(Options{})
	defer func() { _ = r.Close() }()
	dir := "../../testdata/repos/mixed"
	set, err := units.Discover([]string{dir}, units.Options{RepoRoot: dir})
	if err != nil {
		t.Fatal(err)
	}
	var charts, others int
	for _, u := range set.Units {
		res := r.Render(u)
		if u.Kind != units.Helm {
			for _, p := range res.Problems {
				t.Errorf("%s (%s): %s", u.Dir, u.Kind, p.Message)
			}
			others++
			continue
		}
		charts++
		if len(res.Problems) != 1 {
			t.Fatalf("%s: %d problems, want 1: %v", u.Dir, len(res.Problems), res.Problems)
		}
		p := res.Problems[0]
		wantPos := graph.Position{File: filepath.Join(u.Dir, "Chart.yaml"), Line: 1, Column: 1, EndLine: 1, EndColumn: 2}
		if p.RuleID != RuleRender || p.Pos != wantPos {
			t.Errorf("%s at %v, want RL0010 at %v", p.RuleID, p.Pos, wantPos)
		}
		for _, want := range []string{"chart " + u.Dir + " was not rendered", "rolloutlint-helm, the companion that renders Helm charts, is not installed",
			missing, "go install github.com/rolloutlint/rolloutlint/cmd/rolloutlint-helm@"} {
			if !strings.Contains(p.Message, want) {
				t.Errorf("message %q lacks %q", p.Message, want)
			}
		}
		if !strings.Contains(p.Detail, "release archives and the container image ship both") {
			t.Errorf("detail %q does not name the release archives", p.Detail)
		}
		for _, in := range res.Inputs {
			if in.Role == load.RoleRendered {
				t.Errorf("%s rendered %s without a companion", u.Dir, in.Path)
			}
		}
	}
	if charts == 0 || others == 0 {
		t.Fatalf("%d charts and %d other units: the test data changed", charts, others)
	}
}

// TestEngineFailures: a companion of another protocol, and an engine that
// fails, give RL0010 findings at Chart.yaml:1 that say why.
func TestEngineFailures(t *testing.T) {
	u := chartUnits(t)[0]
	cases := []struct {
		err  error
		want []string
	}{
		{&helmrpc.ProtocolError{Path: "/x/rolloutlint-helm", Protocol: 7, Version: "v9.0.0"},
			[]string{"/x/rolloutlint-helm is of another release (v9.0.0, protocol 7; this rolloutlint", "speaks protocol 2", "go install github.com/rolloutlint/rolloutlint/cmd/rolloutlint-helm@"}},
		{&helmrpc.FailedError{Path: "/x/rolloutlint-helm", Reason: "exited while rendering (exit status 2)", Stderr: "fatal error: out of memory"},
			[]string{"was not rendered: /x/rolloutlint-helm exited while rendering (exit status 2); its standard error:\nfatal error: out of memory"}},
	}
	for _, c := range cases {
		res := New(Options{Helm: failingEngine{c.err}}).Render(u)
		if len(res.Problems) != 1 || res.Problems[0].Pos.Line != 1 || filepath.Base(res.Problems[0].Pos.File) != "Chart.yaml" {
			t.Fatalf("%v: problems %v, want one at Chart.yaml:1", c.err, res.Problems)
		}
		for _, w := range c.want {
			if !strings.Contains(res.Problems[0].Message, w) {
				t.Errorf("message %q lacks %q", res.Problems[0].Message, w)
			}
		}
	}
}

type failingEngine struct{ err error }

func (f failingEngine) Render(*helmrpc.Request) (*helmrpc.Response, error) { return nil, f.err }

// TestValuesProblemAfterLoadProblems keeps Helm's order: a chart that does
// not load is reported alone, though its value file is missing too; with
// the chart fixed, the missing value file is the finding.
func TestValuesProblemAfterLoadProblems(t *testing.T) {
	dir := writeTree(t, map[string]string{"chart/Chart.yaml": "name: [not a chart\n", "chart/templates/x.yaml": "kind: ConfigMap\n"})
	chart := filepath.Join(dir, "chart")
	opts := Options{HelmValueFiles: []string{filepath.Join(dir, "nope.yaml")}}
	problems := func() []string {
		var out []string
		for _, p := range New(opts).Render(&units.Unit{Kind: units.Helm, Dir: chart}).Problems {
			out = append(out, p.Message)
		}
		sort.Strings(out)
		return out
	}
	got := problems()
	if len(got) != 1 || !strings.HasPrefix(got[0], "loading chart "+chart) {
		t.Errorf("a chart that does not load: %q, want its load error alone", got)
	}
	if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = problems()
	if want := []string{"values file " + filepath.Join(dir, "nope.yaml") + " does not exist"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a missing value file: %q, want %q", got, want)
	}
}
