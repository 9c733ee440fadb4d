package analyzer_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// TestPreparedSelectionRunsAsSelect: Run with a Selection made once by
// Prepare (used again for a second run) gives what Run selecting by itself
// gives, on every bundle of testdata, with its .rolloutlint.yaml when it has
// one, and with a config that sets severities, options and off.
func TestPreparedSelectionRunsAsSelect(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/bundles/*")
	extra, err := config.Parse(".rolloutlint.yaml", []byte("rules:\n  RL1*: warning\n  RL2003: off\n  RL6*: info\n"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		g, err := load.Paths([]string{dir}, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cfgs := []*config.Config{nil, extra}
		if text, err := os.ReadFile(filepath.Join(dir, ".rolloutlint.yaml")); err == nil {
			c, err := config.Parse(".rolloutlint.yaml", text)
			if err != nil {
				t.Fatal(err)
			}
			cfgs = append(cfgs, c)
		}
		for _, cfg := range cfgs {
			opts := analyzer.Options{Rules: all.Rules(), Config: cfg, Enable: []string{"RL6*"}, Mode: "webhook", Parallelism: 1}
			want := analyzer.Run(g, opts)
			opts.Selection = analyzer.Prepare(opts)
			for range 2 {
				got := analyzer.Run(g, opts)
				if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) || !reflect.DeepEqual(got.Rules, want.Rules) || got.Summary != want.Summary {
					t.Fatalf("%s: with a prepared selection\ngot  %+v\nwant %+v", dir, got.Diagnostics, want.Diagnostics)
				}
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("only %d runs compared", checked)
	}
}
