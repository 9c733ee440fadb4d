package analysis

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
	"github.com/rolloutlint/rolloutlint/semantics/condition"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// PrometheusDryRun sends every resolved Prometheus query of the bundle's
// analyses to a live Prometheus, once each, and warns about the answers the
// analysis could not use. It is a live rule: it runs only with
// --prometheus-url (live/promcheck is its client).
var PrometheusDryRun = &rules.Rule{
	ID: "RL4090", Name: "prometheus-dry-run", Severity: rules.Warning, Source: rules.SourceLive,
	Kinds: templateKinds, Tags: append([]string{"promql", "live"}, tags...),
	Summary: "Live check (lint --prometheus-url): an analysis query returns no data, an error, or a result its condition cannot evaluate on the real Prometheus.",
	Doc: rules.Doc{
		Why: `A rollout stuck at its first analysis step is almost always a provider returning no data: a label
value the mesh does not produce, a metric that was renamed, an empty numerator. Whether a query
returns data depends on the metrics backend, so no static rule can tell. With
\'--prometheus-url\', rolloutlint merges each analysis run's args as Argo Rollouts does, substitutes
them into the query and, when every value is known now, sends it once as an instant query. It
warns when the vector is empty, when Prometheus rejects the query (\'bad_data\', a timeout), when
the metric's \'successCondition\'/\'failureCondition\', run with the expr engine Argo uses, fails on
the real answer (\'result < 0.02\' on a vector, \'result[0]\' on an empty one), and when the result
is a type the Argo Rollouts Prometheus provider does not support (a matrix).

The rule runs only when \'lint --prometheus-url\' is given and sends nothing but the queries; queries
with values known only at run time (\'valueFrom\' a secret, the pod template hash) are skipped. When
the server cannot be reached at all the lint stops with exit code 2. See docs/prometheus-dry-run.md.`,
		BadNote: "the canary Service is called `checkout-canary`: the query matches no series",
		Bad: `
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          query: sum(rate(istio_requests_total{destination_service_name="checkout-canry"}[1m]))
`,
		Good: `
      successCondition: len(result) > 0 && result[0] < 0.02
      provider:
        prometheus:
          query: sum(rate(istio_requests_total{destination_service_name="checkout-canary"}[1m]))
`,
		References: []rules.Reference{
			{Title: "Argo Rollouts: Prometheus analysis", URL: "https://argo-rollouts.readthedocs.io/en/stable/analysis/prometheus/"},
			{Title: "Prometheus HTTP API: instant queries", URL: "https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries"},
		},
	},
	Since: "v0.1.0",
	Run:   dryRun,
}

// dryStats counts what a dry run did, for the summary line.
type dryStats struct {
	queries, skipped, noData, errors, shape int
}

func dryRun(p *rules.Pass) error {
	if p.Live == nil || p.Live.Prometheus == nil {
		return nil
	}
	g, prom, ctx := p.Graph, p.Live.Prometheus, p.Context()
	var st dryStats
	type answer struct {
		res *promql.Result
		err error
	}
	answers := map[string]answer{}
	var out []rules.Diagnostic
	seen := map[string]int{} // finding key -> index in out
	for _, q := range analysisrun.Of(g).Queries {
		if !q.Parsed() { // a parse error: RL4011 reports it
			continue
		}
		if !sendable(q) {
			st.skipped++
			continue
		}
		a, ok := answers[q.Sub.Query]
		if !ok {
			st.queries++
			res, err := prom.Query(ctx, q.Sub.Query)
			if errors.Is(err, rules.ErrUnreachable) {
				// Asking again would fail alike: stop, and fail the run.
				return fmt.Errorf("%w (%d queries answered before)", err, st.queries-1)
			}
			a = answer{res, err}
			answers[q.Sub.Query] = a
		}
		msg, detail, kind := judge(q, a.res, a.err)
		if msg == "" {
			continue
		}
		var rel []rules.Related
		if q.Run != nil {
			rel = []rules.Related{rules.RelatedAt(q.Run.Refs.Rollout, q.Run.TriggerPath(), q.Run.Describe()+" runs this query")}
		}
		key := q.Template.File + "\x00" + q.Path() + "\x00" + msg + "\x00" + detail
		if i, dup := seen[key]; dup { // the same query from another step of the Rollout
			out[i].Related = append(out[i].Related, rel...)
			continue
		}
		seen[key] = len(out)
		switch kind {
		case "nodata":
			st.noData++
		case "error":
			st.errors++
		case "shape":
			st.shape++
		}
		out = append(out, rules.Diagnostic{
			Resource: q.Template, Path: q.Path(), Message: msg, Detail: detail, Related: rel,
			Pos: g.PosInScalar(q.Template, q.Path(), firstText(q.Sub.Original), lineEnd(q.Sub.Original)),
		})
	}
	for _, d := range out {
		p.ReportDiag(d)
	}
	p.Live.Note("prometheus dry-run: %d queries sent, %d skipped (values known only at run time), %d without data, %d errors, %d results the conditions cannot evaluate",
		st.queries, st.skipped, st.noData, st.errors, st.shape)
	return nil
}

// sendable reports whether every placeholder of the query has a value known now.
func sendable(q *analysisrun.Query) bool {
	if len(q.Sub.Unresolved) > 0 {
		return false
	}
	for _, v := range q.Sub.Values {
		if v.Runtime {
			return false
		}
	}
	return true
}

// judge turns Prometheus' answer into a finding's message ("" when the
// analysis can use it), its detail and its kind: nodata, error or shape.
func judge(q *analysisrun.Query, r *promql.Result, err error) (msg, detail, kind string) {
	who := "metric " + q.Metric.Name
	if q.Run != nil {
		who += " (Rollout " + q.Run.Refs.Rollout.Name + ")"
	}
	if err != nil {
		return fmt.Sprintf("%s: Prometheus rejected the query", who),
			fmt.Sprintf("Every measurement would error. Prometheus answered: %v. The query sent: %s.", err, quoteQuery(q.Sub.Query)), "error"
	}
	value, ok := promql.ArgoValue(r)
	if !ok {
		return fmt.Sprintf("%s: the query returns a %s, which the Prometheus provider does not support", who, r.Type),
			"Argo Rollouts' Prometheus provider fails with \"Prometheus metric type not supported\".", "shape"
	}
	if r.Type == "vector" && r.Series == 0 {
		return fmt.Sprintf("%s: the analysis would see no data", who),
			fmt.Sprintf("Prometheus returned no series for %s.", quoteQuery(q.Sub.Query)), "nodata"
	}
	for _, cond := range []struct{ field, expr string }{{"successCondition", q.Metric.SuccessCondition}, {"failureCondition", q.Metric.FailureCondition}} {
		if strings.TrimSpace(cond.expr) == "" {
			continue
		}
		if err := condition.Eval(cond.expr, value); err != nil {
			return fmt.Sprintf("%s: %s %q cannot evaluate the %s result %v", who, cond.field, cond.expr, r.Type, value),
				fmt.Sprintf("The evaluation fails: %s.", firstLine(err.Error())), "shape"
		}
	}
	return "", "", ""
}

// quoteQuery shows a query on one line, cut at 160 characters.
func quoteQuery(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 160 {
		q = q[:157] + "..."
	}
	return "`" + q + "`"
}

// firstText and lineEnd span the first non-blank line of the query.
func firstText(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t\r\n"))
}

func lineEnd(s string) int {
	start := firstText(s)
	if i := strings.IndexByte(s[start:], '\n'); i >= 0 {
		return start + i
	}
	return len(s)
}
