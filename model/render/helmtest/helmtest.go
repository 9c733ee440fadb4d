// Package helmtest gives a test binary the rolloutlint-helm companion: the
// binary itself. A package whose tests render charts calls Main from its
// TestMain; the charts are then rendered the way rolloutlint renders them,
// by a companion process over helmrpc, with no binary to build first.
package helmtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/render/helmengine"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
)

// Main serves as rolloutlint-helm when the test binary is run as
// `BINARY serve` (how rolloutlint starts the companion); otherwise it
// points $ROLLOUTLINT_HELM at the test binary and runs the tests.
func Main(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == helmrpc.ServeCommand {
		if err := helmrpc.Serve(os.Stdin, os.Stdout, helmengine.Render, helmrpc.ServeOptions{Version: "test"}); err != nil {
			_, _ = fmt.Fprintln(os.Stderr, "helmtest:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	exe, err := os.Executable()
	if err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "helmtest: finding the test binary:", err)
		os.Exit(1)
	}
	if err := os.Setenv(helmrpc.EnvPath, exe); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "helmtest:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
