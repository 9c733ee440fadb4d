package traffic

import (
	"bytes"
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DestinationRuleHostMismatch reports subset-mode routes whose host is not the
// host of the Rollout's DestinationRule.
var DestinationRuleHostMismatch = &rules.Rule{
	ID: "RL2007", Name: "destination-rule-host-mismatch", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService, kinds.DestinationRule}, Tags: tags,
	Summary: "The managed route sends the stable/canary subsets to a host other than the Rollout's DestinationRule host.",
	Doc: rules.Doc{
		Why: `In subset mode Argo Rollouts labels the stable and canary subsets of the DestinationRule it
names, and sets weights on the route destinations with those subset names — whatever their
host. Istio resolves a subset against the DestinationRules **of the destination's host**. When
the route's host is not the DestinationRule's host, the labelled subsets are never used: the
route's subsets resolve to another DestinationRule (or none, 503 \'NC\'), and the canary
receives no traffic or the wrong pods do.

Fix: use the DestinationRule's host in the managed route's destinations (or point the Rollout at
the DestinationRule of the host the route uses).`,
		Bad: `
# DestinationRule checkout: host: checkout
route:
- destination: {host: checkout-v2, subset: stable}
`,
		Good: `
route:
- destination: {host: checkout, subset: stable}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachManagedRoute(p, func(m managedRoute) {
			dr := m.Refs.DestinationRule
			if dr == nil || dr.Target == nil || dr.Target.DestinationRule() == nil {
				return
			}
			host := dr.Target.DestinationRule().Spec.GetHost()
			// The hosts are compared in buffers: strings are made for a
			// finding only.
			var wantBuf, gotBuf [128]byte
			want := graph.AppendFQDN(wantBuf[:0], host, dr.Target.Namespace)
			for _, d := range m.Dests {
				if d.Subset == "" || (d.Subset != dr.StableSubset && d.Subset != dr.CanarySubset) {
					continue
				}
				if got := graph.AppendFQDN(gotBuf[:0], d.Host, m.VS.Target.Namespace); !bytes.Equal(got, want) {
					p.ReportDiag(rules.Diagnostic{Resource: m.VS.Target, Path: d.HostPath(),
						Message: fmt.Sprintf("destination host %q (subset %q) is not the host %q of DestinationRule %s/%s", d.Host, d.Subset, host, dr.Target.Namespace, dr.Target.Name),
						Detail: fmt.Sprintf("Rollout %s labels that DestinationRule's subsets, but %s is not %s: the subset resolves elsewhere.",
							m.Refs.Rollout.Name, string(got), string(want)),
						Related: []rules.Related{rules.RelatedAt(dr.Target, "spec.host", "the DestinationRule's host")}})
				}
			}
		})
		return nil
	},
}
