package plan

import (
	"fmt"
	"strings"

	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	aplan "github.com/rolloutlint/rolloutlint/semantics/plan"
)

// MissingDestination reports the step that first sends traffic to a subset or
// host that does not exist: Envoy answers those requests 503 NC.
var MissingDestination = &rules.Rule{
	ID: "RL6001", Name: "step-traffic-to-missing-destination", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService, kinds.DestinationRule, kinds.Service}, Tags: []string{"plan", "istio"},
	Summary: "A canary step first sends traffic to a DestinationRule subset or Service host that does not exist (503 NC).",
	Doc: rules.Doc{
		Why: `Istio renders a route destination into Envoy's route table even when the subset is defined
by no DestinationRule, or the host by no Service: the cluster is simply never created. Envoy
then answers every request that picks that destination with **503 and response flag \'NC\'**
(no cluster found). With weighted destinations only the picked share fails, and a weight of 0
is dropped from the route, so nothing breaks until the step that first gives the destination
traffic: a canary that looked healthy at \'setWeight: 0\' fails at the first real step, and
an analysis run then sees the errors and aborts.

rolloutlint plays the steps and reports the step, the route and the share of requests that
fail. Fix it by adding the subset to the DestinationRule for the host (or the Service), or by
correcting the subset name in the Rollout and the VirtualService.`,
		Bad: `
          destinationRule:
            name: reviews
            stableSubsetName: stable
            canarySubsetName: canary     # the DestinationRule defines stable and v2 only
      steps:
      - setWeight: 20                    # 20% of requests: 503 NC
`,
		Good: `
kind: DestinationRule
spec:
  host: reviews
  subsets:
  - name: stable
    labels: {app: reviews}
  - name: canary
    labels: {app: reviews}
`,
	},
	Since: "v0.1.0",
	// A Rollout's findings depend on its own plan and on lookups only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		// Only the Argo side matters here: the plans' states, not their
		// writes nor the xDS prediction, which is computed only when an
		// opt-in push rule asks for it. Each plan is built, checked and
		// dropped, not kept for the whole run (aplan.ForGraph would hold
		// every Rollout's states until the end).
		serviceNS := serviceNamespacesMemo.Get(p.Graph, func() map[string]bool {
			set := map[string]bool{}
			for _, ns := range p.Graph.Namespaces("Service") {
				set[ns] = true
			}
			return set
		})
		for _, rr := range p.Rollouts() {
			if !mayMiss(p.Graph, rr, serviceNS) {
				continue // no destination the plan can route to is missing
			}
			if pl := aplan.StatesOf(p.Graph, rr); pl != nil {
				checkMissing(p, pl, serviceNS)
			}
		}
		return nil
	},
}

// mayMiss reports whether a destination of a route the Rollout manages, as
// committed, is missing. A plan's routes are these routes, their
// destinations kept or deleted with new weights, plus the experiments' (whose
// Services Argo creates), and missing reads neither the weight nor the
// state: when no committed destination is missing, playing the plan out
// finds nothing.
func mayMiss(g *graph.Graph, rr *graph.RolloutRefs, serviceNS map[string]bool) bool {
	for _, vs := range rr.VirtualServices {
		if vs.Target == nil || vs.Target.VirtualService() == nil {
			continue
		}
		spec := &vs.Target.VirtualService().Spec
		key := aplan.Object{Kind: "VirtualService", Namespace: vs.Target.Namespace, Name: vs.Target.Name}
		for _, rt := range vs.Routes {
			if rt.Index < 0 {
				continue
			}
			route := aplan.RouteState{VS: key, Kind: rt.Kind, Index: rt.Index}
			var buf [8]aplan.Destination // a route's few destinations: no allocation
			for _, dest := range committedDests(buf[:], spec, rt.Kind, rt.Index) {
				if why, _ := missing(g, route, dest, serviceNS); why != "" {
					return true
				}
			}
		}
	}
	return false
}

// committedDests returns the destinations of route index of a kind as
// committed, in the stable role, indexed as graph.RouteDestinations lists
// them, in buf's array while they fit.
func committedDests(buf []aplan.Destination, spec *networkingv1.VirtualService, kind graph.RouteKind, index int) []aplan.Destination {
	if index < 0 || index >= graph.RouteCount(spec, kind) {
		return nil
	}
	dst := buf[:0]
	add := func(d *networkingv1.Destination) {
		dst = append(dst, aplan.Destination{Host: d.GetHost(), Subset: d.GetSubset(), Role: aplan.RoleStable, Index: len(dst)})
	}
	switch kind {
	case graph.HTTP:
		for _, r := range spec.GetHttp()[index].GetRoute() {
			add(r.GetDestination())
		}
	case graph.TLS:
		for _, r := range spec.GetTls()[index].GetRoute() {
			add(r.GetDestination())
		}
	case graph.TCP:
		for _, r := range spec.GetTcp()[index].GetRoute() {
			add(r.GetDestination())
		}
	}
	return dst
}

func checkMissing(p *rules.Pass, pl *aplan.Plan, serviceNS map[string]bool) {
	type destKey struct {
		vs        aplan.Object
		route     int
		kind      graph.RouteKind
		host, sub string
	}
	hadTraffic := map[destKey]bool{}
	reported := map[destKey]bool{}
	for _, s := range pl.States {
		for _, rt := range s.Routes {
			var total int32
			for _, d := range rt.Dests {
				total += d.Weight
			}
			for _, d := range rt.Dests {
				k := destKey{rt.VS, rt.Index, rt.Kind, d.Host, d.Subset}
				headerTraffic := d.Role == aplan.RoleCanary && hasHeaderRoute(s)
				if d.Weight <= 0 && !headerTraffic {
					continue
				}
				first := !hadTraffic[k]
				hadTraffic[k] = true
				if !first || s.Phase != aplan.PhaseStep || reported[k] {
					continue
				}
				why, related := missing(p.Graph, rt, d, serviceNS)
				if why == "" {
					continue
				}
				reported[k] = true
				share := "requests matching its header route"
				if d.Weight > 0 && total > 0 {
					share = fmt.Sprintf("%d%% of requests", d.Weight*100/total)
				}
				target := "host " + d.Host
				if d.Subset != "" {
					target = fmt.Sprintf("subset %q of host %s", d.Subset, d.Host)
				}
				path := s.Path
				if s.Step >= 0 {
					path = stepField(pl, s)
				}
				p.ReportDetail(pl.Resource, path, fmt.Sprintf("%s first sends %s to missing %s", stepName(s), share, target),
					fmt.Sprintf("The destination is on %s of VirtualService %s/%s, and %s: Envoy answers these requests 503 (response flag NC).",
						routeName(rt), rt.VS.Namespace, rt.VS.Name, why), related...)
			}
		}
	}
}

func hasHeaderRoute(s aplan.State) bool {
	for _, m := range s.Managed {
		if m.Type == "header" {
			return true
		}
	}
	return false
}

// stepField points at the step's action field.
func stepField(pl *aplan.Plan, s aplan.State) string {
	c := pl.Refs.Spec.Spec.Strategy.Canary
	if c == nil || s.Step >= len(c.Steps) {
		return s.Path
	}
	st := c.Steps[s.Step]
	switch {
	case st.SetWeight != nil:
		return s.Path + ".setWeight"
	case st.SetHeaderRoute != nil:
		return s.Path + ".setHeaderRoute"
	case st.Experiment != nil:
		return s.Path + ".experiment"
	}
	return s.Path
}

// missing says why a destination has no cluster, or "" when it exists (or
// when the bundle cannot tell: its DestinationRules or Services live elsewhere).
// The related locations are built only for a missing one.
func missing(g *graph.Graph, rt aplan.RouteState, d aplan.Destination, serviceNS map[string]bool) (string, []rules.Related) {
	if d.Role == aplan.RoleExperiment {
		return "", nil // experiment Services are created by Argo at run time
	}
	inVS := func() []rules.Related {
		vs := g.Get(kinds.VirtualService, rt.VS.Namespace, rt.VS.Name)
		if vs == nil || d.Index < 0 {
			return nil
		}
		field := "host"
		if d.Subset != "" {
			field = "subset"
		}
		return []rules.Related{rules.RelatedAt(vs, fmt.Sprintf("spec.%s[%d].route[%d].destination.%s", rt.Kind, rt.Index, d.Index, field), "the destination in the VirtualService")}
	}
	if d.Subset != "" {
		drs := g.DestinationRulesForHost(d.Host, rt.VS.Namespace)
		if len(drs) == 0 {
			return "", nil
		}
		for _, r := range drs {
			dr := r.DestinationRule()
			if dr == nil {
				return "", nil
			}
			for _, s := range dr.Spec.GetSubsets() {
				if s.GetName() == d.Subset {
					return "", nil
				}
			}
		}
		related := inVS()
		names := make([]string, 0, len(drs))
		for _, r := range drs {
			names = append(names, r.Namespace+"/"+r.Name)
			related = append(related, rules.RelatedAt(r, "spec.subsets", "DestinationRule for the host, without the subset"))
		}
		return fmt.Sprintf("DestinationRule %s does not define the subset", strings.Join(names, ", ")), related
	}
	fqdn := graph.FQDN(d.Host, rt.VS.Namespace)
	if !strings.HasSuffix(fqdn, ".svc."+graph.ClusterDomain) {
		return "", nil
	}
	_, rest, _ := strings.Cut(fqdn, ".")
	ns, _, _ := strings.Cut(rest, ".") // the second label: name.ns.svc.<domain>
	if !serviceNS[ns] || g.ServiceForHost(fqdn, ns) != nil || len(g.ServiceEntriesForHost(fqdn)) > 0 || len(g.ServiceEntriesForHost(d.Host)) > 0 {
		return "", nil
	}
	return fmt.Sprintf("no Service in namespace %s provides the host", ns), inVS()
}

// serviceNamespacesMemo holds the namespaces of the bundle's Services, the
// ones whose Services it shows all of, built once a lint (not once a shard).
var serviceNamespacesMemo = graph.NewMemo[map[string]bool]("plan.serviceNamespaces")
