package plan

import (
	"fmt"
	"strconv"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	aplan "github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// SplitWindow reports a Service selector switch and a weight shift onto that
// Service that Argo writes together but Istio pushes in different debounce
// windows, so proxies briefly route the new share to the old revision.
var SplitWindow = &rules.Rule{
	ID: "RL6002", Name: "selector-and-weight-in-separate-pushes", Severity: rules.Info, Source: rules.SourceGo, OptIn: true,
	Kinds: []string{kinds.Rollout, kinds.Service, kinds.VirtualService, kinds.Sidecar}, Tags: []string{"plan", "istio", "xds"},
	Summary: "A Service selector switch and a weight shift onto that Service reach the proxies in different pushes: a brief mixed state.",
	Doc: rules.Doc{
		Why: `With a host-level split, promotion makes two API writes in one reconcile: the stable Service's
selector moves to the new \'rollouts-pod-template-hash\' and the VirtualService sends the canary's
share back to the stable Service. Istio pushes the weight at once (a full push, RDS), but the
stable Service's endpoints only change after the Kubernetes EndpointSlice controller has
reconciled the new selector. That update usually lands within milliseconds, inside Istio's
debounce window, and merges with the weight into one push; when it lands after the window it
arrives as a separate endpoint push (both observed against the real istiod by the xDS
conformance harness, docs/xds-conformance.md). Between the two,
proxies send the shifted share to the stable Service while it still holds the **old** pods: a
short window where requests that were already on the new version go back to the old one
(usually seconds; the old ReplicaSet is still up for \'scaleDownDelaySeconds\').

This is informational: it is how a host-level split behaves. A subset-level split does not
have the gap (the DestinationRule label and the weight are both config changes that Istio
merges in one debounce window and applies from pod labels it already knows). If the flap
matters, use a subset-level split, or keep the old version compatible for that window.`,
		Bad: `
    canary:
      stableService: web-stable      # host-level: selector switch + weight shift at promotion
      canaryService: web-canary
      trafficRouting:
        istio:
          virtualService: {name: web}
`,
		Good: `
    canary:
      trafficRouting:
        istio:
          virtualService: {name: web}
          destinationRule: {name: web, stableSubsetName: stable, canarySubsetName: canary}
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		preds, m, err := predicted(p)
		if err != nil {
			return err
		}
		for _, pr := range preds {
			for i, s := range pr.Plan.States {
				checkWindows(p, m, pr.Plan, s, pr.Prediction.States[i])
			}
		}
		return nil
	},
}

func checkWindows(p *rules.Pass, m *xds.Model, pl *aplan.Plan, s aplan.State, sp xds.StatePushes) {
	// The EndpointSlice update usually lands inside the selector write's
	// debounce window and merges with the weight; the gap opens when it
	// lands after the window (xds conformance: pushesIfLate).
	pushes := sp.Pushes
	if sp.IfLate != nil {
		pushes = sp.IfLate
	}
	windowOf := func(write int, async bool) int {
		for _, x := range pushes {
			if x.Async != async {
				continue
			}
			for _, w := range x.Writes {
				if w == write {
					return x.Window
				}
			}
		}
		return 0
	}
	for i, sel := range s.Writes {
		if sel.Kind != aplan.WriteServiceSelector {
			continue
		}
		endpoints := windowOf(i, true)
		if endpoints == 0 {
			continue
		}
		// Weight moved onto the switched Service in the same reconcile, route
		// by route: each route carries its own requests, so the share at
		// risk is the largest any one route moves (not their sum: two
		// VirtualServices moving 100% each are not 200% of anything).
		var gained int32
		moved := 0 // routes that move weight onto the Service
		weightWindow := 0
		var route aplan.RouteState
		for _, rt := range s.Routes {
			var got int32
			gotWindow := 0
			for j, w := range s.Writes {
				if w.Kind != aplan.WriteVSWeight || w.Batch != sel.Batch || rt.VS != w.Object {
					continue
				}
				for _, d := range rt.Dests {
					if graph.ShortHost(d.Host) != sel.Object.Name || fmt.Sprintf("spec.%s[%d].route[%d].weight", rt.Kind, rt.Index, d.Index) != w.Field {
						continue
					}
					// A weight write's Old is the previous weight, printed by the plan.
					old, err := strconv.ParseInt(w.Old, 10, 32)
					if err != nil {
						continue
					}
					if d.Weight > int32(old) {
						got += d.Weight - int32(old)
						gotWindow = windowOf(j, false)
					}
				}
			}
			if got == 0 {
				continue
			}
			moved++
			if got > gained {
				gained, weightWindow, route = got, gotWindow, rt
			}
		}
		if gained == 0 || weightWindow == 0 || weightWindow >= endpoints {
			continue
		}
		svc := pl.Refs.Service(graph.RoleStable)
		path := "spec.strategy.canary"
		if svc != nil && svc.Name == sel.Object.Name {
			path = svc.Path
		} else if c := pl.Refs.Service(graph.RoleCanary); c != nil && c.Name == sel.Object.Name {
			path = c.Path
		}
		var related []rules.Related
		if sel.Resource != nil {
			related = append(related, rules.RelatedAt(sel.Resource, "spec.selector", "selector switched to the new revision"))
		}
		p.ReportDetail(pl.Resource, path, fmt.Sprintf("%s: up to %d%% of requests can reach the old revision's pods between two pushes", stepName(s), gained),
			fmt.Sprintf("Argo switches Service %s to the new revision and moves %d%% of %s of VirtualService %s/%s%s onto it in one reconcile, "+
				"but the endpoints follow only through the EndpointSlice controller: when its update lands after Istio %s's %d ms debounce window "+
				"(it usually lands inside and merges), the weight goes out in push %d and the endpoints in push %d.",
				sel.Object.Name, gained, routeName(route), route.VS.Namespace, route.VS.Name, otherRoutes(moved-1), m.Version, m.DebounceMillis, weightWindow, endpoints), related...)
	}
}

// otherRoutes names how many more routes move weight in the same reconcile.
func otherRoutes(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return ", and weight of 1 more route,"
	}
	return fmt.Sprintf(", and weight of %d more routes,", n)
}
