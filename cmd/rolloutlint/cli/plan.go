package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/report/planreport"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/rollout"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// lintIstioVersion picks the Istio version of a lint: --istio-version when
// set, else the config's (or the default) current. A config value is
// validated too, and its error names the config's file:line: a typo must not
// silently select nothing.
func lintIstioVersion(flagSet bool, flag string, cfg *config.Config, current string) (string, error) {
	if !flagSet {
		if _, err := xds.ForVersion(current); err != nil {
			return "", fmt.Errorf("%s: %w", cfg.At("istioVersion"), err)
		}
		return current, nil
	}
	m, err := xds.ForVersion(flag)
	if err != nil {
		return "", fmt.Errorf("--istio-version: %w", err)
	}
	return m.Version, nil
}

func lintIstioVersionHelp() string {
	return "Istio version modelled by the xDS push (RL6xxx) and config visibility (RL3xxx) rules: " + strings.Join(xds.Versions(), ", ") +
		" (default: the config's istioVersion, else " + xds.DefaultVersion + ")"
}

// planOptions are the flags of `plan`.
type planOptions struct {
	load         loadOptions
	rollout      string
	istioVersion string
	format       string
	cluster      clusterOptions
	rendering    renderFlags
}

func (o *planOptions) bind(fl *pflag.FlagSet) {
	o.load.bind(fl)
	o.cluster.bind(fl, "start each plan from the Rollout's live state in the cluster (read-only; without PATH: every Rollout of the namespaces; see docs/cluster.md)")
	fl.StringVar(&o.rollout, "rollout", "", "only this Rollout: namespace/name, or name in the default namespace")
	fl.StringVar(&o.istioVersion, "istio-version", "", "Istio version of the xDS and visibility models: "+strings.Join(xds.Versions(), ", ")+" (default: the config's istioVersion, else "+xds.DefaultVersion+")")
	fl.StringVarP(&o.format, "format", "f", "text", "output format: "+strings.Join(planreport.FormatNames(), ", "))
	o.rendering.bind(fl, "as lint does and plan each unit's Rollouts (--render=false: plan the files as written)")
}

func newPlan(e *Env) *cobra.Command {
	var o planOptions
	c := &cobra.Command{
		Use:   "plan [PATH...]",
		Short: "Show each Rollout's steps: weights, replicas, API writes and the xDS pushes they cause",
		Long: `Plan reads manifests the way lint does: each Kustomize root is built, each Helm chart
rendered, each Argo CD Application's source rendered with its options, and the plain
directories read as they are (see docs/repositories.md); every Rollout is planned with the
Services, VirtualServices, DestinationRules and templates of its own unit, once per unit
that deploys it, and its position is in the file you wrote. --render=false plans the
files as written; - reads standard input as given (kustomize build | rolloutlint plan -).
For every Rollout it prints the cluster states Argo Rollouts drives it through: canary
start, each step, promotion, scale-down and the abort path. For each state it lists the
route weights (s stable, c canary, a additional, x experiment), the old/new ReplicaSet
sizes, the API writes (object, field, old → new) and, per debounce window, istiod's push:
class (full, partial-full-eds, incremental-eds; config and endpoints-only from Istio
1.31), the xDS types sent to sidecars and gateways, the types whose content changes, and
the proxies in scope.

With --cluster each Rollout starts from where it is in the cluster: its current step,
pause or abort, the stable and canary pod-template hashes, the weights on its routes and
the sizes of its ReplicaSets; the plan lists the remaining steps and the abort path from
there. A local Rollout whose pod template differs from the live one plans the update that
applying it starts. Without PATH, every Rollout of --cluster-namespace (else the kube
context's namespace) is planned as it is live. --cluster plans files as written: with
PATHs that hold a Kustomize root, Helm chart or Application source it needs
--render=false (or a render piped into plan --cluster -).

The xDS model follows Istio 1.28 by default; --istio-version selects another table.
JSON fields are documented in docs/plan.md.`,
		Example: `  rolloutlint plan deploy/
  rolloutlint plan overlays/prod                        # the Rollouts kustomize build would deploy
  rolloutlint plan --values values-prod.yaml charts/app
  rolloutlint plan --render=false overlays/prod         # the files as written
  rolloutlint plan --rollout shop/checkout --format markdown deploy/
  rolloutlint plan --istio-version 1.31 --format json rollout.yaml vs.yaml dr.yaml
  rolloutlint plan --cluster --cluster-namespace shop
  rolloutlint plan --cluster --kube-context prod deploy/rollout.yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(e, cmd.Flags(), args) },
	}
	o.bind(c.Flags())
	return c
}

// run builds and writes the plans.
func (o *planOptions) run(e *Env, fl *pflag.FlagSet, args []string) error {
	memlimit.Start()
	if _, ok := planreport.Formats[o.format]; !ok {
		return fmt.Errorf("--format: unknown format %q (want one of %s)", o.format, strings.Join(planreport.FormatNames(), ", "))
	}
	if err := o.cluster.check(fl); err != nil {
		return err
	}
	var kt *kubeTarget
	if o.cluster.enabled {
		var err error
		if kt, err = o.cluster.target(e); err != nil {
			return err
		}
		o.load.fallbackNamespace = kt.namespace
	}
	if err := o.rendering.check("plan"); err != nil {
		return err
	}
	if o.rendering.render && !onlyStdin(args) && (!o.cluster.enabled || len(args) > 0) {
		units, err := o.loadUnits(e, args)
		if err != nil {
			return err
		}
		if !o.cluster.enabled {
			return o.planUnits(e, fl, units)
		}
		for _, l := range units.loaded {
			if !l.Plain {
				return fmt.Errorf("--cluster plans the files as written, and %s holds %s, which plan renders: pass --render=false to plan its files as written, or render it and pipe the output (kustomize build DIR | rolloutlint plan --cluster -)", describePaths(units.args), unitName(l.Units[0]))
			}
		}
		// Plain files only: planned as written, as they always were.
	}
	var b *bundle
	var err error
	if o.cluster.enabled && len(args) == 0 {
		cfg, err := e.loadConfig(o.load.configPath)
		if err != nil {
			return err
		}
		b = &bundle{cfg: cfg}
	} else if b, err = o.load.loadBundle(e, args); err != nil {
		return err
	}
	m, err := o.model(fl, b.cfg)
	if err != nil {
		return err
	}
	if b.graph != nil {
		if err := unreadable(b.graph, nil); err != nil {
			return err
		}
	}
	g := b.graph
	var n int
	var at func(i int, pl *plan.Planner) *plan.Plan
	if o.cluster.enabled || o.rollout != "" {
		var plans []*plan.Plan
		if o.cluster.enabled {
			if g, plans, err = o.cluster.livePlans(e, kt, b); err != nil {
				return err
			}
		} else {
			plans = plan.Build(g)
		}
		if o.rollout != "" {
			if plans, err = selectRollout(g, plans, o.rollout); err != nil {
				return err
			}
		}
		n, at = len(plans), func(i int, _ *plan.Planner) *plan.Plan { return plans[i] }
	} else {
		n, at = plan.EachIn(g) // Rollouts planned as they are written, each in its writer's memory
	}
	// The Scoper (the bundle's visibility model) and the rejections are
	// independent: one is made beside the other.
	var sc *xds.Scoper
	scoped := make(chan struct{})
	go func() {
		defer close(scoped)
		sc = xds.NewScoperFor(g, m.Version)
	}()
	rejected := rejections(&bundle{cfg: b.cfg, graph: g})
	<-scoped
	if err := planreport.Write(e.Out, o.format, m, sc, n, at, rejected); err != nil {
		return fmt.Errorf("writing plan: %w", err)
	}
	return nil
}

// model is the xDS model of --istio-version, else the config's
// istioVersion, else the default.
func (o *planOptions) model(fl *pflag.FlagSet, cfg *config.Config) (*xds.Model, error) {
	version := xds.DefaultVersion
	if cfg != nil && cfg.IstioVersion != "" {
		version = cfg.IstioVersion
	}
	version, err := lintIstioVersion(fl.Changed("istio-version"), o.istioVersion, cfg, version)
	if err != nil {
		return nil, err
	}
	return xds.ForVersion(version)
}

// unreadable is the error of a bundle with a file that is not YAML
// (RL0001): plan refuses input it cannot read whole. name names a graph's
// file as the paths were given (nil: as it is).
func unreadable(g *graph.Graph, name func(string) string) error {
	for _, p := range g.Problems {
		if p.RuleID == "RL0001" {
			file := p.Pos.File
			if name != nil {
				file = name(file)
			}
			return fmt.Errorf("%s:%d:%d: %s", file, p.Pos.Line, p.Pos.Column, p.Message)
		}
	}
	return nil
}

// rejections runs the rules that check what Argo Rollouts' validation checks
// and returns, by Rollout, their error findings: Argo refuses such a Rollout
// (InvalidSpec), so its plan is not played out. Suppressions and the config
// do not change what Argo does, so they are not applied.
func rejections(b *bundle) map[plan.Object][]planreport.Rejection {
	res := analyzer.Run(b.graph, analyzer.Options{Rules: rollout.InvalidSpec, Mode: rules.ModeCLI, Globals: globalsFrom(b.cfg)})
	out := map[plan.Object][]planreport.Rejection{}
	for _, d := range res.Diagnostics {
		if d.Severity != rules.Error || d.Object.Kind != "Rollout" {
			continue
		}
		k := plan.Object{Kind: d.Object.Kind, Namespace: d.Object.Namespace, Name: d.Object.Name}
		out[k] = append(out[k], planreport.Rejection{RuleID: d.RuleID, Message: d.Message, Detail: d.Detail,
			File: d.Pos.File, Line: d.Pos.Line, Column: d.Pos.Column})
	}
	return out
}

// selectRollout keeps the plan of one Rollout named ns/name (or name).
func selectRollout(g *graph.Graph, plans []*plan.Plan, ref string) ([]*plan.Plan, error) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		ns, name = g.DefaultNamespace, ref
	}
	for _, p := range plans {
		if p.Rollout.Namespace == ns && p.Rollout.Name == name {
			return []*plan.Plan{p}, nil
		}
	}
	var have []string
	for _, p := range plans {
		have = append(have, p.Rollout.Namespace+"/"+p.Rollout.Name)
	}
	return nil, fmt.Errorf("--rollout %s: no such Rollout in the input (have: %s)", ref, strings.Join(have, ", "))
}
