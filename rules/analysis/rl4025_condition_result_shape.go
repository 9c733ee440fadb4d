package analysis

import (
	"fmt"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/condition"
)

// ConditionShape reports conditions that cannot evaluate the result shape the
// metric's Prometheus query produces.
var ConditionShape = &rules.Rule{
	ID: "RL4025", Name: "condition-result-shape", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: append([]string{"promql"}, tags...),
	Summary: "A successCondition/failureCondition does not type-check against the result its Prometheus query returns (a vector is a list).",
	Doc: rules.Doc{
		Why: `The Argo Rollouts Prometheus provider hands a condition \'result\' as a list of numbers (\'[]float64\',
one per series) when the query returns an instant vector, which every selector, \'rate()\' and \'sum()\'
does, and as a number only when the query returns a scalar (\'scalar(...)\', a literal). So
\'result < 0.02\' on \'sum(rate(...))\' fails to compile in the expr engine ("mismatched types []float64
and float64"): every measurement is an Error and the analysis fails after \'consecutiveErrorLimit\', however
healthy the canary is. The rule compiles each condition with the expr engine Argo uses, typed by the
query's result type from the Prometheus parser. Other query results (a range vector, a string) are
not supported by the provider at all.`,
		Bad: `
successCondition: result < 0.02
      provider:
        prometheus:
          query: sum(rate(istio_requests_total{response_code=~"5.."}[1m])) / sum(rate(istio_requests_total[1m]))
`,
		Good: `
successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          query: sum(rate(istio_requests_total{response_code=~"5.."}[1m])) / sum(rate(istio_requests_total[1m]))
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
		type key struct {
			cond   string
			vector bool
		}
		compiled := map[key]error{} // templates shared by many Rollouts compile once
		for _, q := range scannedQueries(p) {
			if !q.Parsed() || q.Metric.Provider.Prometheus.RangeQuery != nil {
				continue
			}
			// With several providers (RL4021) the run fails before any
			// condition is evaluated, and the condition may well be written
			// for the other provider's result: judging it against the
			// Prometheus shape would be a second, misleading finding.
			if len(providers(&q.Metric.Provider)) > 1 {
				continue
			}
			var result any
			vector := false
			switch typ := q.Type; typ {
			case parser.ValueTypeVector:
				result, vector = condition.Vector, true
			case parser.ValueTypeScalar:
				result = condition.Scalar
			default:
				c.add(rules.Diagnostic{Resource: q.Template, Path: q.Path(),
					Message: fmt.Sprintf("metric %s: the query returns a %s, which the Prometheus provider does not support", q.Metric.Name, typ),
					Detail:  "Argo Rollouts' Prometheus provider fails with \"Prometheus metric type not supported\".",
					Related: users(p.Graph, q.Template)})
				continue
			}
			for _, f := range []struct{ field, cond string }{{"successCondition", q.Metric.SuccessCondition}, {"failureCondition", q.Metric.FailureCondition}} {
				if f.cond == "" {
					continue
				}
				k := key{f.cond, vector}
				err, done := compiled[k]
				if !done {
					err = condition.Check(f.cond, result)
					compiled[k] = err
				}
				if err != nil {
					c.add(rules.Diagnostic{Resource: q.Template, Path: q.MetricPath() + "." + f.field,
						Message: fmt.Sprintf("metric %s: %s %q cannot evaluate the %s the query returns", q.Metric.Name, f.field, f.cond, q.Type),
						Detail: fmt.Sprintf("Every measurement would error: %s. Here result is %s.",
							firstLine(err.Error()), shapeName(vector)),
						Related: users(p.Graph, q.Template)})
				}
			}
		}
		c.flush()
		return nil
	},
}

func shapeName(vector bool) string {
	if vector {
		return "a list of numbers, one per series: use result[0] with a len(result) > 0 guard, or all()/any()"
	}
	return "a single number"
}
