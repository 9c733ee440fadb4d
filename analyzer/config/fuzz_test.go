package config_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
)

// FuzzParse feeds arbitrary bytes to the config reader: it must not panic,
// and a config it accepts must answer every question the lint asks of it
// (the rule settings, excludes, paths) without panicking either.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"rules:\n  RL2*: warning\n  RL1001: off\n  RL9001: {severity: info, options: {timeout: 2s}}\n",
		"paths: [deploy/]\nexclude: ['**/charts/**']\nnamespace: shop\nargocd: true\nistioVersion: '1.30'\nfailLevel: warning\n",
		"policies: [policies]\n",
		"rules: [1, 2]\n",
		"rules:\n  RL1001: {options: {max: [1]}}\n",
		"a: &a [*a]\n",
		"exclude: ['[']\n",
		"\xef\xbb\xbfrules: {}\n",
		"{{ .Values }}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse("f.rolloutlint.yaml", data)
		if err != nil || cfg == nil {
			return
		}
		for _, id := range []string{"RL0001", "RL1001", "RL2003", "RL9001", "x"} {
			_ = cfg.For(id)
		}
		for _, p := range []string{"deploy/a.yaml", "charts/x/templates/r.yaml", "", "/abs/path.yaml"} {
			_ = cfg.Excluded(p)
		}
		for _, p := range cfg.Paths {
			_ = cfg.Resolve(p)
		}
	})
}
