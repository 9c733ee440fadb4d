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

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
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

// Env is what one run of the command line works with: its standard streams
// and the rule registry. Commands read it instead of package-level state, so
// several runs (tests) can go side by side in one process.
type Env struct {
	In       io.Reader
	Out, Err io.Writer
	// builtin returns the built-in rules; nil means the registry (all.Rules).
	// Tests set it to add probe rules.
	builtin func() []*rules.Rule
}

// Main runs the command line and returns the process exit code.
func Main(args []string, in io.Reader, out, errw io.Writer) int {
	e := &Env{In: in, Out: out, Err: errw}
	return e.Run(args)
}

// Run runs the command line with args (without the program name) and returns
// the exit code.
func (e *Env) Run(args []string) int {
	root := newRoot(e)
	var prof profiler
	prof.register(root)
	root.SetArgs(args)
	root.SetIn(e.In)
	root.SetOut(e.Out)
	root.SetErr(e.Err)
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
		_, _ = fmt.Fprintf(e.Err, "rolloutlint: %v\n", err)
		return ExitFailure
	}
}

// newRoot builds the whole command tree. Every command is listed here; each
// is built by its own constructor, with its flags in one options struct.
func newRoot(e *Env) *cobra.Command {
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
	root.AddCommand(
		newLint(e),
		newRules(e),
		newExplain(e),
		newPlan(e),
		newPolicy(e),
		newWebhook(e),
		newVersion(e),
	)
	return root
}

func newVersion(e *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(e.Out, "rolloutlint", VersionString())
			return err
		},
	}
}

// builtinRules returns the built-in rules.
func (e *Env) builtinRules() []*rules.Rule {
	if e.builtin != nil {
		return e.builtin()
	}
	return all.Rules()
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
