package analysis

import (
	"fmt"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// IstioSubsetMixed reports canary analyses of subset-level Rollouts whose
// query selects by Service only, which covers both subsets.
var IstioSubsetMixed = &rules.Rule{
	ID: "RL4015", Name: "promql-istio-subset-mixed", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: append([]string{"Rollout"}, templateKinds[1:]...), Tags: append([]string{"promql", "istio"}, tags...),
	Summary: "A subset-level canary's analysis selects traffic by Service only, so it measures stable and canary pods together.",
	Doc: rules.Doc{
		Why: `With subset-level traffic splitting (\'trafficRouting.istio.destinationRule\'), stable and canary pods sit
behind the same Service and differ only by the \'rollouts-pod-template-hash\' label of their subset.
Istio labels their requests with the same \'destination_service_name\' and \'destination_service\', so a
query that selects only by Service measures the mix; at a 5% canary weight a canary that fails every
request moves the error rate by 5 points at most. Select the canary's pods: pass
\'valueFrom.podTemplateHashValue: Latest\' and match a hash label your Istio metrics carry, or label canary
pods through \'canaryMetadata\' and match \'destination_version\'/\'destination_canonical_revision\'.`,
		Bad: `
trafficRouting:
        istio:
          destinationRule: {name: app, canarySubsetName: canary, stableSubsetName: stable}
---
        query: sum(rate(istio_requests_total{destination_service_name="app",response_code=~"5.."}[1m]))
`,
		Good: `
query: |
          sum(rate(istio_requests_total{destination_service_name="app",
            destination_workload_label_rollouts_pod_template_hash="{{args.canary-hash}}",response_code=~"5.."}[1m]))
`,
	},
	Since: "v0.1.0",
	// A run's or a query's findings depend on it and on lookups; a spot
	// several of them hit (a shared template) is merged across shards as
	// the collector merges it.
	Sharded:     true,
	MergeShards: mergeSameSpot,
	Run: func(p *rules.Pass) error {
		c := newCollector(p)
		for _, q := range scannedQueries(p) {
			if q.Run == nil || !q.Parsed() || q.Run.Refs.DestinationRule == nil ||
				(q.Run.Use != graph.UseStep && q.Run.Use != graph.UseBackground) {
				continue
			}
			svc := serviceOnly(q.Matchers)
			if svc == nil {
				continue
			}
			ro := q.Run.Refs.Rollout
			dr := q.Run.Refs.DestinationRule
			c.add(rules.Diagnostic{Resource: q.Template, Path: q.Path(), Pos: parsedPos(p.Graph, q, svc.Start, svc.End),
				Message: fmt.Sprintf("metric %s: %s=%q selects both subsets (%s and %s) of DestinationRule %s", q.Metric.Name, svc.Name, svc.Value, dr.StableSubset, dr.CanarySubset, dr.Name),
				Detail: fmt.Sprintf("Rollout %s splits traffic by subset and nothing in the query picks the canary pods, so %s measures stable and canary together.",
					ro.Name, q.Run.Describe()),
				Related: []rules.Related{rules.RelatedAt(ro, dr.Path, "subset-level traffic splitting"), trigger(q.Run, "")}})
		}
		c.flush()
		return nil
	},
}

// serviceOnly returns the first Service matcher of a query that has no
// matcher telling canary from stable pods, or nil.
func serviceOnly(ms []promql.Matcher) *promql.Matcher {
	var svc *promql.Matcher
	for i := range ms {
		m := &ms[i]
		switch {
		case strings.Contains(m.Name, "rollouts_pod_template_hash"), m.Name == "destination_version",
			m.Name == "destination_canonical_revision", strings.Contains(m.Name, "pod"):
			return nil
		case (m.Name == "destination_service_name" || m.Name == "destination_service") && m.Type == labels.MatchEqual && svc == nil:
			svc = m
		}
	}
	return svc
}
