package traffic

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// trafficByNameMemo indexes the bundle's VirtualServices and
// DestinationRules by kind/name, for the near misses of MissingObject's
// findings: built on the lint's first finding, not once per shard. Read only.
var trafficByNameMemo = graph.NewMemo[map[string][]*graph.Resource]("traffic.byName")

// MissingObject reports a VirtualService or DestinationRule the Rollout names
// that is not in the bundle.
var MissingObject = &rules.Rule{
	ID: "RL2002", Name: "traffic-object-missing", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService, kinds.DestinationRule}, Tags: tags,
	Summary: "The VirtualService or DestinationRule a Rollout references is not in the bundle.",
	Doc: rules.Doc{
		Why: `A Rollout with Istio traffic routing patches the VirtualService (and DestinationRule) it names.
When the object does not exist, the controller emits \'VirtualServiceNotFound\' /
\'DestinationRuleNotFound\' events and the Rollout stalls (a missing VirtualService also makes
the Rollout \'InvalidSpec\'): traffic never shifts. A reference may also be misspelt, or point
at the wrong namespace. Argo Rollouts v1.10 reads \'virtualService.name\' as \'name\' (the Rollout's
namespace) or \'name.namespace\' — after dropping a \'.cluster.local\' suffix, the last label is the
namespace, so \'checkout.routing.svc.cluster.local\' means VirtualService \'checkout.routing\' in
namespace \'svc\' (utils/istio GetVirtualServiceNamespaceName) — and looks \'destinationRule.name\'
up as written in the Rollout's namespace, with no \'name.namespace\' form at all
(rollout/trafficrouting/istio getDestinationRule). When the bundle has an object of that name in
another namespace, the finding says where it is and where Argo looks.

Severity policy: **warning** when the bundle contains Istio objects (the reference most likely
should resolve inside it), **info** when the bundle holds no \'networking.istio.io\' object at
all (the mesh configuration plainly lives in another repository). It is never an error, so
that the admission webhook, which sees objects one at a time in any order, does not reject a
Rollout applied before its VirtualService.

Fix: add the object to the bundle, or correct the name/namespace.`,
		Bad: `
trafficRouting:
  istio:
    virtualService: {name: checkout-vs}   # the bundle's VirtualService is "checkout"
`,
		Good: `
trafficRouting:
  istio:
    virtualService: {name: checkout}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		sev := missingSeverity(p)
		var byName map[string][]*graph.Resource // kind/name → objects, built on the lint's first finding
		elsewhere := func(kind string, names ...string) []*graph.Resource {
			if byName == nil {
				byName = trafficByNameMemo.Get(p.Graph, func() map[string][]*graph.Resource {
					m := map[string][]*graph.Resource{}
					for _, k := range []string{kinds.VirtualService, kinds.DestinationRule} {
						for _, r := range p.Graph.OfKind(k) {
							m[k+"/"+r.Name] = append(m[k+"/"+r.Name], r)
						}
					}
					return m
				})
			}
			var out []*graph.Resource
			for _, n := range names {
				for _, r := range byName[kind+"/"+n] {
					if len(out) < 3 && !slices.Contains(out, r) {
						out = append(out, r)
					}
				}
			}
			return out
		}
		for _, rr := range p.Rollouts() {
			for _, vs := range rr.VirtualServices {
				if vs.Target != nil {
					continue
				}
				msg := fmt.Sprintf("VirtualService %s/%s is not in the bundle", vs.Namespace, vs.Name)
				detail := "The controller cannot shift traffic without it."
				// The name as written may mean another namespace: vs.ns.svc.cluster.local
				// is split after its last label, and a plain name is the Rollout's namespace.
				first, _, _ := strings.Cut(vs.Name, ".")
				var related []rules.Related
				if found := elsewhere(kinds.VirtualService, vs.Name, first); len(found) > 0 {
					var where []string
					for _, o := range found {
						where = append(where, objectName(o))
						related = append(related, rules.RelatedAt(o, "metadata.name", "VirtualService "+objectName(o)))
					}
					msg += ", which has " + strings.Join(where, ", ")
					detail = fmt.Sprintf("Argo Rollouts reads %q as VirtualService %q in namespace %s (the last label before .cluster.local is the namespace, else the Rollout's); write %s. ",
						vs.Ref, vs.Name, vs.Namespace, found[0].Name+"."+found[0].Namespace) + detail
				}
				p.ReportDiag(rules.Diagnostic{Resource: rr.Rollout, Path: vs.Path, Severity: sev, Message: msg, Detail: detail, Related: related})
			}
			if dr := rr.DestinationRule; dr != nil && dr.Target == nil {
				msg := fmt.Sprintf("DestinationRule %s/%s is not in the bundle", dr.Namespace, dr.Name)
				detail := fmt.Sprintf("Subsets %q and %q cannot be updated and routes to them fail.", dr.StableSubset, dr.CanarySubset)
				first, _, _ := strings.Cut(dr.Name, ".")
				var related []rules.Related
				if found := elsewhere(kinds.DestinationRule, dr.Name, first); len(found) > 0 {
					var where []string
					for _, o := range found {
						where = append(where, objectName(o))
						related = append(related, rules.RelatedAt(o, "metadata.name", "DestinationRule "+objectName(o)))
					}
					msg += ", which has " + strings.Join(where, ", ")
					detail = fmt.Sprintf("Argo Rollouts looks it up by that name in the Rollout's namespace %s (destinationRule.name has no name.namespace form) and never updates %s. ",
						dr.Namespace, strings.Join(where, ", ")) + detail
				}
				p.ReportDiag(rules.Diagnostic{Resource: rr.Rollout, Path: dr.Path, Severity: sev, Message: msg, Detail: detail, Related: related})
			}
		}
		return nil
	},
}

// istioGroup is the API group of VirtualServices and DestinationRules.
const istioGroup = "networking.istio.io"

// missingSeverity is the policy for "the referenced object is not in the
// bundle": info when the bundle carries no Istio object at all (the mesh
// config plainly lives elsewhere), warning otherwise. Never above warning, so
// the webhook (which sees objects one at a time) does not block on ordering.
func missingSeverity(p *rules.Pass) rules.Severity {
	if !p.Graph.HasGroup(istioGroup) {
		return rules.Info
	}
	return rules.Warning
}
