package golden_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// catalogueGolden holds the SARIF rule descriptors (tool.driver.rules) of
// every built-in rule, once. A bundle's sarif.golden leaves them out (see
// withoutCatalogue), so the ~240 KB of rule help is not repeated in every
// bundle's golden, and a new rule or a doc change regenerates this one file
// rather than every bundle's.
const catalogueGolden = bundlesDir + "/sarif-rules.golden"

// ruleCatalogue renders the descriptors of every built-in rule as the SARIF
// writer does for a lint, compares them with catalogueGolden and returns them
// by rule ID.
func ruleCatalogue(t *testing.T) map[string]any {
	t.Helper()
	rs := all.Rules()
	var buf bytes.Buffer
	err := report.SARIF(&buf, &analyzer.Result{Rules: rs}, report.Options{Version: cli.VersionString(), AllRules: rs})
	if err != nil {
		t.Fatalf("rendering the rule catalogue: %v", err)
	}
	descriptors := sarifRules(t, decodeSARIF(t, buf.Bytes()))
	if len(descriptors) != len(rs) {
		t.Fatalf("the catalogue has %d descriptors for %d rules", len(descriptors), len(rs))
	}
	text, err := encodeJSON(descriptors)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, filepath.FromSlash(catalogueGolden), text)
	byID := map[string]any{}
	for _, d := range descriptors {
		byID[d.(map[string]any)["id"].(string)] = d
	}
	return byID
}

// withoutCatalogue takes out of a SARIF log what every bundle shares, so
// that a bundle's golden holds its own results and adding a rule changes only
// the goldens of bundles where it fires: each built-in rule's descriptor,
// after checking that it is the catalogue's, and each result's ruleIndex,
// after checking that it points at the descriptor of the result's rule.
// Descriptors of rules outside the catalogue (user policies) stay whole.
func withoutCatalogue(t *testing.T, catalogue map[string]any, sarifOut []byte) []byte {
	t.Helper()
	log := decodeSARIF(t, sarifOut)
	descriptors := sarifRules(t, log)
	ids := make([]string, len(descriptors))
	var kept []any
	for i, d := range descriptors {
		id, _ := d.(map[string]any)["id"].(string)
		ids[i] = id
		if i > 0 && ids[i-1] >= id {
			t.Errorf("SARIF rules are not sorted by ID: %s after %s", id, ids[i-1])
		}
		want, ok := catalogue[id]
		if !ok {
			kept = append(kept, d)
			continue
		}
		if !reflect.DeepEqual(d, want) {
			t.Errorf("the SARIF descriptor of %s differs from the one in %s", id, catalogueGolden)
		}
	}
	run := log["runs"].([]any)[0].(map[string]any)
	run["tool"].(map[string]any)["driver"].(map[string]any)["rules"] = append([]any{}, kept...)
	results, _ := run["results"].([]any)
	for _, r := range results {
		res := r.(map[string]any)
		id, _ := res["ruleId"].(string)
		n, err := res["ruleIndex"].(json.Number).Int64()
		if err != nil || n < 0 || int(n) >= len(ids) || ids[n] != id {
			t.Errorf("result of %s has ruleIndex %v, which is not its rule's descriptor", id, res["ruleIndex"])
		}
		delete(res, "ruleIndex")
	}
	out, err := encodeJSON(log)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeSARIF(t *testing.T, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep numbers as written
	var log map[string]any
	if err := dec.Decode(&log); err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	return log
}

// sarifRules returns the rules array of the log's only run.
func sarifRules(t *testing.T, log map[string]any) []any {
	t.Helper()
	runs, _ := log["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("SARIF log has %d runs, want 1", len(runs))
	}
	tool, _ := runs[0].(map[string]any)["tool"].(map[string]any)
	driver, _ := tool["driver"].(map[string]any)
	rules, ok := driver["rules"].([]any)
	if !ok {
		t.Fatal("SARIF run has no tool.driver.rules")
	}
	return rules
}

// encodeJSON writes v as the SARIF writer does: two-space indent, no HTML
// escaping, keys sorted.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}
