package all_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// FuzzRules runs every rule over arbitrary input, seeded with the rules'
// testdata: no rule may panic or fail (an RL0009 finding), whatever the
// loader managed to decode.
func FuzzRules(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(testdataRoot, "*", "*.yaml"))
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	rs := all.Rules()
	f.Fuzz(func(t *testing.T, data []byte) {
		g := load.Inputs([]load.Input{{Path: "f.yaml", Data: data}}, load.Options{Limits: load.Limits{MaxAliasNodes: 20000}})
		res := analyzer.Run(g, analyzer.Options{Rules: rs, Parallelism: 1})
		for _, d := range res.Diagnostics {
			if d.RuleID == analyzer.RuleInternal {
				t.Fatalf("%s", d.Message)
			}
			if d.Pos.Line < 1 {
				t.Fatalf("%s without a line: %s", d.RuleID, d.Message)
			}
		}
	})
}
