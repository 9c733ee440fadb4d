// Command rolloutlint checks Argo Rollouts + Istio manifests for the mistakes
// that live between objects, and predicts the xDS pushes of every canary step.
package main

import (
	"os"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
)

func main() {
	memlimit.Enable()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
