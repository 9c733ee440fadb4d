package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/policies"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ruleSet returns the built-in rules plus the user policies of the config's
// `policies:` and of extraDirs (lint --policy), sorted by ID.
func (e *Env) ruleSet(cfg *config.Config, extraDirs []string) ([]*rules.Rule, error) {
	rs := e.builtinRules()
	// A directory of the config's that is not there is the config's mistake:
	// say where it is written, not only that a stat failed.
	for i, dir := range configPolicyDirs(cfg) {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			what := "no such directory"
			if err == nil {
				what = "not a directory"
			} else if !errors.Is(err, fs.ErrNotExist) {
				what = err.Error()
			}
			return nil, fmt.Errorf("%s: %s (%s): %s", cfg.At("policies"), cfg.Policies[i], dir, what)
		}
	}
	user, err := policies.LoadDirs(uniqueDirs(append(configPolicyDirs(cfg), extraDirs...)))
	if err != nil {
		return nil, err
	}
	rs = append(rs, user...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID })
	return rs, nil
}

// configPolicyDirs returns the config's `policies:` resolved against the config's directory.
func configPolicyDirs(cfg *config.Config) []string {
	if cfg == nil {
		return nil
	}
	out := make([]string, 0, len(cfg.Policies))
	for _, p := range cfg.Policies {
		out = append(out, cfg.Resolve(p))
	}
	return out
}

// uniqueDirs drops directories named twice (config and flag, ./p and p).
func uniqueDirs(dirs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		key := filepath.Clean(d)
		if abs, err := filepath.Abs(d); err == nil {
			key = abs
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, d)
		}
	}
	return out
}

func newPolicy(e *Env) *cobra.Command {
	c := &cobra.Command{
		Use:   "policy",
		Short: "Work with user Rego policies: check them against the contract, run their tests",
		Long: `User policies are Rego v1 packages with a # METADATA block and a violation set
(see docs/policies.md). They run in the same sandbox as the built-in policies: no
network, runtime, clock or random built-ins (http.send, net.lookup_ip_addr, opa.runtime,
time.now_ns, rand.intn, ...), and the guarded ones refuse operands that would read a file,
the clock or the machine's time zone, or outgrow the timeout and memory bound (RL0009; the
table of every built-in is in docs/policies.md#the-sandbox).`,
	}
	c.AddCommand(newPolicyCheck(e), newPolicyTest(e))
	return c
}

func newPolicyCheck(e *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "check DIR...",
		Short: "Load policy directories as lint would and list the rules they define",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, dirs []string) error {
			rs, err := policies.LoadDirs(uniqueDirs(e.paths(dirs)))
			if err != nil {
				return err
			}
			for _, r := range rs {
				fmt.Fprintf(e.Out, "%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Severity, r.Summary)
			}
			fmt.Fprintf(e.Out, "%d polic%s OK\n", len(rs), map[bool]string{true: "y", false: "ies"}[len(rs) == 1])
			return nil
		},
	}
}

// policyTestOptions are the flags of `policy test`.
type policyTestOptions struct {
	verbose bool
}

func (o *policyTestOptions) bind(fl *pflag.FlagSet) {
	fl.BoolVarP(&o.verbose, "verbose", "v", false, "list every test, not only failures")
}

func newPolicyTest(e *Env) *cobra.Command {
	var o policyTestOptions
	c := &cobra.Command{
		Use:   "test DIR...",
		Short: "Run the Rego unit tests (test_* rules, usually in *_test.rego) of policy directories",
		Long: `Test loads the policies as lint does (the contract is checked first), then runs
their Rego tests with OPA's test runner, in the same sandbox. It exits 1 when a test
fails and 2 when the policies do not load.`,
		Example: `  rolloutlint policy test policies/`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			dirs = uniqueDirs(e.paths(dirs))
			if _, err := policies.LoadDirs(dirs); err != nil {
				return err
			}
			results, err := policies.TestDirs(cmd.Context(), dirs)
			if err != nil {
				return err
			}
			passed, failed, skipped := 0, 0, 0
			for _, r := range results {
				switch {
				case r.Skipped:
					skipped++
					if o.verbose {
						fmt.Fprintf(e.Out, "SKIP %s\n", r.Name)
					}
				case r.Passed:
					passed++
					if o.verbose {
						fmt.Fprintf(e.Out, "PASS %s (%s)\n", r.Name, r.Duration)
					}
				default:
					failed++
					fmt.Fprintf(e.Out, "FAIL %s:%d: %s: %s\n", r.File, r.Line, r.Name, r.Failure)
					if r.Output != "" {
						fmt.Fprintf(e.Out, "%s", r.Output)
					}
				}
			}
			fmt.Fprintf(e.Out, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
			if len(results) == 0 {
				return fmt.Errorf("no Rego tests (test_* rules) in %v", dirs)
			}
			if failed > 0 {
				return exitError{ExitFindings}
			}
			return nil
		},
	}
	o.bind(c.Flags())
	return c
}
