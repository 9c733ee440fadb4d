package policies

import "github.com/rolloutlint/rolloutlint/analyzer/config"

func parseConfig(text string) (*config.Config, error) {
	return config.Parse("test.rolloutlint.yaml", []byte(text))
}
