package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
)

// lintFlags are the flags shared by commands that load a bundle.
type lintFlags struct {
	configPath   string
	namespace    string
	context      []string
	maxFileBytes int64
	maxDocuments int
}

func (f *lintFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.configPath, "config", "", "config file (default: .rolloutlint.yaml found upward from the working directory)")
	c.Flags().StringVarP(&f.namespace, "namespace", "n", "", "namespace for objects that set none (default: the config's, else \"default\")")
	c.Flags().StringArrayVar(&f.context, "context", nil, "file or directory loaded to resolve references but not reported on (repeatable; the config's paths are used when unset)")
	c.Flags().Int64Var(&f.maxFileBytes, "max-file-size", load.DefaultMaxFileBytes, "largest file read, in bytes")
	c.Flags().IntVar(&f.maxDocuments, "max-documents", load.DefaultMaxDocuments, "most documents read from one file")
}

// bundle is what a command works on after flags, config and files are read.
type bundle struct {
	cfg   *config.Config
	graph *graph.Graph
	// reported is the set of files findings may be reported on; nil means all.
	reported map[string]bool
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("finding config: %w", err)
		}
		path = config.Find(wd)
		if path == "" {
			return nil, nil
		}
	}
	return config.Load(path)
}

// loadBundle reads config and files. Paths named on the command line are
// reported on; --context paths (or, with explicit paths, the config's paths)
// are only loaded so that references resolve.
func (f *lintFlags) loadBundle(args []string, stdin io.Reader) (*bundle, error) {
	cfg, err := loadConfig(f.configPath)
	if err != nil {
		return nil, err
	}
	ns := f.namespace
	if ns == "" && cfg != nil {
		ns = cfg.Namespace
	}
	opts := load.Options{
		Namespace: ns,
		Limits:    load.Limits{MaxFileBytes: f.maxFileBytes, MaxDocuments: f.maxDocuments},
		Stdin:     stdin,
		Exclude:   cfg.Excluded,
	}
	var cfgPaths []string
	if cfg != nil {
		for _, p := range cfg.Paths {
			cfgPaths = append(cfgPaths, cfg.Resolve(p))
		}
	}
	context := f.context
	if len(args) == 0 {
		if len(cfgPaths) == 0 {
			return nil, fmt.Errorf("no paths to lint: give files or directories (or - for stdin), or set paths in %s", config.FileName)
		}
		args = cfgPaths
	} else if len(context) == 0 {
		context = cfgPaths
	}
	inputs, err := load.Expand(args, opts)
	if err != nil {
		return nil, err
	}
	var reported map[string]bool
	if len(context) > 0 {
		reported = map[string]bool{}
		for _, in := range inputs {
			reported[canonical(in.Path)] = true
		}
		ctxInputs, err := load.Expand(context, opts)
		if err != nil {
			return nil, fmt.Errorf("loading context: %w", err)
		}
		for _, in := range ctxInputs {
			if !reported[canonical(in.Path)] {
				inputs = append(inputs, in)
			}
		}
	}
	g := load.Inputs(inputs, opts)
	memlimit.Fit() // the loaded bundle sets the floor of the memory limit
	return &bundle{cfg: cfg, graph: g, reported: reported}, nil
}

// canonical makes paths given differently (./a.yaml, a.yaml) compare equal.
func canonical(p string) string {
	if p == load.StdinName {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// LintRun is the state of one `lint` invocation that hooks may read and adjust.
type LintRun struct {
	Cmd     *cobra.Command
	Streams *Streams
	Bundle  *bundle
	// Analyzer options (rules, config, enable/disable, globals) before the run.
	Analyzer analyzer.Options
	// Report options before writing.
	Report report.Options
}

// LintHook extends `lint` from its own file: Flags registers flags, Before
// adjusts the run (e.g. adds user policies to the rule set), After adds
// findings that need more than the graph (e.g. live Prometheus queries).
type LintHook struct {
	Flags  func(c *cobra.Command)
	Before func(r *LintRun) error
	After  func(r *LintRun, res *analyzer.Result) error
}

// lintHooks are registered by init functions of other files in this package.
var lintHooks []LintHook

func newLint(s *Streams) *cobra.Command {
	var (
		lf                lintFlags
		format            string
		failLevel         string
		enable, disable   []string
		includeSuppressed bool
		output            string
		color             string
	)
	c := &cobra.Command{
		Use:   "lint [PATH...]",
		Short: "Lint manifests (files, directories, or - for stdin)",
		Long: fmt.Sprintf(`Lint reads manifests from files, directories (recursively: *.yaml, *.yml, *.json)
or standard input (-), builds one resource graph and runs every enabled rule.

With no PATH, the paths of .rolloutlint.yaml are linted. When PATHs are given (as
pre-commit does with the changed files), the config's paths, or --context, are loaded
too so references resolve, but findings are reported only for the given files.

A lint runs under a soft memory limit of %d MiB (or %g times what the loaded bundle
keeps live, if that is more), so that large bundles stay small in memory at a little
CPU; set GOMEMLIMIT (e.g. GOMEMLIMIT=1GiB, or off) to choose your own.`, memlimit.Default>>20, memlimit.LiveFactor),
		Example: `  rolloutlint lint deploy/
  rolloutlint lint --format json rollout.yaml vs.yaml
  helm template app ./chart | rolloutlint lint -
  rolloutlint lint --context deploy/ deploy/virtualservice.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := report.Lookup(format)
			if err != nil {
				return err
			}
			b, err := lf.loadBundle(args, s.In)
			if err != nil {
				return err
			}
			run := &LintRun{Cmd: cmd, Streams: s, Bundle: b}
			level := failLevel
			if !cmd.Flags().Changed("fail-level") && b.cfg != nil && b.cfg.FailLevel != "" {
				level = b.cfg.FailLevel
			}
			var failAt rules.Severity
			if level != "none" {
				if failAt, err = rules.ParseSeverity(level); err != nil {
					return fmt.Errorf("--fail-level: %q is not error, warning, info or none", level)
				}
			}
			all, err := ruleSet(b.cfg)
			if err != nil {
				return err
			}
			run.Analyzer = analyzer.Options{
				Rules: all, Config: b.cfg, Enable: splitList(enable), Disable: splitList(disable), Mode: rules.ModeCLI,
				Globals: globalsFrom(b.cfg),
			}
			useColor := color == "always" || color == "auto" && output == "" && isTerminal(s.Out) && os.Getenv("NO_COLOR") == ""
			run.Report = report.Options{Color: useColor, IncludeSuppressed: includeSuppressed, Version: VersionString(), AllRules: all}
			for _, h := range lintHooks {
				if h.Before != nil {
					if err := h.Before(run); err != nil {
						return err
					}
				}
			}
			if err := checkRuleFlags(run.Analyzer.Rules, enable, disable); err != nil {
				return err
			}
			if err := b.cfg.CheckOptions(run.Analyzer.Rules); err != nil {
				return err
			}
			res := analyzer.Run(b.graph, run.Analyzer)
			for _, h := range lintHooks {
				if h.After != nil {
					if err := h.After(run, res); err != nil {
						return err
					}
				}
			}
			if b.reported != nil {
				res = res.Only(b.reported, canonical)
			}
			var buf bytes.Buffer
			out := s.Out
			if output != "" {
				out = &buf
			}
			if err := w(out, res, run.Report); err != nil {
				return fmt.Errorf("writing report: %w", err)
			}
			if output != "" {
				if err := os.WriteFile(output, buf.Bytes(), 0o644); err != nil {
					return fmt.Errorf("writing report: %w", err)
				}
			}
			if failAt != 0 && res.Fails(failAt) {
				return exitError{ExitFindings}
			}
			return nil
		},
	}
	lf.register(c)
	fl := c.Flags()
	fl.StringVarP(&format, "format", "f", "text", "output format: "+strings.Join(report.Formats(), ", "))
	fl.StringVar(&failLevel, "fail-level", "error", "exit 1 when a finding is at or above this severity: error, warning, info or none")
	fl.StringSliceVar(&enable, "enable", nil, "turn rules on (IDs or globs such as RL2*), overriding the config")
	fl.StringSliceVar(&disable, "disable", nil, "turn rules off (IDs or globs); wins over --enable")
	fl.BoolVar(&includeSuppressed, "include-suppressed", false, "also list suppressed findings (text, json)")
	fl.StringVarP(&output, "output", "o", "", "write the report to this file instead of stdout")
	fl.StringVar(&color, "color", "auto", "colour text output: auto (terminal and NO_COLOR unset), always or never")
	for _, h := range lintHooks {
		if h.Flags != nil {
			h.Flags(c)
		}
	}
	return c
}

// globalsFrom derives the run-wide rule settings from the config.
func globalsFrom(cfg *config.Config) rules.Globals {
	g := rules.Globals{IstioVersion: "1.28"}
	if cfg != nil {
		if cfg.IstioVersion != "" {
			g.IstioVersion = cfg.IstioVersion
		}
		g.ArgoCD = cfg.ArgoCD
	}
	return g
}

func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// checkRuleFlags rejects --enable/--disable patterns that match no rule, so a
// typo cannot silently do nothing.
func checkRuleFlags(all []*rules.Rule, lists ...[]string) error {
	for _, list := range lists {
		for _, p := range splitList(list) {
			matched := false
			for _, r := range all {
				if config.MatchRule(p, r.ID) {
					matched = true
					break
				}
			}
			if !matched {
				return fmt.Errorf("no rule matches %q (see 'rolloutlint rules')", p)
			}
		}
	}
	return nil
}
