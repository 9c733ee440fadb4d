package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
)

// FuzzWriters feeds arbitrary messages, paths and positions to every writer:
// none may panic, JSON and SARIF must stay valid JSON (SARIF also valid
// against the schema), and each GitHub annotation must stay on one line.
func FuzzWriters(f *testing.F) {
	f.Add("step 2: setWeight 120", "deploy/rollout.yaml", "spec.strategy.canary.steps[2]", 12, 9, "RL1001")
	f.Add("multi\nline %0A ::error:: message, with: colons", "dir with space/ü.yaml", "metadata.annotations[\"a/b\"]", 0, -3, "RL2001")
	f.Add("", "", "", 1<<30, 1<<30, "")
	f.Add("colon", ":", "", 1, 1, "RL0001") // found by the fuzzer: ":" read as a URI scheme
	f.Add("\x00\xff\xfe invalid utf-8 \u2028", "C:\\\\win\\path.yaml", "", 1, 1, "RL0001")
	sch := sarifSchema(f)
	f.Fuzz(func(t *testing.T, msg, file, path string, line, col int, id string) {
		d := rules.Diagnostic{
			RuleID: id, Name: "fuzz", Severity: rules.Severity(1 + (len(msg) % 3)), Message: msg, Path: path,
			Pos:     graph.Position{File: file, Line: line, Column: col, EndLine: line, EndColumn: col + 1},
			Related: []rules.Related{{File: file, Line: line, Column: col, Message: msg}},
		}
		res := &analyzer.Result{Diagnostics: []rules.Diagnostic{d}}
		res.Summary.Errors = 1
		for _, format := range report.Formats() {
			w, err := report.Lookup(format)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := w(&out, res, report.Options{Version: "fuzz", Warnings: &bytes.Buffer{}}); err != nil {
				continue // a clean error is fine; a panic is not
			}
			switch format {
			case "json":
				if !json.Valid(out.Bytes()) {
					t.Fatalf("json output is not valid JSON:\n%s", out.String())
				}
			case "sarif":
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
				if err != nil {
					t.Fatalf("sarif output is not valid JSON: %v", err)
				}
				if err := sch.Validate(doc); err != nil {
					t.Fatalf("sarif output fails the schema: %v", err)
				}
			case "github":
				for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
					if l != "" && !strings.HasPrefix(l, "::") {
						t.Fatalf("annotation split across lines: %q", out.String())
					}
				}
			}
		}
	})
}
