// Package cli holds rolloutlint's cobra commands. Main runs them with explicit
// streams so tests drive the real command line.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rolloutlint/rolloutlint/internal/version"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// Exit codes.
const (
	ExitOK       = 0 // nothing at or above --fail-level
	ExitFindings = 1 // findings at or above --fail-level
	ExitFailure  = 2 // usage, config, I/O or internal failure
)

// VersionString returns the tool version: the release's (v0.1.0), the module
// version of a `go install …@v0.1.0`, or "dev" (see internal/version).
func VersionString() string { return version.Get().Short() }

// exitError carries an exit code through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Env is what one run of the command line works with: its standard streams,
// working directory, environment variables and rule registry. Commands read
// it instead of the process's state or package-level variables, so several
// runs (tests) can go side by side in one process.
type Env struct {
	In       io.Reader
	Out, Err io.Writer
	// Dir is the working directory: relative paths (arguments, flag values)
	// are taken in it and the config is looked for upward from it, while
	// findings keep naming files as they were given. "" is the process's.
	Dir string
	// Getenv reads an environment variable; nil is os.Getenv.
	Getenv func(string) string
	// Context, when done, stops the run (nil: never): a lint then kills
	// the rolloutlint-helm companion it started and fails with the
	// context's error. The command line sets none: a rolloutlint stopped
	// by a signal ends the companion's input, and it exits.
	Context context.Context
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
	prof := profiler{env: e}
	prof.register(root)
	root.SetArgs(args)
	root.SetIn(e.In)
	root.SetOut(e.Out)
	root.SetErr(e.Err)
	ctx := e.Context
	if ctx == nil {
		ctx = context.Background()
	}
	err := root.ExecuteContext(ctx)
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
2 usage, configuration, I/O or internal failure, or no Kubernetes object in the
input (lint without --allow-empty).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Get().String(),
	}
	// --version prints what `rolloutlint version` prints (cobra's default
	// was "rolloutlint version dev", without the commit and platform).
	root.SetVersionTemplate("{{.Version}}\n")
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

// versionOptions are the flags of `rolloutlint version`.
type versionOptions struct {
	format string
}

func newVersion(e *Env) *cobra.Command {
	var o versionOptions
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Long: `Version prints the release version, the commit it was built from and the commit's
date, the Go version and the platform. A build that is not a release reports the version
"dev" (with the commit when built in a git checkout); ` + "`go install …@vX.Y.Z`" + ` reports vX.Y.Z.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			info := version.Get()
			switch o.format {
			case "text":
				_, err := fmt.Fprintln(e.Out, info.String())
				return err
			case "json":
				enc := json.NewEncoder(e.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			return fmt.Errorf("--format %q: want text or json", o.format)
		},
	}
	c.Flags().StringVarP(&o.format, "format", "f", "text", "output format: text or json")
	return c
}

// getenv reads an environment variable of the run.
func (e *Env) getenv(key string) string {
	if e.Getenv != nil {
		return e.Getenv(key)
	}
	return os.Getenv(key)
}

// path names a file given relative to the run's working directory so that
// the process can open it.
func (e *Env) path(p string) string {
	if e.Dir == "" || p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.Dir, p)
}

// paths is path for each of ps.
func (e *Env) paths(ps []string) []string {
	if e.Dir == "" {
		return ps
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = e.path(p)
	}
	return out
}

// FastDecodeEnv is the environment variable that turns the loader's fast
// decoder off: with ROLLOUTLINT_FAST_DECODE=off every document takes the
// full yaml.v3 path (load.Options.FullDecode). The two paths load the same;
// this is the switch for the day a document shows a difference.
const FastDecodeEnv = "ROLLOUTLINT_FAST_DECODE"

// fullDecode reads FastDecodeEnv: on (or unset) keeps the fast decoder, off
// turns it off; anything else is an error, so a typo does not silently
// select nothing.
func (e *Env) fullDecode() (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(e.getenv(FastDecodeEnv))); v {
	case "", "on", "true", "1":
		return false, nil
	case "off", "false", "0":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want on or off", FastDecodeEnv, v)
	}
}

// workDir is the run's working directory.
func (e *Env) workDir() (string, error) {
	if e.Dir != "" {
		return e.Dir, nil
	}
	return os.Getwd()
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
