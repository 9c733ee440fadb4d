package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestFlagUsageHasNoBackquotes keeps back-quotes out of every flag's usage:
// pflag takes the first back-quoted word as the flag's value name, so
// "the chart a `helm template` rendered" was listed as
// "--stdin-filename helm template" in --help.
func TestFlagUsageHasNoBackquotes(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: usage has a back-quote, which --help shows as the value name: %q", c.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&Env{}))
}

// TestVersionFlagMatchesVersionCommand: --version and -v print the line
// `rolloutlint version` prints (cobra's default was "rolloutlint version dev").
func TestVersionFlagMatchesVersionCommand(t *testing.T) {
	code, want, _ := runMain("version")
	if code != 0 || !strings.HasPrefix(want, "rolloutlint ") || !strings.Contains(want, "(commit ") {
		t.Fatalf("version: exit %d, %q", code, want)
	}
	for _, flag := range []string{"--version", "-v"} {
		if code, got, _ := runMain(flag); code != 0 || got != want {
			t.Errorf("%s: exit %d, %q; want %q", flag, code, got, want)
		}
	}
}
