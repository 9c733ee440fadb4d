package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/policies"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
)

// loadOptions are the flags of every command that loads a bundle (lint, plan).
type loadOptions struct {
	configPath   string
	namespace    string
	context      []string
	maxFileBytes int64
	maxDocuments int
	// followSymlinks reads symlinks out of a linted directory.
	followSymlinks bool
	// stdinFilename is the path standard input is reported as.
	stdinFilename string
	// fallbackNamespace is the namespace of objects that set none when
	// neither --namespace nor the config names one (the kube context's,
	// with --cluster, as kubectl apply would use); "" means "default".
	fallbackNamespace string
}

func (o *loadOptions) bind(fl *pflag.FlagSet) {
	fl.StringVar(&o.configPath, "config", "", "config file (default: .rolloutlint.yaml found upward from the working directory)")
	fl.StringVarP(&o.namespace, "namespace", "n", "", "namespace for objects that set none (default: the config's, else \"default\")")
	fl.StringArrayVar(&o.context, "context", nil, "file or directory loaded to resolve references but not reported on (repeatable; the config's paths are used when unset)")
	fl.Int64Var(&o.maxFileBytes, "max-file-size", load.DefaultMaxFileBytes, "largest file read, in bytes")
	fl.IntVar(&o.maxDocuments, "max-documents", load.DefaultMaxDocuments, "most documents read from one file")
	fl.BoolVar(&o.followSymlinks, "follow-symlinks", false, "read symlinks that lead out of a linted directory (by default they are skipped with RL0011)")
	fl.StringVar(&o.stdinFilename, "stdin-filename", "", "path that standard input (-) is reported as, relative to the working directory, e.g. the chart that helm template rendered (lint's SARIF then gets a real artifact URI and fingerprints)")
}

// bundle is what a command works on after flags, config and files are read.
type bundle struct {
	cfg   *config.Config
	graph *graph.Graph
	// reported is the set of files findings may be reported on; nil means all.
	reported map[string]bool
	// inputs and opts are what the graph was loaded from, so that it can be
	// loaded again with more (the live objects of --cluster).
	inputs []load.Input
	opts   load.Options
	// stdin is what standard input held, under the name it is reported as
	// (nil when it was not read).
	stdin map[string][]byte
	// given describes the paths the findings are reported on, and givenFiles
	// counts the files read from them, for messages.
	given      string
	givenFiles int
}

// loadConfig reads the config at path, or the one found upward from the
// working directory when path is "" (nil when there is none).
func (e *Env) loadConfig(path string) (*config.Config, error) {
	if path == "" {
		wd, err := e.workDir()
		if err != nil {
			return nil, fmt.Errorf("finding config: %w", err)
		}
		path = config.Find(wd)
		if path == "" {
			return nil, nil
		}
	}
	return config.Load(e.path(path))
}

// resolved is what the config and the load flags say to read.
type resolved struct {
	cfg  *config.Config
	opts load.Options
	// args are the paths to lint (the config's paths when none were given);
	// context the paths loaded only so that references resolve.
	args, context []string
}

// resolve reads the config and decides what to load.
func (o *loadOptions) resolve(e *Env, args []string) (*resolved, error) {
	// The loader reads 0 as "the default"; on the command line it is a mistake.
	if o.maxFileBytes <= 0 {
		return nil, fmt.Errorf("--max-file-size %d: the limit must be a positive number of bytes (default %d, 32 MiB)", o.maxFileBytes, load.DefaultMaxFileBytes)
	}
	if o.maxDocuments <= 0 {
		return nil, fmt.Errorf("--max-documents %d: the limit must be a positive number of documents (default %d)", o.maxDocuments, load.DefaultMaxDocuments)
	}
	full, err := e.fullDecode()
	if err != nil {
		return nil, err
	}
	cfg, err := e.loadConfig(o.configPath)
	if err != nil {
		return nil, err
	}
	ns := o.namespace
	if ns != "" {
		if err := checkNamespace(ns); err != nil {
			return nil, fmt.Errorf("--namespace: %w", err)
		}
	} else if cfg != nil && cfg.Namespace != "" {
		ns = cfg.Namespace
		if err := checkNamespace(ns); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.At("namespace"), err)
		}
	}
	if ns == "" {
		ns = o.fallbackNamespace
	}
	stdinName, err := o.stdinName(e, args)
	if err != nil {
		return nil, err
	}
	opts := load.Options{
		Namespace:      ns,
		Limits:         load.Limits{MaxFileBytes: o.maxFileBytes, MaxDocuments: o.maxDocuments},
		Stdin:          e.In,
		Exclude:        func(p string) bool { return cfg.ExcludedFrom(e.Dir, p) },
		Dir:            e.Dir,
		FullDecode:     full,
		FollowSymlinks: o.followSymlinks,
		StdinName:      stdinName,
	}
	var cfgPaths []string
	if cfg != nil {
		for _, p := range cfg.Paths {
			path := e.relative(cfg.Resolve(p))
			// The config's mistake, said where it is written (it was
			// "reading nope: no such file or directory").
			if _, err := os.Stat(e.path(path)); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: %s (%s): no such file or directory", cfg.At("paths"), p, path)
			}
			cfgPaths = append(cfgPaths, path)
		}
	}
	context := o.context
	if len(args) == 0 {
		if len(cfgPaths) == 0 {
			return nil, fmt.Errorf("no paths to lint: give files or directories (or - for stdin), or set paths in %s", config.FileName)
		}
		args = cfgPaths
	} else if len(context) == 0 {
		context = cfgPaths
	}
	return &resolved{cfg: cfg, opts: opts, args: args, context: context}, nil
}

// checkNamespace refuses a default namespace the API server would refuse
// (Shop, shop_1): every object without one would be linted in a namespace
// that cannot exist, and references into the real one would not resolve.
func checkNamespace(ns string) error {
	if len(validation.IsDNS1123Label(ns)) > 0 {
		return fmt.Errorf("%q is not a namespace name (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63)", ns)
	}
	return nil
}

// relative names an absolute path below the working directory relative to
// it, as a path given on the command line is: the config found upward gives
// its paths as absolute ones, and findings in them read
// deploy/rollout.yaml:12:3, not /home/me/repo/deploy/rollout.yaml:12:3. A
// path outside the working directory stays absolute, as in repository mode
// (analyzer/repo), and other paths are returned as they are.
func (e *Env) relative(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	wd, err := e.workDir()
	if err != nil {
		return p
	}
	if wd, err = filepath.Abs(wd); err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return rel
}

// loadBundle reads config and files into one graph. Paths named on the
// command line are reported on; --context paths (or, with explicit paths,
// the config's paths) are only loaded so that references resolve.
func (o *loadOptions) loadBundle(e *Env, args []string) (*bundle, error) {
	rs, err := o.resolve(e, args)
	if err != nil {
		return nil, err
	}
	cfg, opts, args, context := rs.cfg, rs.opts, rs.args, rs.context
	inputs, err := load.Expand(args, opts)
	if err != nil {
		return nil, err
	}
	b := &bundle{cfg: cfg, given: describePaths(args), givenFiles: len(inputs)}
	if stdinName := opts.StdinName; stdinName != "" {
		// Exactly one input may carry the name: standard input.
		for _, in := range inputs {
			if e.canonical(in.Path) != e.canonical(stdinName) {
				continue
			}
			if b.stdin != nil {
				return nil, fmt.Errorf("--stdin-filename %s names a file that is linted too; give standard input a name of its own", stdinName)
			}
			b.stdin = map[string][]byte{in.Path: in.Data}
		}
	}
	var reported map[string]bool
	if len(context) > 0 {
		reported = map[string]bool{}
		for _, in := range inputs {
			reported[e.canonical(in.Path)] = true
		}
		ctxInputs, err := load.Expand(context, opts)
		if err != nil {
			return nil, fmt.Errorf("loading context: %w", err)
		}
		for _, in := range ctxInputs {
			if !reported[e.canonical(in.Path)] {
				inputs = append(inputs, in)
			}
		}
	}
	b.graph = load.Inputs(inputs, opts)
	b.reported = reported
	memlimit.Fit() // the loaded bundle sets the floor of the memory limit
	b.inputs, b.opts = inputs, opts
	return b, nil
}

// stdinName checks --stdin-filename against the paths: it names standard
// input, so it needs "-" among them. The name is cleaned (chart/ is chart).
func (o *loadOptions) stdinName(e *Env, args []string) (string, error) {
	if o.stdinFilename == "" {
		return "", nil
	}
	hasStdin := false
	for _, a := range args {
		hasStdin = hasStdin || a == "-"
	}
	if !hasStdin {
		return "", fmt.Errorf("--stdin-filename %s: no - among the paths, so standard input is not read", o.stdinFilename)
	}
	if strings.HasPrefix(o.stdinFilename, "<") || o.stdinFilename == "-" {
		return "", fmt.Errorf("--stdin-filename %q: give a path, e.g. the chart directory that was rendered", o.stdinFilename)
	}
	name := filepath.Clean(o.stdinFilename)
	// A file of that name that is linted too would be two inputs under one
	// name: findings, suppressions and fingerprints would mix them up.
	if st, err := os.Stat(e.path(name)); err == nil && !st.IsDir() {
		target := e.canonical(name)
		for _, a := range args {
			if a == "-" {
				continue
			}
			if p := e.canonical(a); p == target || strings.HasPrefix(target, p+string(filepath.Separator)) {
				return "", fmt.Errorf("--stdin-filename %s names a file that is linted too; give standard input a name of its own", name)
			}
		}
	}
	return name, nil
}

// describePaths names the paths of a lint for a message.
func describePaths(args []string) string {
	var parts []string
	for _, a := range args {
		if a == "-" {
			a = "standard input"
		}
		parts = append(parts, a)
	}
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("and %d more", len(parts)-4))
	}
	return strings.Join(parts, ", ")
}

// objects counts the Kubernetes objects loaded from the reported files.
func (b *bundle) objects(canonical func(string) string) int {
	if b.reported == nil {
		return len(b.graph.Resources)
	}
	n := 0
	for _, r := range b.graph.Resources {
		if b.reported[canonical(r.File)] {
			n++
		}
	}
	return n
}

// canonical makes paths given differently (./a.yaml, a.yaml) compare equal.
func (e *Env) canonical(p string) string {
	if p == load.StdinName {
		return p
	}
	if abs, err := filepath.Abs(e.path(p)); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// lintOptions are the flags of `lint`.
type lintOptions struct {
	load              loadOptions
	format            string
	failLevel         string
	enable, disable   []string
	includeSuppressed bool
	verbose           bool
	output            string
	color             string
	istioVersion      string
	policyDirs        []string
	allowEmpty        bool
	sarif             sarifOptions
	prometheus        promOptions
	rendering         renderFlags
	cluster           clusterOptions
}

func (o *lintOptions) bind(fl *pflag.FlagSet) {
	o.load.bind(fl)
	fl.StringVarP(&o.format, "format", "f", "text", "output format: "+strings.Join(report.Formats(), ", "))
	fl.StringVar(&o.failLevel, "fail-level", "error", "exit 1 when a finding is at or above this severity: error, warning, info or none")
	fl.StringSliceVar(&o.enable, "enable", nil, "turn rules on (IDs or globs such as RL2*), overriding the config")
	fl.StringSliceVar(&o.disable, "disable", nil, "turn rules off (IDs or globs); wins over --enable")
	fl.BoolVar(&o.includeSuppressed, "include-suppressed", false, "also list suppressed findings in text and json (sarif always carries them, marked suppressed)")
	fl.BoolVarP(&o.verbose, "verbose", "v", false, "text: show under each finding what follows from it and how to fix it (json, sarif and github always carry it)")
	fl.StringVarP(&o.output, "output", "o", "", "write the report to this file instead of stdout (atomically; never a file the lint reads: a manifest, the config, a policy, a --values or token file; a symlink there is replaced, not followed; a device or pipe, such as /dev/stdout, is written to)")
	fl.StringVar(&o.color, "color", "auto", "colour text output: auto (terminal and NO_COLOR unset), always or never")
	fl.StringVar(&o.istioVersion, "istio-version", "", lintIstioVersionHelp())
	fl.StringArrayVar(&o.policyDirs, "policy", nil,
		"directory of user Rego policies to run with the built-in rules (repeatable; adds to the config's policies:)")
	o.rendering.bind(fl, "and lint each deployable unit (--render=false: lint the files as written)")
	fl.BoolVar(&o.allowEmpty, "allow-empty", false, "accept input with no Kubernetes object (by default that is a failure, exit 2: a render that produced nothing must not pass)")
	o.sarif.bind(fl)
	o.prometheus.bind(fl)
	o.cluster.bind(fl, "lint the files together with the live objects of the cluster they would be applied to (read-only; see docs/cluster.md)")
}

func newLint(e *Env) *cobra.Command {
	var o lintOptions
	c := &cobra.Command{
		Use:   "lint [PATH...]",
		Short: "Lint manifests (files, directories, or - for stdin)",
		Long: fmt.Sprintf(`Lint reads manifests from files, directories (recursively: *.yaml, *.yml, *.json)
or standard input (-) and runs every enabled rule, one deployable unit at a time, the
way the tools that deploy them would: each Kustomize root (a kustomization no other
one uses) is built, each Helm chart (Chart.yaml) rendered as helm template does, each
Argo CD Application whose source path is in the tree rendered with its source options,
and the plain directories read as they are. Units an Application deploys to the same
cluster and namespace are linted together, and so are the plain directories. Rendering
is in process: nothing is fetched or executed (remote bases, exec plugins and charts
not vendored under charts/ are findings). Findings point into the files you wrote
(see docs/repositories.md). --render=false lints the files as written.

With no PATH, the paths of .rolloutlint.yaml are linted. When files are given (as
pre-commit does with the changed files), the units they belong to are loaded whole,
and files outside any unit with the config's paths, or --context, so references
resolve; findings are reported only on the given files and objects rendered from them.

A lint runs under a soft memory limit of %d MiB (or %g times what the loaded bundle
keeps live, if that is more), loading without a collection and its rules at GOGC=400
or off under that limit, so that the collector runs seldom and large bundles stay
bounded in memory; set GOMEMLIMIT (e.g.
GOMEMLIMIT=1GiB, or off) or GOGC to choose your own.

With --cluster the files are linted together with the live objects of the cluster (list
only): the kinds the rules read, in the namespaces the files touch (or --cluster-namespace)
and Istio's root namespace. A local object replaces the live one of the same identity;
findings are reported on the local files, live objects appear as related locations named
cluster:Kind/namespace/name. Lists RBAC forbids are named on stderr and the lint goes on,
partial. See docs/cluster.md.

ROLLOUTLINT_FAST_DECODE=off loads every document with the full YAML decoder instead
of the fast one; the findings are the same (it is there should a document ever load
differently).`, memlimit.Default>>20, memlimit.LiveFactor),
		Example: `  rolloutlint lint deploy/
  rolloutlint lint .                                  # every Kustomize root, chart and Application
  rolloutlint lint --values values-prod.yaml charts/app
  rolloutlint lint --cluster --kube-context staging deploy/
  rolloutlint lint --format json rollout.yaml vs.yaml
  helm template app ./chart | rolloutlint lint -
  rolloutlint lint --context deploy/ deploy/virtualservice.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(e, cmd.Flags(), args) },
	}
	o.bind(c.Flags())
	return c
}

// run is one lint: load, run the rules (the live ones with
// --prometheus-url), keep the reported files' findings, write the report and
// pick the exit code.
func (o *lintOptions) run(e *Env, fl *pflag.FlagSet, args []string) error {
	memlimit.Start()
	disabled := splitList(o.disable)
	policies.Warm(func(id string) bool {
		for _, p := range disabled {
			if config.MatchRule(p, id) {
				return true
			}
		}
		return false
	})
	w, err := report.Lookup(o.format)
	if err != nil {
		return err
	}
	if err := o.checkFlags(e); err != nil {
		return err
	}
	if err := o.prometheus.check(fl); err != nil {
		return err
	}
	if err := o.cluster.check(fl); err != nil {
		return err
	}
	var kt *kubeTarget
	if o.cluster.enabled {
		if kt, err = o.cluster.target(e); err != nil {
			return err
		}
		o.load.fallbackNamespace = kt.namespace
	}
	if o.rendering.render && !onlyStdin(args) {
		return o.runUnits(e, fl, w, args, kt)
	}
	b, err := o.load.loadBundle(e, args)
	if err != nil {
		return err
	}
	if o.output != "" {
		if err := e.checkOutput(o.output, b.graph.Files); err != nil {
			return err
		}
		if err := e.checkSideOutput(o.output, o.sideInputs(e, b.cfg)); err != nil {
			return err
		}
	}
	level := o.failLevel
	if !fl.Changed("fail-level") && b.cfg != nil && b.cfg.FailLevel != "" {
		level = b.cfg.FailLevel
	}
	var failAt rules.Severity
	if level != "none" {
		if failAt, err = rules.ParseSeverity(level); err != nil {
			return fmt.Errorf("--fail-level: %q is not error, warning, info or none", level)
		}
	}
	all, err := e.ruleSet(b.cfg, e.paths(o.policyDirs))
	if err != nil {
		return err
	}
	globals := globalsFrom(b.cfg)
	if globals.IstioVersion, err = lintIstioVersion(fl.Changed("istio-version"), o.istioVersion, b.cfg, globals.IstioVersion); err != nil {
		return err
	}
	if err := checkRuleFlags(all, o.enable, o.disable); err != nil {
		return err
	}
	if err := b.cfg.CheckOptions(all); err != nil {
		return err
	}
	live, err := o.prometheus.live(e)
	if err != nil {
		return err
	}
	aopts := analyzer.Options{
		Rules: all, Config: b.cfg, Enable: splitList(o.enable), Disable: splitList(o.disable), Mode: rules.ModeCLI,
		Globals: globals, Live: live,
	}
	g, reported := b.graph, b.reported
	var sess *session
	if o.cluster.enabled {
		if sess, err = o.cluster.newSession(e, kt); err != nil {
			return err
		}
		enabled, _ := analyzer.Select(aopts)
		if g, reported, err = sess.lintGraph(b, clusterKinds(enabled)); err != nil {
			return err
		}
	}
	res := analyzer.Run(g, aopts)
	if res.LiveErr != nil {
		return fmt.Errorf("prometheus dry-run: %w", res.LiveErr)
	}
	if reported != nil {
		res = res.Only(reported, e.canonical)
	}
	var cluster *report.Cluster
	if sess != nil {
		res, cluster = sess.localOnly(res)
	}
	// No object and nothing to say about the files (a YAML error would be a
	// finding): an empty render or a wrong path, which must not pass green.
	if !o.allowEmpty && b.objects(e.canonical) == 0 && len(res.Active()) == 0 {
		return fmt.Errorf("no Kubernetes object in %s (%d file(s) read, no document with apiVersion and kind): a render or path that produced nothing would pass unnoticed; pass --allow-empty to accept it", b.given, b.givenFiles)
	}
	return o.write(e, w, res, all, failAt, b.stdin, cluster)
}

// checkFlags rejects flag values that would otherwise be found wrong only
// after the lint, or never: a --color other than auto, always or never,
// --values or --set with --render=false (no chart is rendered to take them),
// and an --output whose directory does not exist.
func (o *lintOptions) checkFlags(e *Env) error {
	switch o.color {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("--color: %q is not auto, always or never", o.color)
	}
	if err := o.rendering.check("lint"); err != nil {
		return err
	}
	if o.output != "" {
		return checkOutputDir(o.output, e.path(o.output))
	}
	return nil
}

// write writes the report and picks the exit code; sources hold the text of
// inputs that are not files (standard input), cluster describes what
// --cluster read (nil without it).
func (o *lintOptions) write(e *Env, w report.Writer, res *analyzer.Result, all []*rules.Rule, failAt rules.Severity, sources map[string][]byte, cluster *report.Cluster) error {
	useColor := o.color == "always" || o.color == "auto" && o.output == "" && isTerminal(e.Out) && e.getenv("NO_COLOR") == ""
	ropts := report.Options{Color: useColor, IncludeSuppressed: o.includeSuppressed, Verbose: o.verbose, Version: VersionString(), AllRules: all,
		SARIFRoot: o.sarif.root, SARIFCategory: o.sarif.category, Warnings: e.Err, Dir: e.Dir, Sources: sources, Cluster: cluster}
	var buf bytes.Buffer
	out := e.Out
	if o.output != "" {
		out = &buf
	}
	if err := w(out, res, ropts); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if o.output != "" {
		if err := writeOutput(e.path(o.output), buf.Bytes()); err != nil {
			return err
		}
	}
	if failAt != 0 && res.Fails(failAt) {
		return exitError{ExitFindings}
	}
	return nil
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
				if up := strings.ToUpper(p); up != p && checkRuleFlags(all, []string{up}) == nil {
					return fmt.Errorf("no rule matches %q: rule IDs are upper-case (did you mean %q?)", p, up)
				}
				return fmt.Errorf("no rule matches %q (see 'rolloutlint rules')", p)
			}
		}
	}
	return nil
}
