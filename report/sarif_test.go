package report_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// lintDir runs every rule over a directory, as `rolloutlint lint DIR` does.
func lintDir(t *testing.T, dir string) *analyzer.Result {
	t.Helper()
	inputs, err := load.Expand([]string{dir}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return analyzer.Run(load.Inputs(inputs, load.Options{}), analyzer.Options{Rules: all.Rules(), Mode: rules.ModeCLI})
}

// sarifSchema compiles the official SARIF 2.1.0 schema (OASIS errata01),
// vendored in testdata.
func sarifSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatalf("compiling the SARIF schema: %v", err)
	}
	return sch
}

// ValidateSARIF checks a SARIF document against the schema.
func validateSARIF(t *testing.T, sch *jsonschema.Schema, data []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("SARIF fails the 2.1.0 schema: %v", err)
	}
}

// sarifLog is the part of a SARIF log the assertions read.
type sarifLog struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		AutomationDetails struct {
			ID string `json:"id"`
		} `json:"automationDetails"`
		OriginalURIBaseIDs map[string]struct {
			URI string `json:"uri"`
		} `json:"originalUriBaseIds"`
		Tool struct {
			Driver struct {
				Name            string `json:"name"`
				Version         string `json:"version"`
				SemanticVersion string `json:"semanticVersion"`
				InformationURI  string `json:"informationUri"`
				Rules           []struct {
					ID               string                `json:"id"`
					Name             string                `json:"name"`
					ShortDescription struct{ Text string } `json:"shortDescription"`
					FullDescription  struct{ Text string } `json:"fullDescription"`
					Help             struct {
						Text     string `json:"text"`
						Markdown string `json:"markdown"`
					} `json:"help"`
					HelpURI              string `json:"helpUri"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
					Properties struct {
						Tags      []string `json:"tags"`
						Precision string   `json:"precision"`
					} `json:"properties"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []sarifResult `json:"results"`
	} `json:"runs"`
}

type sarifLocation struct {
	ID               int `json:"id"`
	PhysicalLocation struct {
		ArtifactLocation struct {
			URI       string `json:"uri"`
			URIBaseID string `json:"uriBaseId"`
		} `json:"artifactLocation"`
		Region struct {
			StartLine   int `json:"startLine"`
			StartColumn int `json:"startColumn"`
			EndLine     int `json:"endLine"`
			EndColumn   int `json:"endColumn"`
		} `json:"region"`
	} `json:"physicalLocation"`
	Message struct{ Text string } `json:"message"`
}

type sarifResult struct {
	RuleID              string                `json:"ruleId"`
	RuleIndex           int                   `json:"ruleIndex"`
	Level               string                `json:"level"`
	Message             struct{ Text string } `json:"message"`
	Locations           []sarifLocation       `json:"locations"`
	RelatedLocations    []sarifLocation       `json:"relatedLocations"`
	PartialFingerprints map[string]string     `json:"partialFingerprints"`
	Suppressions        []struct {
		Kind          string `json:"kind"`
		Status        string `json:"status"`
		Justification string `json:"justification"`
	} `json:"suppressions"`
}

func writeFormat(t *testing.T, format string, res *analyzer.Result, opts report.Options) []byte {
	t.Helper()
	w, err := report.Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := w(&buf, res, opts); err != nil {
		t.Fatalf("%s writer: %v", format, err)
	}
	return buf.Bytes()
}

func TestSARIFMatchesJSONAndSchema(t *testing.T) {
	res := lintDir(t, "testdata/bundle")
	if len(res.Diagnostics) < 3 || res.Summary.Suppressed != 1 {
		t.Fatalf("the test bundle should give ≥3 findings, one suppressed; got %d (%d suppressed)", len(res.Diagnostics), res.Summary.Suppressed)
	}
	// A related location, as rules about two objects report.
	first := res.Diagnostics[0]
	first.Related = []rules.Related{{File: first.Pos.File, Line: 5, Column: 9, EndLine: 5, EndColumn: 17, Message: "the Rollout's name"}}
	res.Diagnostics[0] = first

	opts := report.Options{Version: "v1.2.3", SARIFRoot: "testdata", SARIFCategory: "rolloutlint/deploy", AllRules: all.Rules(), IncludeSuppressed: true}
	out := writeFormat(t, "sarif", res, opts)
	validateSARIF(t, sarifSchema(t), out)

	var log sarifLog
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("want one SARIF 2.1.0 run, got version %q with %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	d := run.Tool.Driver
	if d.Name != "rolloutlint" || d.Version != "v1.2.3" || d.SemanticVersion != "1.2.3" || d.InformationURI == "" {
		t.Errorf("driver = %q %q %q %q", d.Name, d.Version, d.SemanticVersion, d.InformationURI)
	}
	if run.AutomationDetails.ID != "rolloutlint/deploy/" {
		t.Errorf("automationDetails.id = %q", run.AutomationDetails.ID)
	}
	abs, _ := filepath.Abs("testdata")
	if got := run.OriginalURIBaseIDs["%SRCROOT%"].URI; got != "file://"+filepath.ToSlash(abs)+"/" {
		t.Errorf("%%SRCROOT%% = %q", got)
	}

	// Every enabled rule is described, with what GitHub requires.
	if len(d.Rules) != len(res.Rules) {
		t.Errorf("driver lists %d rules, %d are enabled", len(d.Rules), len(res.Rules))
	}
	index := map[string]int{}
	for i, r := range d.Rules {
		index[r.ID] = i
		if r.Name == "" || r.ShortDescription.Text == "" || r.FullDescription.Text == "" || r.Help.Text == "" || r.Help.Markdown == "" ||
			r.DefaultConfiguration.Level == "" || len(r.Properties.Tags) == 0 || r.Properties.Precision == "" ||
			r.HelpURI != report.InformationURI+"/blob/v1.2.3/docs/rules/"+r.ID+".md" {
			t.Errorf("rule %s lacks a field GitHub needs: %+v", r.ID, r)
		}
	}
	for _, r := range d.Rules {
		// help.text is plain text for viewers without Markdown; help.markdown
		// keeps the fences and code spans.
		if strings.Contains(r.Help.Text, "```") || strings.Contains(r.Help.Text, "`") || !strings.Contains(r.Help.Markdown, "```") {
			t.Errorf("rule %s: help.text is not plain text or help.markdown has no example:\n%s", r.ID, r.Help.Text)
		}
	}
	if d.Rules[index["RL1001"]].DefaultConfiguration.Level != "error" {
		t.Errorf("RL1001 default level = %q", d.Rules[index["RL1001"]].DefaultConfiguration.Level)
	}

	// Each result matches the JSON output's finding: rule, level, message,
	// region equal to line/column, and a fingerprint as GitHub computes it.
	var js struct {
		Diagnostics []struct {
			RuleID, Severity, Message, File  string
			Detail                           string
			Line, Column, EndLine, EndColumn int
			Suppressed                       *struct{ Kind, Justification string }
		}
	}
	if err := json.Unmarshal(writeFormat(t, "json", res, opts), &js); err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != len(js.Diagnostics) {
		t.Fatalf("SARIF has %d results, JSON %d findings", len(run.Results), len(js.Diagnostics))
	}
	levels := map[string]string{"error": "error", "warning": "warning", "info": "note"}
	suppressed := 0
	for i, r := range run.Results {
		j := js.Diagnostics[i]
		full := j.Message // SARIF carries the detail after the message
		if j.Detail != "" {
			full += ". " + j.Detail
		}
		message := strings.NewReplacer(`[`, `\[`, `]`, `\]`).Replace(full) // SARIF escapes link syntax
		if i == 0 {
			message += " (related: [the Rollout's name](1))" // links the related location
		}
		if r.RuleID != j.RuleID || r.Level != levels[j.Severity] || r.Message.Text != message || r.RuleIndex != index[r.RuleID] {
			t.Errorf("result %d: %s/%s/%q/%d, JSON %s/%s/%q", i, r.RuleID, r.Level, r.Message.Text, r.RuleIndex, j.RuleID, j.Severity, j.Message)
		}
		if len(r.Locations) != 1 {
			t.Fatalf("result %d has %d locations", i, len(r.Locations))
		}
		pl := r.Locations[0].PhysicalLocation
		reg := pl.Region
		if reg.StartLine != j.Line || reg.StartColumn != j.Column || reg.EndLine != j.EndLine || reg.EndColumn != j.EndColumn {
			t.Errorf("result %d region %+v, JSON %d:%d-%d:%d", i, reg, j.Line, j.Column, j.EndLine, j.EndColumn)
		}
		rel, _ := filepath.Rel("testdata", j.File)
		if pl.ArtifactLocation.URI != filepath.ToSlash(rel) || pl.ArtifactLocation.URIBaseID != "%SRCROOT%" {
			t.Errorf("result %d artifact %+v, file %s", i, pl.ArtifactLocation, j.File)
		}
		src, err := os.ReadFile(j.File)
		if err != nil {
			t.Fatal(err)
		}
		if want := report.LineHashes(src)[j.Line-1]; r.PartialFingerprints["primaryLocationLineHash"] != want {
			t.Errorf("result %d fingerprint %q, want %q", i, r.PartialFingerprints["primaryLocationLineHash"], want)
		}
		if j.Suppressed != nil {
			suppressed++
			if len(r.Suppressions) != 1 || r.Suppressions[0].Kind != "inSource" || r.Suppressions[0].Status != "accepted" ||
				!strings.Contains(r.Suppressions[0].Justification, "maxTrafficWeight") {
				t.Errorf("suppressed result %d: %+v", i, r.Suppressions)
			}
		} else if len(r.Suppressions) != 0 {
			t.Errorf("active result %d carries suppressions %+v", i, r.Suppressions)
		}
	}
	if suppressed != 1 {
		t.Errorf("%d suppressed results, want 1", suppressed)
	}
	rl := run.Results[0].RelatedLocations
	if len(rl) != 1 || rl[0].ID != 1 || rl[0].Message.Text != "the Rollout's name" || rl[0].PhysicalLocation.Region.StartLine != 5 ||
		rl[0].PhysicalLocation.Region.EndLine != 5 || rl[0].PhysicalLocation.Region.EndColumn != 17 ||
		rl[0].PhysicalLocation.ArtifactLocation.URIBaseID != "%SRCROOT%" {
		t.Errorf("related locations %+v", rl)
	}
}

// A file outside --sarif-root is named by an absolute file URI, not a
// relative path that would escape the repository.
func TestSARIFOutsideRoot(t *testing.T) {
	res := lintDir(t, "testdata/bundle")
	root := t.TempDir()
	out := writeFormat(t, "sarif", res, report.Options{SARIFRoot: root, AllRules: all.Rules()})
	var log sarifLog
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/bundle/rollout.yaml")
	a := log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation
	if a.URI != "file://"+filepath.ToSlash(abs) || a.URIBaseID != "" {
		t.Errorf("artifact outside the root = %+v", a)
	}
}

// synthetic builds a result of n findings with severities cycling
// info, warning, error, on the lines of a real file.
func synthetic(n int) *analyzer.Result {
	res := &analyzer.Result{}
	for i := 0; i < n; i++ {
		sev := rules.Severity(i%3 + 1)
		res.Diagnostics = append(res.Diagnostics, rules.Diagnostic{
			RuleID: "RL1001", Name: "set-weight-range", Severity: sev, Message: strings.Repeat("m", 40) + " " + sev.String(),
			Pos: graph.Position{File: "testdata/bundle/rollout.yaml", Line: i%20 + 1, Column: 1, EndLine: i%20 + 1, EndColumn: 2},
		})
	}
	return res
}

func TestSARIFTruncatesToGitHubLimits(t *testing.T) {
	sch := sarifSchema(t)
	defer func(r, g int) { report.MaxSARIFResults, report.MaxSARIFGzipBytes = r, g }(report.MaxSARIFResults, report.MaxSARIFGzipBytes)

	t.Run("results per run", func(t *testing.T) {
		report.MaxSARIFResults = 10
		var warn bytes.Buffer
		out := writeFormat(t, "sarif", synthetic(30), report.Options{AllRules: all.Rules(), Warnings: &warn})
		validateSARIF(t, sch, out)
		var log sarifLog
		if err := json.Unmarshal(out, &log); err != nil {
			t.Fatal(err)
		}
		rs := log.Runs[0].Results
		if len(rs) != 10 {
			t.Fatalf("kept %d results, want 10", len(rs))
		}
		for _, r := range rs {
			if r.Level != "error" {
				t.Errorf("kept a %s while errors were dropped", r.Level)
			}
		}
		if !strings.Contains(warn.String(), "20 of 30 findings dropped") || !strings.Contains(warn.String(), "at most 10 results") {
			t.Errorf("warning = %q", warn.String())
		}
	})
	t.Run("gzip size", func(t *testing.T) {
		report.MaxSARIFResults = 25000
		full := writeFormat(t, "sarif", synthetic(3000), report.Options{AllRules: all.Rules(), Warnings: &bytes.Buffer{}})
		report.MaxSARIFGzipBytes = 8 << 10
		var warn bytes.Buffer
		out := writeFormat(t, "sarif", synthetic(3000), report.Options{AllRules: all.Rules(), Warnings: &warn})
		validateSARIF(t, sch, out)
		if len(out) >= len(full) || !strings.Contains(warn.String(), "gzip-compressed") {
			t.Fatalf("size %d (untruncated %d), warning %q", len(out), len(full), warn.String())
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		if _, err := zw.Write(out); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if n := z.Len(); n > report.MaxSARIFGzipBytes {
			t.Errorf("gzip size %d exceeds %d", n, report.MaxSARIFGzipBytes)
		}
	})
}

func TestSARIFEmptyResultIsValid(t *testing.T) {
	out := writeFormat(t, "sarif", &analyzer.Result{}, report.Options{})
	validateSARIF(t, sarifSchema(t), out)
	if !bytes.Contains(out, []byte(`"results": []`)) || !bytes.Contains(out, []byte(`"rules": []`)) {
		t.Errorf("results and rules must be present even when empty:\n%s", out)
	}
}

// The schema check must be able to fail: a level GitHub's README examples
// misuse ("high") and a missing driver are both invalid SARIF.
func TestSARIFSchemaRejectsInvalid(t *testing.T) {
	sch := sarifSchema(t)
	for _, doc := range []string{
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"level":"high","message":{"text":"m"}}]}]}`,
		`{"version":"2.1.0","runs":[{"results":[]}]}`,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(v) == nil {
			t.Errorf("schema accepted invalid SARIF %s", doc)
		}
	}
}

// Findings without a full position (for example from a lint hook) still give
// valid SARIF: unset lines and columns are left out, a missing line becomes 1.
func TestSARIFPartialPositions(t *testing.T) {
	res := &analyzer.Result{Diagnostics: []rules.Diagnostic{
		{RuleID: "RL0009", Name: "internal-error", Severity: rules.Error, Message: "no position", Pos: graph.Position{File: "<bundle>"}},
		{RuleID: "RL1001", Name: "set-weight-range", Severity: rules.Error, Message: "no end",
			Pos:     graph.Position{File: "testdata/bundle/rollout.yaml", Line: 24, Column: 20},
			Related: []rules.Related{{File: "testdata/bundle/rollout.yaml", Line: 0, Column: 0, Message: "somewhere"}}},
	}}
	out := writeFormat(t, "sarif", res, report.Options{AllRules: all.Rules()})
	validateSARIF(t, sarifSchema(t), out)
	var log sarifLog
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	r := log.Runs[0].Results
	if reg := r[0].Locations[0].PhysicalLocation.Region; reg.StartLine != 1 || reg.EndLine != 0 {
		t.Errorf("region without position = %+v", reg)
	}
	if reg := r[1].Locations[0].PhysicalLocation.Region; reg.StartLine != 24 || reg.StartColumn != 20 || reg.EndLine != 0 {
		t.Errorf("region without end = %+v", reg)
	}
}

func TestSemanticVersion(t *testing.T) {
	for v, want := range map[string]string{
		"v1.2.3":                  "1.2.3",
		"0.4.0":                   "0.4.0",
		"v0.1.0-rc.1":             "0.1.0-rc.1",
		"v0.1.0-3-gabc1234-dirty": "0.1.0-3-gabc1234-dirty", // git describe past a tag
		"dev":                     "0.0.0-dev",
		"":                        "0.0.0-dev",
		"e0680a6-dirty":           "0.0.0-dev+e0680a6-dirty", // git describe without a tag
		"v1.2":                    "0.0.0-dev+v1.2",
		"weird version!":          "0.0.0-dev",
	} {
		if got := report.SemanticVersion(v); got != want {
			t.Errorf("SemanticVersion(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestRuleDocsURI(t *testing.T) {
	for v, ref := range map[string]string{
		"v1.2.3": "v1.2.3", "1.2.3": "v1.2.3", // a release: its tag
		"v1.2.3-rc.1": "main", "v0.1.0-3-gabc1234": "main", "dev": "main", "": "main",
	} {
		if got, want := report.RuleDocsURI(v), report.InformationURI+"/blob/"+ref+"/docs/rules/"; got != want {
			t.Errorf("RuleDocsURI(%q) = %q, want %q", v, got, want)
		}
	}
}

// A finding's related locations are linked from its message as [text](id),
// ids matching the relatedLocations; brackets in the text are escaped, and
// past maxMessageLinks the rest are counted.
func TestSARIFMessageLinks(t *testing.T) {
	res := lintDir(t, "testdata/bundle")
	d := res.Diagnostics[0]
	d.Message = `metric result[0] \ x`
	d.Detail = `It [is] wrong.`
	d.Related = nil
	for i := range 12 {
		d.Related = append(d.Related, rules.Related{File: d.Pos.File, Line: i + 1, Column: 1, Message: fmt.Sprintf("object [%d]", i)})
	}
	d.Related[1].Message = ""
	res.Diagnostics = []rules.Diagnostic{d}
	out := writeFormat(t, "sarif", res, report.Options{AllRules: all.Rules()})
	validateSARIF(t, sarifSchema(t), out)
	var log sarifLog
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	r := log.Runs[0].Results[0]
	want := `metric result\[0\] \\ x. It \[is\] wrong. (related: [object \[0\]](1), [` + d.Pos.File + `:2](2), [object \[2\]](3), [object \[3\]](4), ` +
		`[object \[4\]](5), [object \[5\]](6), [object \[6\]](7), [object \[7\]](8), [object \[8\]](9), [object \[9\]](10) and 2 more)`
	if r.Message.Text != want {
		t.Errorf("message\n got  %s\n want %s", r.Message.Text, want)
	}
	if len(r.RelatedLocations) != 12 {
		t.Fatalf("%d related locations, want 12", len(r.RelatedLocations))
	}
	for i, rl := range r.RelatedLocations {
		if rl.ID != i+1 || rl.PhysicalLocation.Region.StartLine != i+1 {
			t.Errorf("related location %d: id %d line %d", i, rl.ID, rl.PhysicalLocation.Region.StartLine)
		}
	}
}

// A live object (lint --cluster) is a related location GitHub accepts: a
// physical location under the CLUSTER base, which names the cluster and has
// no URI of its own, plus a logical location; a partial read is a tool
// execution notification; text and JSON say what was read.
func TestSARIFLiveLocations(t *testing.T) {
	res := lintDir(t, "testdata/bundle")
	d := res.Diagnostics[0]
	d.Related = []rules.Related{{File: "cluster:Rollout/shop/cart", Line: 24, Column: 9, Message: "Rollout shop/cart manages the same route"}}
	res.Diagnostics = []rules.Diagnostic{d}
	cl := &report.Cluster{Server: "https://127.0.0.1:6443", Context: "e2e", Objects: 7, Replaced: 1, Partial: true,
		Problems: []string{"VirtualService in namespace shop: forbidden"}}
	out := writeFormat(t, "sarif", res, report.Options{AllRules: all.Rules(), Cluster: cl})
	validateSARIF(t, sarifSchema(t), out)
	var log struct {
		Runs []struct {
			OriginalURIBaseIDs map[string]map[string]any `json:"originalUriBaseIds"`
			Invocations        []struct {
				ExecutionSuccessful        bool `json:"executionSuccessful"`
				ToolExecutionNotifications []struct {
					Level   string                `json:"level"`
					Message struct{ Text string } `json:"message"`
				} `json:"toolExecutionNotifications"`
			} `json:"invocations"`
			Results []struct {
				RelatedLocations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI         string                `json:"uri"`
							URIBaseID   string                `json:"uriBaseId"`
							Description struct{ Text string } `json:"description"`
						} `json:"artifactLocation"`
						Region struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
					LogicalLocations []struct {
						FullyQualifiedName string `json:"fullyQualifiedName"`
						Kind               string `json:"kind"`
					} `json:"logicalLocations"`
				} `json:"relatedLocations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	base, ok := run.OriginalURIBaseIDs["CLUSTER"]
	if !ok || base["uri"] != nil || !strings.Contains(fmt.Sprint(base["description"]), "https://127.0.0.1:6443 (context e2e)") {
		t.Errorf("CLUSTER base: %v", run.OriginalURIBaseIDs)
	}
	rl := run.Results[0].RelatedLocations[0]
	if a := rl.PhysicalLocation.ArtifactLocation; a.URI != "Rollout/shop/cart" || a.URIBaseID != "CLUSTER" || !strings.Contains(a.Description.Text, "live object") {
		t.Errorf("live artifact: %+v", a)
	}
	if rl.PhysicalLocation.Region.StartLine != 24 || len(rl.LogicalLocations) != 1 || rl.LogicalLocations[0].FullyQualifiedName != "cluster:Rollout/shop/cart" {
		t.Errorf("live location: %+v", rl)
	}
	if inv := run.Invocations; len(inv) != 1 || !inv[0].ExecutionSuccessful || len(inv[0].ToolExecutionNotifications) != 1 ||
		!strings.Contains(inv[0].ToolExecutionNotifications[0].Message.Text, "forbidden") {
		t.Errorf("invocations: %+v", inv)
	}
	// Without live objects or --cluster there is no CLUSTER base.
	plain := writeFormat(t, "sarif", lintDir(t, "testdata/bundle"), report.Options{AllRules: all.Rules()})
	if bytes.Contains(plain, []byte("CLUSTER")) || bytes.Contains(plain, []byte("invocations")) {
		t.Error("a lint without the cluster names a CLUSTER base or an invocation")
	}

	text := string(writeFormat(t, "text", res, report.Options{Cluster: cl}))
	for _, want := range []string{"    cluster:Rollout/shop/cart:24:9: Rollout shop/cart manages the same route",
		"linted with 7 live objects from the cluster at https://127.0.0.1:6443 (context e2e), 1 replaced by local files; PARTIAL: 1 list not read completely"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var js struct {
		Cluster *report.Cluster `json:"cluster"`
	}
	if err := json.Unmarshal(writeFormat(t, "json", res, report.Options{Cluster: cl}), &js); err != nil || js.Cluster == nil || !js.Cluster.Partial || js.Cluster.Objects != 7 {
		t.Errorf("JSON cluster: %+v %v", js.Cluster, err)
	}
}
