package analysis

import (
	"fmt"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// versionLabels are the pod labels Istio reads for the canonical revision that
// becomes destination_version / source_version.
var versionLabels = []string{"version", "app.kubernetes.io/version", "service.istio.io/canonical-revision"}

// IstioVersionLabel reports queries filtering on destination_version when the
// Rollout's pods have no version label.
var IstioVersionLabel = &rules.Rule{
	ID: "RL4012", Name: "promql-istio-version-unlabelled", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: append([]string{"Rollout"}, templateKinds[1:]...), Tags: append([]string{"promql", "istio"}, tags...),
	Summary: "A query filters on destination_version but the Rollout's pods carry no version label, so Istio reports \"unknown\".",
	Doc: rules.Doc{
		Why: `Istio fills \'destination_version\' (and \'source_version\') of \'istio_requests_total\' from the pod's
\'version\' label (or \'app.kubernetes.io/version\', \'service.istio.io/canonical-revision\'), and with none
of them reports \'unknown\'. Argo Rollouts does not add a version label to canary pods (it adds
\'rollouts-pod-template-hash\'), so a query such as \'destination_version="canary"\' returns no data
unless the Rollout's template or \'canaryMetadata.labels\' sets one. Filter on
\'destination_workload_label_rollouts_pod_template_hash\'-style labels or the canary Service instead, or
label the pods.`,
		Bad: `
kind: Rollout
spec:
  template:
    metadata:
      labels: {app: web}
---
        query: sum(rate(istio_requests_total{destination_app="web",destination_version="canary"}[1m]))
`,
		Good: `
kind: Rollout
spec:
  strategy:
    canary:
      canaryMetadata:
        labels: {version: canary}
      stableMetadata:
        labels: {version: stable}
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
			if q.Run == nil || (m.Name != "destination_version" && m.Name != "source_version") {
				return
			}
			if m.Type != labels.MatchEqual && m.Type != labels.MatchRegexp || m.Value == "" || m.Value == "unknown" {
				return
			}
			if m.Name == "source_version" || hasVersionLabel(q.Run) {
				return
			}
			ro := q.Run.Refs.Rollout
			c.add(rules.Diagnostic{Resource: q.Template, Path: q.Path(), Pos: parsedPos(p.Graph, q, m.Start, m.End),
				Message: fmt.Sprintf("metric %s: %s%s%q never matches the pods of Rollout %s", q.Metric.Name, m.Name, m.Op(), m.Value, ro.Name),
				Detail:  "They have no version label, so Istio reports destination_version=\"unknown\" for stable and canary alike.",
				Related: []rules.Related{rules.RelatedAt(ro, "spec.template.metadata.labels", "the pod labels, without version"), trigger(q.Run, "")}})
		})
		c.flush()
		return nil
	},
}

// hasVersionLabel reports whether the run's Rollout gives its pods a label
// Istio reads as the version, in the template or the canary metadata. A
// Rollout whose pods come from a workloadRef cannot be judged and passes.
func hasVersionLabel(run *analysisrun.Run) bool {
	spec := run.Refs.Spec.Spec
	if spec.WorkloadRef != nil {
		return true
	}
	sets := []map[string]string{spec.Template.Labels}
	if c := spec.Strategy.Canary; c != nil && c.CanaryMetadata != nil {
		sets = append(sets, c.CanaryMetadata.Labels)
	}
	if b := spec.Strategy.BlueGreen; b != nil && b.PreviewMetadata != nil {
		sets = append(sets, b.PreviewMetadata.Labels)
	}
	for _, set := range sets {
		for _, l := range versionLabels {
			if _, ok := set[l]; ok {
				return true
			}
		}
	}
	return false
}
