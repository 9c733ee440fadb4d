// Command rolloutlint-helm renders Helm charts for rolloutlint. rolloutlint
// starts it, once per run and only when what it lints holds a chart, as
// `rolloutlint-helm serve`, and sends it the charts to render on its
// standard input (see model/render/helmrpc). Helm lives in this binary so
// that its package initialisers do not run on every lint.
//
// It is installed beside rolloutlint: `go install ./...` in a checkout,
// `go install github.com/rolloutlint/rolloutlint/cmd/rolloutlint-helm@VERSION`,
// or the release archives and container image, which ship both.
package main

import (
	"fmt"
	"io"
	"os"

	// First: raises GOGC before Helm's initialisers run (its JSON Schema
	// meta-schemas, client-go's scheme), which allocate most of the
	// companion's start; a run renders a repository's charts and exits.
	_ "github.com/rolloutlint/rolloutlint/internal/earlygc"

	"github.com/rolloutlint/rolloutlint/internal/version"
	"github.com/rolloutlint/rolloutlint/model/render/helmengine"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
)

const usage = `rolloutlint-helm renders Helm charts for rolloutlint; it is not run by hand.

rolloutlint starts it when a lint holds a Helm chart: keep it beside the
rolloutlint binary, on PATH, or at $ROLLOUTLINT_HELM.

Usage:
  rolloutlint-helm --version   print the version and the protocol it speaks
  rolloutlint-helm serve       answer rolloutlint's requests on standard input
                               and output (what rolloutlint runs)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		_, _ = fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case helmrpc.ServeCommand:
		helmrpc.LogTo(stderr) // Helm's warnings, told apart from a crash's output
		if err := helmrpc.Serve(stdin, stdout, helmengine.Render, helmrpc.ServeOptions{Version: version.Get().Short()}); err != nil {
			_, _ = fmt.Fprintln(stderr, "rolloutlint-helm:", err)
			return 1
		}
		return 0
	case "--version", "-version", "version":
		_, _ = fmt.Fprintln(stdout, versionLine(version.Get()))
		return 0
	case "--help", "-help", "-h", "help":
		_, _ = fmt.Fprint(stdout, usage)
		return 0
	}
	_, _ = fmt.Fprintf(stderr, "rolloutlint-helm: unknown argument %q\n\n%s", args[0], usage)
	return 2
}

// versionLine is what --version prints: rolloutlint's version line with
// this command's name and the protocol.
func versionLine(i version.Info) string {
	commit := i.Commit
	if i.Modified {
		commit += "-dirty"
	}
	return fmt.Sprintf("rolloutlint-helm %s (protocol %d, commit %s, built %s, %s, %s)",
		i.Version, helmrpc.ProtocolVersion, commit, i.Date, i.GoVersion, i.Platform)
}
