package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/report/planreport"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

func init() {
	extraCommands = append(extraCommands, newPlan)
	var version string
	lintHooks = append(lintHooks, LintHook{
		Flags: func(c *cobra.Command) {
			c.Flags().StringVar(&version, "istio-version", "", istioVersionHelp)
		},
		Before: func(r *LintRun) error {
			if !r.Cmd.Flags().Changed("istio-version") {
				// Validate a config-file value too: a typo must not silently select nothing.
				if _, err := xds.ForVersion(r.Analyzer.Globals.IstioVersion); err != nil {
					return fmt.Errorf("istioVersion in config: %w", err)
				}
				return nil
			}
			m, err := xds.ForVersion(version)
			if err != nil {
				return fmt.Errorf("--istio-version: %w", err)
			}
			r.Analyzer.Globals.IstioVersion = m.Version
			return nil
		},
	})
}

var istioVersionHelp = "Istio version whose xDS push model RL6xxx rules use: " + strings.Join(xds.Versions(), ", ") +
	" (default: the config's istioVersion, else " + xds.DefaultVersion + ")"

func newPlan(s *Streams) *cobra.Command {
	var (
		lf      lintFlags
		rollout string
		version string
		format  string
	)
	c := &cobra.Command{
		Use:   "plan PATH...",
		Short: "Show each Rollout's steps: weights, replicas, API writes and the xDS pushes they cause",
		Long: `Plan reads manifests like lint and prints, for every Rollout, the cluster states Argo Rollouts
drives it through: canary start, each step, promotion, scale-down and the abort path. For
each state it lists the route weights (s stable, c canary, a additional, x experiment),
the old/new ReplicaSet sizes, the API writes (object, field, old → new) and, per debounce
window, istiod's push: class (full, partial-full-eds, incremental-eds; config and
endpoints-only from Istio 1.31), the xDS types sent to sidecars and gateways, the types
whose content changes, and the proxies in scope.

The xDS model follows Istio 1.28 by default; --istio-version selects another table.
JSON fields are documented in docs/plan.md.`,
		Example: `  rolloutlint plan deploy/
  rolloutlint plan --rollout shop/checkout --format markdown deploy/
  rolloutlint plan --istio-version 1.31 --format json rollout.yaml vs.yaml dr.yaml`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			w, ok := planreport.Formats[format]
			if !ok {
				return fmt.Errorf("--format: unknown format %q (want one of %s)", format, strings.Join(planreport.FormatNames(), ", "))
			}
			b, err := lf.loadBundle(args, s.In)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("istio-version") && b.cfg != nil && b.cfg.IstioVersion != "" {
				version = b.cfg.IstioVersion
			}
			m, err := xds.ForVersion(version)
			if err != nil {
				return fmt.Errorf("--istio-version: %w", err)
			}
			for _, p := range b.graph.Problems {
				if p.RuleID == "RL0001" {
					return fmt.Errorf("%s:%d:%d: %s", p.Pos.File, p.Pos.Line, p.Pos.Column, p.Message)
				}
			}
			plans := plan.Build(b.graph)
			if rollout != "" {
				plans, err = selectRollout(b.graph, plans, rollout)
				if err != nil {
					return err
				}
			}
			doc := planreport.Build(m, xds.NewScoper(b.graph), plans)
			if err := w(s.Out, doc); err != nil {
				return fmt.Errorf("writing plan: %w", err)
			}
			return nil
		},
	}
	lf.register(c)
	fl := c.Flags()
	fl.StringVar(&rollout, "rollout", "", "only this Rollout: namespace/name, or name in the default namespace")
	fl.StringVar(&version, "istio-version", "", "Istio version of the xDS model: "+strings.Join(xds.Versions(), ", ")+" (default "+xds.DefaultVersion+")")
	fl.StringVarP(&format, "format", "f", "text", "output format: "+strings.Join(planreport.FormatNames(), ", "))
	return c
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
