package analysis

import (
	"fmt"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// IstioWorkload reports queries that try to tell canary from stable by
// destination_workload, which Istio sets to the Rollout name for both.
var IstioWorkload = &rules.Rule{
	ID: "RL4013", Name: "promql-istio-workload-not-canary", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: append([]string{"promql", "istio"}, tags...),
	Summary: "A query selects destination_workload, which Istio reports as the Rollout's name for stable and canary pods alike.",
	Doc: rules.Doc{
		Why: `Istio derives \'destination_workload\' from the pod's owner: the ReplicaSet name with its hash suffix
removed, which for a Rollout is the Rollout's name, for the stable and the canary ReplicaSet alike.
A query filtering \'destination_workload="<rollout>"\' therefore measures stable and canary mixed (at a
5% canary weight the canary's errors are diluted twenty-fold), and \'destination_workload="<rollout>-canary"\'
matches nothing. Select the canary by \'destination_service_name\' of the canary Service, or by the
\'rollouts-pod-template-hash\' label passed as \'valueFrom.podTemplateHashValue: Latest\'.`,
		Bad: `
query: |
          sum(rate(istio_requests_total{destination_workload="{{args.rollout}}",response_code=~"5.."}[1m]))
`,
		Good: `
query: |
          sum(rate(istio_requests_total{destination_service_name="{{args.canary-svc}}",response_code=~"5.."}[1m]))
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
		forEachMatcher(p, func(q *analysisrun.Query, m promql.Matcher) {
			if q.Run == nil || m.Name != "destination_workload" || m.Type != labels.MatchEqual {
				return
			}
			name := q.Run.Refs.Rollout.Name
			var msg, detail string
			switch {
			case m.Value == name:
				msg = fmt.Sprintf("metric %s: destination_workload=%q matches the stable and the canary pods of Rollout %s alike", q.Metric.Name, m.Value, name)
				detail = "Istio names the workload of both after the Rollout: the analysis does not measure the canary alone."
			case strings.HasPrefix(m.Value, name+"-") && isRoleSuffix(strings.TrimPrefix(m.Value, name+"-")):
				msg = fmt.Sprintf("metric %s: destination_workload=%q matches no pods", q.Metric.Name, m.Value)
				detail = fmt.Sprintf("Istio reports destination_workload=%q for both ReplicaSets of Rollout %s, so the analysis sees no data.", name, name)
			default:
				return
			}
			c.add(rules.Diagnostic{Resource: q.Template, Path: q.Path(), Pos: parsedPos(p.Graph, q, m.Start, m.End), Message: msg, Detail: detail,
				Related: related(q, "")})
		})
		c.flush()
		return nil
	},
}

func isRoleSuffix(s string) bool {
	switch s {
	case "canary", "stable", "preview", "active", "new", "old":
		return true
	}
	return false
}
