package analysis

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// PromQLEmptyLabel reports label matchers whose value is or becomes empty.
var PromQLEmptyLabel = &rules.Rule{
	ID: "RL4010", Name: "promql-empty-label", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: append([]string{"promql"}, tags...),
	Summary: "A PromQL label matcher's value is empty, as written or after a Rollout's arg is substituted.",
	Doc: rules.Doc{
		Why: `In PromQL \'label=""\' (and \'label=~""\') selects only series that do *not* have the label. A matcher
that becomes empty because a Rollout passes an empty arg (\'- name: canary-svc\' with no value is the
empty string) silently turns the analysis' query into one that returns no data, and the rollout
hangs at its first analysis step or is aborted. The query is parsed with the Prometheus parser after
substituting, per Rollout, the values that Rollout passes; the finding is on the placeholder (or the
literal empty value) inside the query, with the Rollout's arg as related location.

Arguments are resolved as Argo Rollouts resolves them (utils/analysis
BuildArgumentsForRolloutAnalysisRun): a Rollout arg with \'valueFrom.fieldRef\' to
\'metadata.labels['team']\' or \'metadata.annotations[...]\' reads the **Rollout object's** own
labels and annotations, not its pod template's, and gives the empty string when the Rollout lacks
them — a common mistake when the label is only on the pods. Such an empty value is reported like
one written out.

A literal empty matcher written in the template is reported as a warning: it can be intended.`,
		Bad: `
steps:
      - analysis:
          templates: [{templateName: canary-health}]
          args:
          - name: canary-svc          # no value: the empty string
`,
		Good: `
steps:
      - analysis:
          templates: [{templateName: canary-health}]
          args:
          - name: canary-svc
            value: app-canary
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
			if !m.MatchesEmpty() {
				return
			}
			phs := q.Sub.PlaceholdersIn(m.ValueStart, m.ValueEnd)
			if len(phs) == 0 {
				c.add(rules.Diagnostic{Resource: q.Template, Path: q.Path(), Severity: rules.Warning,
					Pos:     parsedPos(p.Graph, q, m.ValueStart, m.ValueEnd),
					Message: fmt.Sprintf("metric %s: matcher %s%s\"\" selects only series without the label", q.Metric.Name, m.Name, m.Op()),
					Detail:  fmt.Sprintf("Only %s series without a %s label match it. Drop the matcher or give it a value.", metricOf(m), m.Name)})
				return
			}
			if q.Run == nil {
				return
			}
			for _, i := range phs {
				ph := q.Sub.Placeholders[i]
				a := q.Run.Arg(ph.Arg)
				if a == nil {
					continue
				}
				from := ""
				if a.FromRollout && a.Source != "" {
					from = "The arg takes " + a.Source + ". "
				}
				d := rules.Diagnostic{Resource: q.Template, Path: q.Path(),
					Pos:     queryPos(p.Graph, q, ph.Start, ph.End),
					Message: fmt.Sprintf("metric %s: {{%s}} is empty for Rollout %s, so the analysis sees no data", q.Metric.Name, ph.Tag, q.Run.Refs.Rollout.Name),
					Detail: fmt.Sprintf("%sThe matcher becomes %s%s\"\" and selects only %s series without a %s label.",
						from, m.Name, m.Op(), metricOf(m), m.Name)}
				if a.FromRollout {
					d.Related = append(d.Related, rules.RelatedAt(q.Run.Refs.Rollout, a.RolloutPath(), q.Run.Describe()+" passes an empty "+ph.Arg))
				} else {
					d.Related = append(d.Related, rules.RelatedAt(a.Template, a.DeclPath(), "the empty default of "+ph.Arg), trigger(q.Run, ""))
				}
				c.add(d)
			}
		})
		c.flush()
		return nil
	},
}

func metricOf(m promql.Matcher) string {
	if m.Metric == "" {
		return "the"
	}
	return m.Metric
}
