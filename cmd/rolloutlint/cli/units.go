package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/repo"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/units"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
)

// onlyStdin reports whether the paths are just standard input, which has no
// units (`helm template | rolloutlint lint -` is linted as given).
func onlyStdin(args []string) bool {
	return len(args) == 1 && args[0] == "-"
}

// runUnits is `lint` over deployable units (see package analyzer/repo).
func (o *lintOptions) runUnits(e *Env, fl *pflag.FlagSet, w report.Writer, args []string, kt *kubeTarget) error {
	rs, err := o.load.resolve(e, args)
	if err != nil {
		return err
	}
	level := o.failLevel
	if !fl.Changed("fail-level") && rs.cfg != nil && rs.cfg.FailLevel != "" {
		level = rs.cfg.FailLevel
	}
	var failAt rules.Severity
	if level != "none" {
		if failAt, err = rules.ParseSeverity(level); err != nil {
			return fmt.Errorf("--fail-level: %q is not error, warning, info or none", level)
		}
	}
	all, err := e.ruleSet(rs.cfg, e.paths(o.policyDirs))
	if err != nil {
		return err
	}
	globals := globalsFrom(rs.cfg)
	if globals.IstioVersion, err = lintIstioVersion(fl.Changed("istio-version"), o.istioVersion, rs.cfg, globals.IstioVersion); err != nil {
		return err
	}
	if err := checkRuleFlags(all, o.enable, o.disable); err != nil {
		return err
	}
	if err := rs.cfg.CheckOptions(all); err != nil {
		return err
	}
	live, err := o.prometheus.live(e)
	if err != nil {
		return err
	}
	// With paths from the command line the config's paths are context;
	// with none, the config's paths are what is linted.
	context := rs.context
	if len(args) == 0 {
		context = nil
	}
	aopts := analyzer.Options{Rules: all, Config: rs.cfg, Enable: splitList(o.enable), Disable: splitList(o.disable),
		Mode: rules.ModeCLI, Globals: globals, Live: live}
	var sess *session
	var liveFor func(g *graph.Graph) ([]load.Input, error)
	if o.cluster.enabled {
		if sess, err = o.cluster.newSession(e, kt); err != nil {
			return err
		}
		enabled, _ := analyzer.Select(aopts)
		kinds := clusterKinds(enabled)
		liveFor = func(g *graph.Graph) ([]load.Input, error) { return sess.liveFor(g, kinds) }
	}
	fitted := false
	rep, err := repo.Lint(rs.args, repo.Options{
		Analyzer: aopts,
		Live:     liveFor,
		Load:     rs.opts,
		Render:   o.rendering.options(e, rs.opts.Limits),
		Context:  context,
		AfterLoad: func(*graph.Graph) {
			if !fitted {
				memlimit.Fit() // the first loaded bundle sets the floor of the memory limit
				fitted = true
			}
		},
		AfterBundle: func(g *graph.Graph, res *analyzer.Result) error {
			if res.LiveErr != nil {
				return fmt.Errorf("prometheus dry-run: %w", res.LiveErr)
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	// Files given alone (a pre-commit hook's changed files, whose args may
	// carry --values for the commits that touch the chart) take the values
	// only when a chart is among their units.
	if err := o.rendering.unused(e, rs.args, rendersOwnChart(rep)); err != nil {
		return err
	}
	// Nothing rendered and nothing to say about the files: an empty render
	// or a wrong path must not pass green (as for a plain lint).
	if !o.allowEmpty && rep.Result.Summary.Objects == 0 && len(rep.Result.Active()) == 0 {
		return fmt.Errorf("no Kubernetes object in %s (%d file(s) read, no document with apiVersion and kind): a render or path that produced nothing would pass unnoticed; pass --allow-empty to accept it", describePaths(rs.args), len(rep.Files()))
	}
	if o.output != "" {
		var files []*graph.File
		for _, f := range rep.Files() {
			files = append(files, &graph.File{Path: f})
		}
		if err := e.checkOutput(o.output, files); err != nil {
			return err
		}
		if err := e.checkSideOutput(o.output, o.sideInputs(e, rs.cfg)); err != nil {
			return err
		}
	}
	res, cluster := rep.Result, (*report.Cluster)(nil)
	if sess != nil {
		res, cluster = sess.localOnly(res)
	}
	return o.write(e, w, res, all, failAt, nil, cluster)
}

// rendersOwnChart reports whether a lint rendered a Helm chart that no
// Application deploys: the charts --values and --set apply to.
func rendersOwnChart(rep *repo.Report) bool {
	for _, b := range rep.Bundles {
		for _, u := range b.Units {
			if u.Kind == units.Helm && u.App == nil {
				return true
			}
		}
	}
	return false
}

// onlyDirectories reports whether every path is a directory.
func onlyDirectories(e *Env, paths []string) bool {
	for _, p := range paths {
		if p == "-" {
			return false
		}
		if st, err := os.Stat(e.path(p)); err != nil || !st.IsDir() {
			return false
		}
	}
	return len(paths) > 0
}
