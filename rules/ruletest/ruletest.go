// Package ruletest is the `# want` harness. A rule's testdata directory holds
// YAML files; a comment `# want "regexp"` (several may follow one another) on a
// line says a diagnostic of the rule under test must land on that line with a
// message matching the regexp (the message and its detail, as
// rules.Diagnostic.FullMessage joins them), and `# suppressed "regexp"` says the same of a
// diagnostic a suppression silences. Every file of the directory is loaded as
// one bundle and every rule runs, as in real use; only the rule under test's
// diagnostics are compared, and a missed or an unexpected one fails, as does
// a message that breaks CheckMessage (the first sentence too wide).
package ruletest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/analyzer/repo"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/policies"
	"github.com/rolloutlint/rolloutlint/rules"
)

// Want is one expectation: a diagnostic on File:Line matching Pattern,
// suppressed or not as Suppressed says.
type Want struct {
	File       string
	Line       int
	Pattern    *regexp.Regexp
	Suppressed bool
	matched    bool
}

// wantRe finds a marker; quoted regexps follow it, and another marker may
// follow them (`# want "a" # suppressed "b"`).
var wantRe = regexp.MustCompile(`#\s*(want|suppressed)\s+`)

// ParseWants reads the `# want` and `# suppressed` comments of a file.
func ParseWants(file string, data []byte) ([]*Want, error) {
	var out []*Want
	for i, line := range strings.Split(string(data), "\n") {
		m := wantRe.FindStringSubmatchIndex(line)
		for m != nil {
			marker := line[m[2]:m[3]]
			rest := strings.TrimSpace(line[m[1]:])
			for rest != "" && rest[0] != '#' {
				q, err := strconv.QuotedPrefix(rest)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %s needs quoted regexps: %w", file, i+1, marker, err)
				}
				s, _ := strconv.Unquote(q)
				re, err := regexp.Compile(s)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: bad %s regexp: %w", file, i+1, marker, err)
				}
				out = append(out, &Want{File: file, Line: i + 1, Pattern: re, Suppressed: marker == "suppressed"})
				rest = strings.TrimSpace(rest[len(q):])
			}
			line = rest
			if m = wantRe.FindStringSubmatchIndex(line); m != nil && m[0] != 0 {
				return nil, fmt.Errorf("%s:%d: text after the %s regexps: %s", file, i+1, marker, line)
			}
		}
	}
	return out, nil
}

// Files returns the manifest files of a testdata directory, sorted. The
// directory's .rolloutlint.yaml configures the run and is not a manifest.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && load.IsManifestName(e.Name()) && e.Name() != config.FileName {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// AllFiles is Files plus the files of the directory's deployable units:
// its subdirectories other than policies (a kustomization, a chart,
// templates and helpers included), which Run renders and lints as
// `rolloutlint lint DIR` does.
func AllFiles(dir string) ([]string, error) {
	out, err := Files(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == UserPoliciesDir {
			continue
		}
		err := filepath.WalkDir(filepath.Join(dir, e.Name()), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (load.IsManifestName(p) || isTemplateHelper(p)) {
				out = append(out, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

func isTemplateHelper(p string) bool { return strings.HasSuffix(p, ".tpl") }

// hasUnits reports whether a testdata directory holds deployable units in
// subdirectories, which Run renders and lints as `rolloutlint lint DIR` does.
func hasUnits(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != UserPoliciesDir {
			return true
		}
	}
	return false
}

// Setup lets a caller adjust the run (for example to load user policies from
// the testdata directory).
type Setup func(dir string, opts *analyzer.Options) error

// Run checks one rule against its testdata directory. The rule under test
// is enabled even when it is opt-in.
func Run(t *testing.T, all []*rules.Rule, ruleID, dir string, setups ...Setup) {
	t.Helper()
	files, err := AllFiles(dir)
	if err != nil {
		t.Fatalf("reading testdata: %v", err)
	}
	var wants []*Want
	// Findings about a user policy itself (RL0009) land in its .rego file:
	// `# want` comments there count too.
	regos, _ := filepath.Glob(filepath.Join(dir, UserPoliciesDir, "*.rego"))
	// Jsonnet is not rendered, and that note (RL0010) lands in the .jsonnet
	// file: Jsonnet's `#` comments hold wants too.
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".jsonnet") {
			regos = append(regos, p)
		}
		return nil
	})
	tree, treeFiles := treeDir(dir)
	read := map[string]bool{} // AllFiles lists the tree's files too when the directory has units
	for _, f := range append(append(append([]string(nil), files...), regos...), treeFiles...) {
		if read[f] {
			continue
		}
		read[f] = true
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := ParseWants(f, data)
		if err != nil {
			t.Fatal(err)
		}
		wants = append(wants, ws...)
	}
	var cfg *config.Config
	if p := filepath.Join(dir, config.FileName); fileExists(p) {
		if cfg, err = config.Load(p); err != nil {
			t.Fatal(err)
		}
	}
	opts := analyzer.Options{Rules: all, Config: cfg, Mode: rules.ModeCLI, Enable: []string{ruleID}}
	for _, s := range setups {
		if err := s(dir, &opts); err != nil {
			t.Fatalf("setup: %v", err)
		}
	}
	lopts := load.Options{}
	if cfg != nil {
		lopts.Namespace = cfg.Namespace
	}
	var res *analyzer.Result
	if hasUnits(dir) {
		rep, err := repo.Lint([]string{dir}, repo.Options{Analyzer: opts, Load: lopts, RepoRoot: dir})
		if err != nil {
			t.Fatal(err)
		}
		res = rep.Result
	} else {
		paths := files
		if tree != "" {
			paths = append(append([]string(nil), files...), tree)
		}
		g, err := load.Paths(paths, lopts)
		if err != nil {
			t.Fatal(err)
		}
		res = analyzer.Run(g, opts)
	}
	var readFiles []string
	for f := range read {
		readFiles = append(readFiles, f)
	}
	names := Names(readFiles)
	for _, d := range res.Diagnostics {
		if d.RuleID != ruleID {
			continue
		}
		for _, problem := range CheckMessage(&d, names) {
			t.Errorf("%s:%d:%d: %s: %s", d.Pos.File, d.Pos.Line, d.Pos.Column, d.RuleID, problem)
		}
		suppressed := d.Suppressed != nil
		ok := false
		for _, w := range wants {
			if !w.matched && w.Suppressed == suppressed && w.File == d.Pos.File && w.Line == d.Pos.Line && w.Pattern.MatchString(d.FullMessage()) {
				w.matched, ok = true, true
				break
			}
		}
		if !ok {
			what := "unexpected"
			if suppressed {
				what = "unexpected suppressed"
			}
			t.Errorf("%s:%d:%d: %s %s: %s", d.Pos.File, d.Pos.Line, d.Pos.Column, what, d.RuleID, d.FullMessage())
		}
	}
	for _, w := range wants {
		if !w.matched {
			what := ""
			if w.Suppressed {
				what = "suppressed "
			}
			t.Errorf("%s:%d: no %s%s diagnostic matching %q", w.File, w.Line, what, ruleID, w.Pattern)
		}
	}
}

// TreeDir is the subdirectory of a rule's testdata loaded as a directory,
// as `lint DIR` walks one (for rules about what a walk finds, such as
// symlinks); `# want` comments are read from its files through their
// symlinks.
const TreeDir = "tree"

// treeDir returns dir/tree when it exists, and the manifest-named files
// under it.
func treeDir(dir string) (string, []string) {
	tree := filepath.Join(dir, TreeDir)
	if st, err := os.Stat(tree); err != nil || !st.IsDir() {
		return "", nil
	}
	var files []string
	_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && load.IsManifestName(p) {
			if _, err := os.Stat(p); err == nil { // a symlink's target must exist to hold wants
				files = append(files, p)
			}
		}
		return nil
	})
	return tree, files
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// UserPoliciesDir is the subdirectory of a rule's testdata loaded as user
// Rego policies (for example a looping policy that provokes RL0009).
const UserPoliciesDir = "policies"

// UserPolicies is a Setup that loads dir/policies, when it exists, as user
// policies, as `lint --policy` would.
func UserPolicies(dir string, opts *analyzer.Options) error {
	p := filepath.Join(dir, UserPoliciesDir)
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return nil
	}
	rs, err := policies.LoadDirs([]string{p})
	if err != nil {
		return err
	}
	opts.Rules = append(append([]*rules.Rule(nil), opts.Rules...), rs...)
	return nil
}
