package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// MetricLimits reports count, interval and limit combinations Argo Rollouts
// rejects when the AnalysisRun starts.
var MetricLimits = &rules.Rule{
	ID: "RL4020", Name: "metric-count-limits", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.AnalysisTemplate, kinds.ClusterAnalysisTemplate, kinds.AnalysisRun}, Tags: tags,
	Summary: "A metric's count, interval, failureLimit or consecutiveSuccessLimit is invalid for Argo Rollouts.",
	Doc: rules.Doc{
		Why: `Argo Rollouts validates metrics only when an AnalysisRun starts, so a bad template passes \'kubectl apply\'
and fails in the middle of a rollout (the run goes to phase Error with "Analysis spec invalid"). The rule
applies the same checks up front:

- \'count\' greater than 1 needs an \'interval\';
- \'count\' must be at least \'failureLimit + consecutiveSuccessLimit\' (when both are ≥ 0), and at least
  \'consecutiveSuccessLimit\' when failureLimit is disabled;
- \'failureLimit\' must be ≥ 0, or −1 to disable it; \'consecutiveSuccessLimit\', \'inconclusiveLimit\' and
  \'consecutiveErrorLimit\' must be ≥ 0; failureLimit and consecutiveSuccessLimit cannot both be disabled;
- \'interval\' and \'initialDelay\' must be Go durations (\'30s\', \'5m\').

Values written as \'{{args.x}}\' are resolved only at run time and are not checked.`,
		Bad: `
metrics:
  - name: error-rate
    count: 3
    failureLimit: 2
    consecutiveSuccessLimit: 3
`,
		Good: `
metrics:
  - name: error-rate
    interval: 1m
    count: 5
    failureLimit: 2
    consecutiveSuccessLimit: 3
`,
	},
	Since: "v0.1.0",
	// A template's findings depend on it and on lookups (its users) only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		templateSpecs(p, func(t *graph.Resource, spec *v1alpha1.AnalysisTemplateSpec) {
			for i := range spec.Metrics {
				checkLimits(p, t, graph.Index("spec.metrics", i), &spec.Metrics[i])
			}
		})
		return nil
	},
}

func checkLimits(p *rules.Pass, t *graph.Resource, mp string, m *v1alpha1.Metric) {
	report := func(field, msg, detail string) {
		p.ReportDetail(t, mp+"."+field, fmt.Sprintf("metric %s: %s", m.Name, msg), detail, users(p.Graph, t)...)
	}
	for _, f := range []struct {
		name  string
		value v1alpha1.DurationString
	}{{"interval", m.Interval}, {"initialDelay", m.InitialDelay}} {
		if f.value != "" && !strings.Contains(string(f.value), "{{") {
			if _, err := time.ParseDuration(string(f.value)); err != nil {
				report(f.name, fmt.Sprintf("%s %q is not a duration (%v)", f.name, f.value, err), fmt.Sprintf("Argo Rollouts fails the run with \"invalid %s string\".", f.name))
			}
		}
	}
	count, hasCount := intValue(m.Count)
	fl, hasFL := intValue(m.FailureLimit)
	csl, hasCSL := intValue(m.ConsecutiveSuccessLimit)
	if !hasFL && m.FailureLimit == nil {
		hasFL = true // default 0
	}
	if !hasCSL && m.ConsecutiveSuccessLimit == nil {
		hasCSL = true // default 0, which means disabled
	}
	if hasCount && count > 1 && m.Interval == "" {
		report("count", fmt.Sprintf("count %d needs an interval between measurements", count), "Argo Rollouts fails the run with \"interval must be specified when count > 1\".")
	}
	if hasFL && fl < -1 {
		report("failureLimit", fmt.Sprintf("failureLimit %d must be >= 0, or -1 to disable it", fl), "")
	}
	for _, f := range []struct {
		name string
		v    *intstr.IntOrString
	}{{"consecutiveSuccessLimit", m.ConsecutiveSuccessLimit}, {"inconclusiveLimit", m.InconclusiveLimit}, {"consecutiveErrorLimit", m.ConsecutiveErrorLimit}} {
		if v, ok := intValue(f.v); ok && v < 0 {
			report(f.name, fmt.Sprintf("%s %d must be >= 0", f.name, v), "")
		}
	}
	if hasFL && hasCSL && fl == -1 && csl == 0 {
		field := "failureLimit"
		report(field, "failureLimit -1 and consecutiveSuccessLimit 0 disable both limits", "Argo Rollouts rejects a metric with both limits disabled.")
	}
	if !hasCount || count <= 0 || !hasFL || !hasCSL {
		return
	}
	switch {
	case fl >= 0 && csl >= 0 && count < fl+csl:
		report("count", fmt.Sprintf("count %d is less than failureLimit + consecutiveSuccessLimit (%d + %d)", count, fl, csl), "Argo Rollouts rejects the metric.")
	case fl < 0 && count < csl:
		report("count", fmt.Sprintf("count %d is less than consecutiveSuccessLimit %d", count, csl), "The metric can never succeed.")
	}
	if il, ok := intValue(m.InconclusiveLimit); ok && count < il {
		report("count", fmt.Sprintf("count %d is less than inconclusiveLimit %d", count, il), "Argo Rollouts rejects the metric.")
	}
}
