package traffic

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// RouteMissingDestination reports managed routes without the stable or the
// canary destination, and destinations that match only by short name.
var RouteMissingDestination = &rules.Rule{
	ID: "RL2004", Name: "route-missing-destination", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.VirtualService}, Tags: tags,
	Summary: "A managed route lacks the stable or the canary destination, or names it in another namespace.",
	Doc: rules.Doc{
		Why: `Every route a Rollout manages must carry both the stable and the canary destination: in host
mode a destination whose host is the stable Service and one whose host is the canary Service;
in subset mode (\'destinationRule\' set) one with the stable subset and one with the canary
subset. Otherwise Argo marks the Rollout \'InvalidSpec\' ("Canary Service 'x' not found in route")
and traffic never shifts.

Argo compares hosts by their first label only (\'checkout-canary.other.svc.cluster.local\' counts
as \'checkout-canary\'). rolloutlint also resolves the namespace: a host that matches by short
name but names a Service in another namespace (or an external host) passes Argo's check while
Istio sends the weighted traffic somewhere else, so it is reported too.`,
		Bad: `
http:
- name: primary
  route:
  - destination: {host: checkout-stable}
    weight: 100
  # no checkout-canary destination
`,
		Good: `
http:
- name: primary
  route:
  - destination: {host: checkout-stable}
    weight: 100
  - destination: {host: checkout-canary}
    weight: 0
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachManagedRoute(p, func(m managedRoute) {
			rr := m.Refs
			// The related route and the list of destinations are for a
			// finding: most managed routes have none.
			rel := func() rules.Related { return rules.RelatedAt(m.VS.Target, m.Route.VSPath(), "the managed route") }
			have := func() string {
				var seen []string
				for _, d := range m.Dests {
					s := d.Host
					if d.Subset != "" {
						s += " subset " + d.Subset
					}
					seen = append(seen, s)
				}
				if len(seen) == 0 {
					return "It has no destination."
				}
				return "Its destinations: " + strings.Join(seen, ", ") + "."
			}
			if dr := rr.DestinationRule; dr != nil {
				for _, want := range []struct{ role, subset string }{{"canary", dr.CanarySubset}, {"stable", dr.StableSubset}} {
					if want.subset == "" || hasSubset(m.Dests, want.subset) {
						continue
					}
					p.ReportDetail(rr.Rollout, m.Route.Path, fmt.Sprintf("%s has no destination with the %s subset %q", m.label(), want.role, want.subset), have(), rel())
				}
				return
			}
			stable, canary := serviceNames(rr)
			for _, want := range []struct{ role, svc string }{{"canary", canary}, {"stable", stable}} {
				if want.svc == "" {
					continue
				}
				found := false
				for _, d := range m.Dests {
					if graph.ShortHost(d.Host) != want.svc {
						continue
					}
					found = true
					// Compared in buffers: the names are made only for a finding.
					var gotBuf, expBuf [128]byte
					if got, exp := graph.AppendFQDN(gotBuf[:0], d.Host, m.VS.Target.Namespace), graph.AppendServiceFQDN(expBuf[:0], want.svc, rr.Rollout.Namespace); !bytes.Equal(got, exp) {
						p.ReportDiag(rules.Diagnostic{Resource: m.VS.Target, Path: d.HostPath(),
							Message: fmt.Sprintf("destination host %q matches the %s Service %q only by short name", d.Host, want.role, want.svc),
							Detail:  fmt.Sprintf("Argo sets its weight, but Istio sends that traffic to %s, not to %s.", string(got), string(exp)),
							Related: []rules.Related{rules.RelatedAt(rr.Rollout, m.Route.Path, "Rollout "+rr.Rollout.Name+" manages this route")}})
					}
				}
				if !found {
					p.ReportDetail(rr.Rollout, m.Route.Path, fmt.Sprintf("%s has no destination for the %s Service %q", m.label(), want.role, want.svc), have(), rel())
				}
			}
		})
		return nil
	},
}

func hasSubset(ds []graph.Destination, subset string) bool {
	for _, d := range ds {
		if d.Subset == subset {
			return true
		}
	}
	return false
}
