package all_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
	"github.com/rolloutlint/rolloutlint/rules/ruletest"
)

// TestKindsDeclared checks Rule.Kinds of every Go rule: over every rule's
// testdata and every bundle under testdata/bundles, the rule must report
// exactly the same on the bundle cut down to the objects of its declared
// kinds as on the whole bundle. A rule that reads a kind it does not declare
// (directly, or through a semantics package such as analysisrun) reports
// something else once those objects are gone — a reference no longer found,
// a conflict no longer seen — and fails here. The Rego policies get the same
// guarantee by construction: only their declared kinds are converted into
// their input, and a policy reading an undeclared kind is rejected at load
// (policies.TestUndeclaredKindReadIsRejectedAtLoad).
func TestKindsDeclared(t *testing.T) {
	rs := all.Rules()
	var goRules []*rules.Rule
	for _, r := range rs {
		// RL0008 (a suppression that matches no finding) reads the other
		// rules' findings, not objects: it is checked by its own testdata.
		if r.Source == rules.SourceGo && r.ID != analyzer.RuleSuppressionUnused {
			goRules = append(goRules, r)
		}
	}
	// Rules sharing a kind set share the cut-down graph.
	byKinds := map[string][]*rules.Rule{}
	for _, r := range goRules {
		byKinds[kindSetKey(r.Kinds)] = append(byKinds[kindSetKey(r.Kinds)], r)
	}
	dirs := bundleDirs(t)
	if len(dirs) < 50 {
		t.Fatalf("found only %d testdata bundles", len(dirs))
	}
	checked := 0
	for _, dir := range dirs {
		files, err := ruletest.Files(dir)
		if err != nil || len(files) == 0 {
			continue
		}
		var cfg *config.Config
		if p := filepath.Join(dir, config.FileName); fileExists(p) {
			if cfg, err = config.Load(p); err != nil {
				t.Fatal(err)
			}
		}
		lopts := load.Options{}
		if cfg != nil {
			lopts.Namespace = cfg.Namespace
		}
		full, err := load.Paths(files, lopts)
		if err != nil {
			t.Fatal(err)
		}
		want := findings(full, goRules, cfg)
		for key, group := range byKinds {
			g, err := load.Paths(files, lopts)
			if err != nil {
				t.Fatal(err)
			}
			cut := cutTo(g, group[0].Kinds)
			got := findings(cut, group, cfg)
			for _, r := range group {
				if w, g := want[r.ID], got[r.ID]; w != g {
					t.Errorf("%s reads kinds it does not declare (Kinds: %s): on %s cut down to them it reports\n%s\ninstead of\n%s",
						r.ID, key, dir, orNone(g), orNone(w))
				}
				checked++
			}
		}
	}
	t.Logf("%d rule × bundle pairs compared", checked)
}

// TestKindNames checks that every built-in rule's Kinds are kind names of
// model/kinds (the one list of kind names) or policies' "*".
func TestKindNames(t *testing.T) {
	for _, r := range all.Rules() {
		for _, k := range r.Kinds {
			if !kinds.IsName(k) && k != "*" {
				t.Errorf("%s: Kinds names %q, which is not a model/kinds name", r.ID, k)
			}
		}
	}
}

// cutTo returns a graph of g's objects of the given kinds, with g's files and
// loader problems.
func cutTo(g *graph.Graph, keep []string) *graph.Graph {
	want := map[string]bool{}
	for _, k := range keep {
		want[k] = true
	}
	var res []*graph.Resource
	for _, r := range g.Resources {
		if want[r.Kind] || want["*"] {
			res = append(res, r)
		}
	}
	return graph.New(g.DefaultNamespace, res, g.Files, g.Problems)
}

// findings runs the rules (each enabled, opt-in or not) and returns each
// rule's findings, suppressed ones included, one per line.
func findings(g *graph.Graph, rs []*rules.Rule, cfg *config.Config) map[string]string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	res := analyzer.Run(g, analyzer.Options{Rules: rs, Config: cfg, Enable: ids, Mode: rules.ModeCLI,
		Globals: rules.Globals{IstioVersion: "1.28"}})
	lines := map[string][]string{}
	for _, d := range res.Diagnostics {
		var rel []string
		for _, r := range d.Related {
			rel = append(rel, fmt.Sprintf("%s:%d:%d %s", r.File, r.Line, r.Column, r.Message))
		}
		lines[d.RuleID] = append(lines[d.RuleID], fmt.Sprintf("  %s %s %q related %q suppressed=%v", d.Pos, d.Severity, d.Message, rel, d.Suppressed != nil))
	}
	out := map[string]string{}
	for id, ls := range lines {
		out[id] = strings.Join(ls, "\n")
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "  (nothing)"
	}
	return s
}

func kindSetKey(ks []string) string {
	s := append([]string(nil), ks...)
	sort.Strings(s)
	return "[" + strings.Join(s, ", ") + "]"
}

// bundleDirs lists every rule's testdata directory and every bundle
// directory under testdata/bundles.
func bundleDirs(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, root := range []string{testdataRoot, "../../testdata/bundles"} {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(out)
	return out
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
