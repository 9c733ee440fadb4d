package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/rules"
)

func parse(t *testing.T, src string) *config.Config {
	t.Helper()
	c, err := config.Parse("/repo/.rolloutlint.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGlobPrecedence(t *testing.T) {
	c := parse(t, `rules:
  RL2003: error
  RL2*: off
  RL1*: warning
  RL10?2: info
  RL1001:
    severity: error
    options: {max: 3}
`)
	cases := []struct {
		id      string
		enabled bool
		sev     rules.Severity
	}{
		{"RL2003", true, rules.Error},   // exact ID wins over a later glob
		{"RL2004", false, 0},            // glob off
		{"RL1005", true, rules.Warning}, // glob severity
		{"RL1002", true, rules.Info},    // later glob wins over earlier glob
		{"RL1001", true, rules.Error},   // exact with options
		{"RL3001", true, 0},             // untouched: default
	}
	for _, c2 := range cases {
		s := c.For(c2.id)
		if s.Enabled != c2.enabled || s.Severity != c2.sev {
			t.Errorf("For(%s) = %+v, want enabled %v severity %v", c2.id, s, c2.enabled, c2.sev)
		}
	}
	if s := c.For("RL1001"); s.Options == nil || s.Options["max"] != 3 {
		t.Errorf("options = %v", s.Options)
	}
	var nilCfg *config.Config
	if s := nilCfg.For("RL1001"); !s.Enabled || s.Severity != 0 {
		t.Errorf("nil config: %+v", s)
	}
}

func TestExcludes(t *testing.T) {
	c := parse(t, `exclude:
  - "**/charts/**"
  - "vendor/*.yaml"
  - "**/*.generated.yaml"
`)
	cases := map[string]bool{
		"/repo/charts/app/templates/x.yaml": true,
		"/repo/deploy/charts/x.yaml":        true,
		"charts/x.yaml":                     true,
		"/repo/vendor/a.yaml":               true,
		"/repo/vendor/sub/a.yaml":           false, // * does not cross directories
		"/repo/deploy/rollout.yaml":         false,
		"/repo/a/b/c/x.generated.yaml":      true,
		"x.generated.yaml":                  true,
		"/repo/chartsx/a.yaml":              false,
	}
	for p, want := range cases {
		if got := c.Excluded(p); got != want {
			t.Errorf("Excluded(%q) = %v, want %v", p, got, want)
		}
	}
	var nilCfg *config.Config
	if nilCfg.Excluded("/repo/charts/a.yaml") {
		t.Errorf("nil config excludes")
	}
	// A path relative to another working directory is matched where it lies:
	// vendor/*.yaml is relative to the config's directory /repo.
	for _, c2 := range []struct {
		wd, path string
		want     bool
	}{
		{"/repo", "vendor/a.yaml", true},
		{"/repo/deploy", "../vendor/a.yaml", true},
		{"/elsewhere", "vendor/a.yaml", true}, // matched as given
		{"/elsewhere", "x/vendor/a.yaml", false},
		{"/other", "../vendor/a.yaml", false},
	} {
		if got := c.ExcludedFrom(c2.wd, c2.path); got != c2.want {
			t.Errorf("ExcludedFrom(%q, %q) = %v, want %v", c2.wd, c2.path, got, c2.want)
		}
	}
}

func TestErrorsHaveLineAndKey(t *testing.T) {
	cases := []struct {
		src  string
		line int
		key  string
	}{
		{"namespace: shop\nfailLevel: fatal\n", 2, "failLevel"},
		{"paths: [a, {b: c}]\n", 1, "paths"},
		{"rules:\n  RL1001: error\n  RL1002: sometimes\n", 3, "rules.RL1002"},
		{"rules:\n  RL1001:\n    severity: error\n    colour: red\n", 4, "rules.RL1001.colour"},
		{"rules:\n  not-a-rule: off\n", 2, "rules.not-a-rule"},
		{"rules:\n  RL1001:\n    options: [1, 2]\n", 3, "rules.RL1001.options"},
		{"rules: [RL1001]\n", 1, "rules"},
		{"\n\nnamespace: [a]\n", 3, "namespace"},
		{"profile: strict\n", 1, "profile"},
		{"- a\n", 1, ""},
		{"namespace: shop\nrules: [\n  a\n  - b\n", 2, ""}, // the unclosed bracket
		{"namespace: shop\nrules:\n  RL1001: off\n RL1002: off\n", 4, ""},
		{"namespace: shop\na: b: c\n", 2, ""},
	}
	for _, c := range cases {
		_, err := config.Parse("cfg.yaml", []byte(c.src))
		var ce *config.Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %v is not a *config.Error", c.src, err)
			continue
		}
		if ce.File != "cfg.yaml" || ce.Line != c.line || ce.Key != c.key {
			t.Errorf("%q: got %s (line %d key %q), want line %d key %q", c.src, ce, ce.Line, ce.Key, c.line, c.key)
		}
	}
}

func TestValidConfig(t *testing.T) {
	c := parse(t, `namespace: shop
paths: [deploy, base]
failLevel: warning
argocd: true
istioVersion: "1.30"
policies: policies
`)
	if c.Namespace != "shop" || len(c.Paths) != 2 || c.FailLevel != "warning" || !c.ArgoCD || c.IstioVersion != "1.30" || len(c.Policies) != 1 {
		t.Errorf("config = %+v", c)
	}
	if got := c.Resolve("deploy"); got != filepath.Join("/repo", "deploy") {
		t.Errorf("Resolve = %q", got)
	}
	if got := c.Resolve("/abs"); got != "/abs" {
		t.Errorf("Resolve(abs) = %q", got)
	}
	for _, src := range []string{"", "# only comments\n", "failLevel: none\n"} {
		if _, err := config.Parse("c.yaml", []byte(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

func TestFindUpward(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", config.FileName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := config.Find(deep); got != filepath.Join(root, "a", config.FileName) {
		t.Errorf("Find = %q", got)
	}
	if got := config.Find(root); got != "" && filepath.Dir(got) == root {
		t.Errorf("Find above the config = %q", got)
	}
	// A directory named like the config is not a config.
	if err := os.Mkdir(filepath.Join(deep, config.FileName), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := config.Find(deep); got != filepath.Join(root, "a", config.FileName) {
		t.Errorf("Find with a directory named .rolloutlint.yaml = %q", got)
	}
}

func TestCheckOptions(t *testing.T) {
	rs := []*rules.Rule{
		{ID: "RL2011", Options: []rules.Option{{Name: "versionKeys", Type: rules.OptStrings, Doc: "d"}}},
		{ID: "RL5001", Options: []rules.Option{{Name: "timeout", Type: rules.OptDuration, Doc: "d"}}},
		{ID: "RL5002", Options: []rules.Option{{Name: "timeout", Type: rules.OptDuration, Doc: "d"}}},
		{ID: "RL1001"},
	}
	cases := []struct {
		src, want string // want: "" or the error
	}{
		{"rules:\n  RL2011:\n    options: {versionKeys: [track]}\n", ""},
		{"rules:\n  RL5*:\n    options:\n      timeout: 2s\n", ""},
		{"rules:\n  RL2011:\n    options:\n      versionKeys: [track]\n      versionkeys: [x]\n",
			`/repo/.rolloutlint.yaml:5: rules.RL2011.options.versionkeys: unknown option (did you mean "versionKeys"?)`},
		{"rules:\n  RL2011:\n    severity: info\n    options:\n      keys: [x]\n",
			"/repo/.rolloutlint.yaml:5: rules.RL2011.options.keys: unknown option (known for RL2011: versionKeys)"},
		{"rules:\n  RL2011:\n    options: {versionKeys: track}\n",
			"/repo/.rolloutlint.yaml:3: rules.RL2011.options.versionKeys: must be a list of strings (option of RL2011)"},
		{"rules:\n  RL2011:\n    options: {versionKeys: [1, 2]}\n",
			"/repo/.rolloutlint.yaml:3: rules.RL2011.options.versionKeys: must be a list of strings (option of RL2011)"},
		{"rules:\n  RL5*:\n    options:\n      timeout: 10\n",
			`/repo/.rolloutlint.yaml:4: rules.RL5*.options.timeout: must be a duration such as "500ms" or "2s" (option of RL5001)`},
		{"rules:\n  RL5001:\n    options:\n      timeout: forever\n",
			`/repo/.rolloutlint.yaml:4: rules.RL5001.options.timeout: "forever" is not a positive duration such as "500ms" or "2s" (option of RL5001)`},
		{"rules:\n  RL1001:\n    options:\n      max: 3\n",
			"/repo/.rolloutlint.yaml:4: rules.RL1001.options.max: unknown option: RL1001 has no options"},
		{"rules:\n  RL9999:\n    options:\n      max: 3\n",
			"/repo/.rolloutlint.yaml:2: rules.RL9999: no rule matches RL9999 (see 'rolloutlint rules')"},
		// A typo of an ID (RL2103 for RL2013) or a glob of no theme would
		// leave the rule as it was: rejected, as --enable/--disable reject it.
		{"rules:\n  RL1001: warning\n  RL9999: off\n", "/repo/.rolloutlint.yaml:3: rules.RL9999: no rule matches RL9999 (see 'rolloutlint rules')"},
		{"rules:\n  RL7*: off\n", "/repo/.rolloutlint.yaml:2: rules.RL7*: no rule matches RL7* (see 'rolloutlint rules')"},
	}
	for _, c := range cases {
		err := parse(t, c.src).CheckOptions(rs)
		got := ""
		if err != nil {
			got = err.Error()
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Errorf("%q: error %T is not a *config.Error", c.src, err)
			}
		}
		if got != c.want {
			t.Errorf("%q:\n got  %s\n want %s", c.src, got, c.want)
		}
	}
	var nilCfg *config.Config
	if err := nilCfg.CheckOptions(rs); err != nil {
		t.Errorf("nil config: %v", err)
	}
}

// TestUnknownSettingSuggests: a misspelt top-level key names the setting it
// is probably a typo of, else lists the settings.
func TestUnknownSettingSuggests(t *testing.T) {
	for src, want := range map[string]string{
		"namepsace: shop\n":      `/repo/.rolloutlint.yaml:1: namepsace: unknown setting (did you mean "namespace"?)`,
		"failLevl: error\n":      `/repo/.rolloutlint.yaml:1: failLevl: unknown setting (did you mean "failLevel"?)`,
		"istioversion: x\n":      `/repo/.rolloutlint.yaml:1: istioversion: unknown setting (did you mean "istioVersion"?)`,
		"rule:\n  RL1001: off\n": `/repo/.rolloutlint.yaml:1: rule: unknown setting (did you mean "rules"?)`,
		"severity: error\n":      "/repo/.rolloutlint.yaml:1: severity: unknown setting (known: namespace, paths, exclude, failLevel, policies, argocd, istioVersion, rules)",
	} {
		_, err := config.Parse("/repo/.rolloutlint.yaml", []byte(src))
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got  %v\n want %s", src, err, want)
		}
	}
}

// TestKeySetTwice: YAML keeps one of two equal keys, so a setting written
// twice (a second rules: block, an ID listed again) would drop the other
// unnoticed; it is an error at the second, naming the first.
func TestKeySetTwice(t *testing.T) {
	for src, want := range map[string]string{
		"rules: {RL2*: off}\nnamespace: shop\nrules: {RL1*: off}\n":    "/repo/.rolloutlint.yaml:3: rules: set twice (first at line 1): keep one",
		"rules:\n  RL2003: error\n  RL2003: off\n":                     "/repo/.rolloutlint.yaml:3: rules.RL2003: set twice (first at line 2): keep one",
		"rules:\n  RL2011:\n    severity: info\n    severity: error\n": "/repo/.rolloutlint.yaml:4: rules.RL2011.severity: set twice (first at line 3): keep one",
		"rules:\n  RL2011:\n    options:\n      a: 1\n      a: 2\n":    "/repo/.rolloutlint.yaml:5: rules.RL2011.options.a: set twice (first at line 4): keep one",
	} {
		_, err := config.Parse("/repo/.rolloutlint.yaml", []byte(src))
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got  %v\n want %s", src, err, want)
		}
	}
}
