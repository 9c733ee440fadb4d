package traffic

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

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
at the wrong namespace with the \'name.namespace\' form.

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
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		sev := missingSeverity(p)
		for _, rr := range p.Graph.Refs().Rollouts {
			for _, vs := range rr.VirtualServices {
				if vs.Target == nil {
					p.ReportDiag(rules.Diagnostic{Resource: rr.Rollout, Path: vs.Path, Severity: sev,
						Message: fmt.Sprintf("VirtualService %s/%s is not in the bundle", vs.Namespace, vs.Name),
						Detail:  "The controller cannot shift traffic without it."})
				}
			}
			if dr := rr.DestinationRule; dr != nil && dr.Target == nil {
				p.ReportDiag(rules.Diagnostic{Resource: rr.Rollout, Path: dr.Path, Severity: sev,
					Message: fmt.Sprintf("DestinationRule %s/%s is not in the bundle", dr.Namespace, dr.Name),
					Detail:  fmt.Sprintf("Subsets %q and %q cannot be updated and routes to them fail.", dr.StableSubset, dr.CanarySubset)})
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
