// Package cli holds rolloutlint's cobra commands. Main runs them with explicit
// streams so tests drive the real command line.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK       = 0 // nothing at or above --fail-level
	ExitFindings = 1 // findings at or above --fail-level
	ExitFailure  = 2 // usage, config, I/O or internal failure
)

// Version is set at build time with -ldflags "-X .../cli.Version=v1.2.3";
// otherwise the module version from the build info is used.
var Version = ""

// VersionString returns the tool version.
func VersionString() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// exitError carries an exit code through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Streams are the command's standard streams.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// Main runs the command line and returns the process exit code.
func Main(args []string, in io.Reader, out, errw io.Writer) int {
	s := &Streams{In: in, Out: out, Err: errw}
	root := newRoot(s)
	var prof profiler
	prof.register(root)
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	err := root.Execute()
	if perr := prof.stop(); perr != nil && err == nil {
		err = perr
	}
	var ee exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	default:
		_, _ = fmt.Fprintf(errw, "rolloutlint: %v\n", err)
		return ExitFailure
	}
}

func newRoot(s *Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "rolloutlint",
		Short: "Lint Argo Rollouts + Istio manifests and predict each canary step's xDS pushes",
		Long: `rolloutlint reads a bundle of manifests (Rollouts, Services, VirtualServices,
DestinationRules, AnalysisTemplates, Argo CD Applications), builds one resource graph and
reports the mistakes that live between the objects, each at its file:line:column.

Exit codes: 0 nothing at or above --fail-level, 1 findings at or above it,
2 usage, configuration, I/O or internal failure.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       VersionString(),
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())
	})
	root.AddCommand(newLint(s), newRules(s), newExplain(s), newVersion(s))
	for _, extra := range extraCommands {
		root.AddCommand(extra(s))
	}
	return root
}

// extraCommands lets other files of this package (plan, webhook, policy)
// register their commands without editing newRoot.
var extraCommands []func(*Streams) *cobra.Command

func newVersion(s *Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(s.Out, "rolloutlint", VersionString())
			return err
		},
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
