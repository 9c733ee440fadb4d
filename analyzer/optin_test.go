package analyzer_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/rules"
)

// TestOptInRules checks that an opt-in rule runs only when the config or
// --enable names it, by ID or glob, and that --disable still wins.
func TestOptInRules(t *testing.T) {
	optIn := &rules.Rule{ID: "RL6999", Name: "advisory", Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Info, OptIn: true,
		Run: func(*rules.Pass) error { return nil }}
	regular := &rules.Rule{ID: "RL1999", Name: "regular", Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Error,
		Run: func(*rules.Pass) error { return nil }}
	cfg := func(t *testing.T, text string) *config.Config {
		c, err := config.Parse(".rolloutlint.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := []struct {
		name string
		opts analyzer.Options
		want bool
	}{
		{"default off", analyzer.Options{}, false},
		{"enable flag", analyzer.Options{Enable: []string{"RL6999"}}, true},
		{"enable glob", analyzer.Options{Enable: []string{"RL6*"}}, true},
		{"config severity", analyzer.Options{Config: cfg(t, "rules:\n  RL6999: warning\n")}, true},
		{"config glob", analyzer.Options{Config: cfg(t, "rules:\n  RL6*: info\n")}, true},
		{"config off", analyzer.Options{Config: cfg(t, "rules:\n  RL6999: off\n")}, false},
		{"disable wins", analyzer.Options{Enable: []string{"RL6999"}, Disable: []string{"RL6*"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Rules = []*rules.Rule{optIn, regular}
			enabled, _ := analyzer.Select(c.opts)
			got := false
			regularOn := false
			for _, r := range enabled {
				got = got || r == optIn
				regularOn = regularOn || r == regular
			}
			if got != c.want {
				t.Errorf("opt-in rule enabled = %v, want %v", got, c.want)
			}
			if !regularOn {
				t.Errorf("a regular rule must stay enabled")
			}
		})
	}
}
