package analysis

import (
	"fmt"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// IstioStableService reports canary analyses whose query selects the stable
// Service's traffic and not the canary's.
var IstioStableService = &rules.Rule{
	ID: "RL4014", Name: "promql-istio-measures-stable", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: append([]string{"Rollout"}, templateKinds[1:]...), Tags: append([]string{"promql", "istio"}, tags...),
	Summary: "A canary (or blue-green pre-promotion) analysis selects destination_service_name (or destination_service) of the stable (or active) Service, so it measures the old pods.",
	Doc: rules.Doc{
		Why: `With host-level traffic splitting, the VirtualService sends the canary's share of requests to the
\'canaryService\' host and the rest to \'stableService\', and Istio labels each request's metrics with the
Service it was routed to (\'destination_service_name\', \'destination_service\'). A step or background
analysis whose query filters on the **stable** Service therefore measures the old version: the canary
passes its analysis whatever it does. Pass the canary Service's name. A query that also selects the
canary Service (a canary-versus-stable comparison) is not reported.

Blue-green is the same trap: a \'prePromotionAnalysis\' runs while the \'activeService\' still selects
the old ReplicaSet (the switch is what promotion does), so a query on the active Service measures
the old version; the new pods are behind the \'previewService\'. A \'postPromotionAnalysis\' runs
after the switch, when the active Service is the new version, and is not reported.`,
		Bad: `
canaryService: app-canary
      stableService: app-stable
      steps:
      - analysis:
          templates: [{templateName: error-rate}]
          args: [{name: service-name, value: app-stable}]
`,
		Good: `
canaryService: app-canary
      stableService: app-stable
      steps:
      - analysis:
          templates: [{templateName: error-rate}]
          args: [{name: service-name, value: app-canary}]
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
			if q.Run == nil || !q.Parsed() {
				continue
			}
			var stable, canary *graph.ServiceRef
			switch q.Run.Use {
			case graph.UseStep, graph.UseBackground:
				stable, canary = q.Run.Refs.Service(graph.RoleStable), q.Run.Refs.Service(graph.RoleCanary)
			case graph.UsePrePromotion:
				// Before promotion the active Service still selects the old
				// ReplicaSet; the new one is behind the preview Service.
				stable, canary = q.Run.Refs.Service(graph.RoleActive), q.Run.Refs.Service(graph.RolePreview)
			default:
				continue // post-promotion runs after the switch: active is the new version
			}
			if stable == nil || canary == nil || stable.Name == canary.Name {
				continue
			}
			ns := q.Run.Refs.Rollout.Namespace
			var hit *promql.Matcher
			for i := range q.Matchers {
				m := &q.Matchers[i]
				if m.Type != labels.MatchEqual {
					continue
				}
				if namesService(m, canary.Name, ns) {
					hit = nil
					break
				}
				if hit == nil && namesService(m, stable.Name, ns) {
					hit = m
				}
			}
			if hit == nil {
				continue
			}
			ro := q.Run.Refs.Rollout
			msg := fmt.Sprintf("metric %s: %s=%q is Rollout %s's stable Service", q.Metric.Name, hit.Name, hit.Value, ro.Name)
			detail := fmt.Sprintf("The canary's requests are labelled with %s, so %s measures the stable version.", canary.Name, q.Run.Describe())
			what := "the stable Service"
			if q.Run.Use == graph.UsePrePromotion {
				msg = fmt.Sprintf("metric %s: %s=%q is Rollout %s's active Service", q.Metric.Name, hit.Name, hit.Value, ro.Name)
				detail = fmt.Sprintf("Until promotion the active Service still selects the old version; the new version is behind the preview Service %s, so %s measures the old version.",
					canary.Name, q.Run.Describe())
				what = "the active Service"
			}
			c.add(rules.Diagnostic{Resource: q.Template, Path: q.Path(), Pos: parsedPos(p.Graph, q, hit.Start, hit.End),
				Message: msg,
				Detail:  detail,
				Related: []rules.Related{rules.RelatedAt(ro, stable.Path, what), trigger(q.Run, "")}})
		}
		c.flush()
		return nil
	},
}

// namesService reports whether a destination_service_name / destination_service
// matcher names the Service (short name, or its in-cluster host name).
func namesService(m *promql.Matcher, svc, ns string) bool {
	switch m.Name {
	case "destination_service_name":
		return m.Value == svc
	case "destination_service":
		return m.Value == svc || strings.HasPrefix(m.Value, svc+"."+ns+".")
	}
	return false
}
