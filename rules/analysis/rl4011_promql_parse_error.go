package analysis

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/rules"
)

// PromQLParse reports Prometheus queries that do not parse.
var PromQLParse = &rules.Rule{
	ID: "RL4011", Name: "promql-parse-error", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: append([]string{"promql"}, tags...),
	Summary: "A Prometheus metric's query is not valid PromQL (after substituting the Rollout's args).",
	Doc: rules.Doc{
		Why: `The Prometheus provider sends the query as it is after substituting \'{{args.x}}\'; Prometheus
rejects invalid PromQL, every measurement errors and, after \'consecutiveErrorLimit\' (4 by default)
errors, the analysis fails and the rollout aborts. The query is parsed with the Prometheus parser
(github.com/prometheus/prometheus/promql/parser), with each Rollout's values substituted (a value
that breaks the syntax is reported with the Rollout that passes it) and, where a value is only known
at run time, a stand-in of the right type (a duration inside \'[...]\', a number elsewhere). The
finding is at the line and column of the error inside the query, also inside \'query: |\' blocks.`,
		Bad: `
query: |
          sum(rate(istio_requests_total{destination_service_name="{{args.svc}}"[1m]))
`,
		Good: `
query: |
          sum(rate(istio_requests_total{destination_service_name="{{args.svc}}"}[1m]))
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
			if q.Err == nil {
				continue
			}
			msg := fmt.Sprintf("metric %s: the query is not valid PromQL: %s", q.Metric.Name, q.Err.Msg)
			var rel []rules.Related
			detail := ""
			// An error inside or right after a substituted value is the value's fault.
			for _, i := range q.Sub.PlaceholdersIn(max(q.Err.Offset-1, 0), q.Err.Offset+1) {
				ph := q.Sub.Placeholders[i]
				if q.Run != nil && q.Sub.Values[i].Text != "" {
					detail += fmt.Sprintf("The query is invalid after substituting {{%s}} = %q for Rollout %s. ", ph.Tag, q.Sub.Values[i].Text, q.Run.Refs.Rollout.Name)
					if a := q.Run.Arg(ph.Arg); a != nil && a.FromRollout {
						rel = append(rel, rules.RelatedAt(q.Run.Refs.Rollout, a.RolloutPath(), "the value"))
					}
				}
			}
			if q.Run != nil && detail == "" {
				rel = append(rel, related(q, "")...)
			}
			// "unexpected end of input" points past the text: show its last character.
			off := min(q.Err.Offset, len(strings.TrimRight(q.Sub.Query, " \t\r\n"))-1)
			c.add(rules.Diagnostic{Resource: q.Template, Path: q.Path(), Message: msg, Detail: strings.TrimSpace(detail), Related: rel,
				Pos: parsedPos(p.Graph, q, max(off, 0), max(off, 0)+1)})
		}
		c.flush()
		return nil
	},
}
