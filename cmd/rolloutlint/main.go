// Command rolloutlint checks Argo Rollouts + Istio manifests for the mistakes
// that live between objects, and predicts the xDS pushes of every canary step.
package main

import (
	"fmt"
	"os"

	// First: raises GOGC before the dependencies' initialisers run.
	_ "github.com/rolloutlint/rolloutlint/internal/earlygc"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/policies"
)

func main() {
	memlimit.Enable()
	// A policy that keeps allocating inside one built-in call after it was
	// stopped for its memory would otherwise grow until the machine stops it.
	policies.OnRunaway = func(msg string) {
		_, _ = fmt.Fprintln(os.Stderr, "rolloutlint:", msg)
		os.Exit(cli.ExitFailure)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
