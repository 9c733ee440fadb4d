package report_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

func TestGitHubAnnotations(t *testing.T) {
	res := lintDir(t, "testdata/bundle")
	out := string(writeFormat(t, "github", res, report.Options{SARIFRoot: "testdata"}))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(res.Active()) {
		t.Fatalf("%d annotations for %d active findings:\n%s", len(lines), len(res.Active()), out)
	}
	for i, d := range res.Active() {
		want := "::error file=bundle/rollout.yaml,line=" + itoa(d.Pos.Line) + ",col=" + itoa(d.Pos.Column) +
			",endLine=" + itoa(d.Pos.EndLine) + ",endColumn=" + itoa(d.Pos.EndColumn) + ",title=" + d.RuleID + "::"
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("annotation %d = %q, want prefix %q", i, lines[i], want)
		}
	}
}

func TestGitHubEscaping(t *testing.T) {
	res := &analyzer.Result{Diagnostics: []rules.Diagnostic{{
		RuleID: "RL2001", Severity: rules.Warning, Message: "100% of traffic\r\ngoes to a:b, c",
		Pos:     graph.Position{File: "deploy/a,b:c%.yaml", Line: 3, Column: 5, EndLine: 4, EndColumn: 2},
		Related: []rules.Related{{File: "deploy/dr.yaml", Line: 7, Column: 3, Message: "subset here"}},
	}, {
		RuleID: "RL4001", Severity: rules.Info, Message: "note", Pos: graph.Position{File: "x.yaml", Line: 1, Column: 1, EndLine: 1, EndColumn: 4},
	}, {
		RuleID: "RL1001", Severity: rules.Error, Message: "hidden", Suppressed: &rules.Suppression{Kind: "inSource"},
		Pos: graph.Position{File: "x.yaml", Line: 2, Column: 1, EndLine: 2, EndColumn: 4},
	}}}
	got := string(writeFormat(t, "github", res, report.Options{}))
	want := "::warning file=deploy/a%2Cb%3Ac%25.yaml,line=3,col=5,endLine=4,title=RL2001::100%25 of traffic%0D%0Agoes to a:b, c%0Adeploy/dr.yaml:7:3: subset here\n" +
		"::notice file=x.yaml,line=1,col=1,endLine=1,endColumn=4,title=RL4001::note\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// With Options.Dir, relative file names are taken in that directory: SARIF
// URIs are relative to the root there, line hashes are read from the files
// there, and GitHub paths are found relative to --sarif-root from there.
func TestWritersDir(t *testing.T) {
	t.Parallel()
	res := lintDir(t, "testdata/bundle")
	src, err := os.ReadFile("testdata/bundle/rollout.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Diagnostics {
		res.Diagnostics[i].Pos.File = strings.TrimPrefix(res.Diagnostics[i].Pos.File, "testdata/")
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(writeFormat(t, "sarif", res, report.Options{Dir: dir, AllRules: all.Rules()}), &log); err != nil {
		t.Fatal(err)
	}
	for i, r := range log.Runs[0].Results {
		a := r.Locations[0].PhysicalLocation.ArtifactLocation
		if a.URI != "bundle/rollout.yaml" || a.URIBaseID != "%SRCROOT%" {
			t.Errorf("result %d artifact = %+v, want bundle/rollout.yaml under %%SRCROOT%%", i, a)
		}
		line := r.Locations[0].PhysicalLocation.Region.StartLine
		if want := report.LineHashes(src)[line-1]; r.PartialFingerprints["primaryLocationLineHash"] != want {
			t.Errorf("result %d line hash %q, want %q (read from Dir)", i, r.PartialFingerprints["primaryLocationLineHash"], want)
		}
	}
	out := string(writeFormat(t, "github", res, report.Options{Dir: dir, SARIFRoot: filepath.Join(dir, "bundle")}))
	if !strings.HasPrefix(out, "::error file=rollout.yaml,") {
		t.Errorf("GitHub path not relative to Dir/bundle:\n%s", out)
	}
}
