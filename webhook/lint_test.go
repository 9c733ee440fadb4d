package webhook

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// sharedRouteProbe is a cross-object rule for the test: it reports every
// Rollout that manages a VirtualService route another Rollout manages too, on
// the Rollout, with a related location on the route. It stands in for the
// real shared-route rule to prove that a finding on a cluster object reaches
// the review of the object it points at.
var sharedRouteProbe = &rules.Rule{
	ID: "RL2999", Name: "shared-route-probe", Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Error, Source: rules.SourceGo,
	Run: func(p *rules.Pass) error {
		refs := p.Graph.Refs()
		for _, k := range refs.RouteKeys() {
			users := refs.RouteUsers(k)
			if len(users) < 2 {
				continue
			}
			vs := users[0].VS.Target
			for _, u := range users {
				p.Report(u.Refs.Rollout, u.Route.Path, fmt.Sprintf("route %s[%d] of VirtualService %s is managed by %d Rollouts", k.Kind, k.Index, vs.Name, len(users)),
					rules.RelatedAt(vs, u.Route.VSPath(), "the shared route"))
			}
		}
		return nil
	},
}

func TestFindingsOnRelatedObjectsReachTheReview(t *testing.T) {
	v := NewView()
	for _, m := range []string{rolloutA, rolloutB, unrelated} {
		if err := v.Set(mustObj(t, m)); err != nil {
			t.Fatal(err)
		}
	}
	l := &Linter{Rules: append(all.Rules(), sharedRouteProbe), View: v}
	vs := mustObj(t, vsObj)
	raw, _ := json.Marshal(vs.Object)
	res, err := l.Lint(Key{KindVirtualService, "shop", "vs"}, "shop", raw, vs.Object)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Findings {
		if f.RuleID == sharedRouteProbe.ID {
			got = append(got, where(f))
		}
	}
	want := []string{
		"Rollout shop/a spec.strategy.canary.trafficRouting.istio.virtualService.routes[0]",
		"Rollout shop/b spec.strategy.canary.trafficRouting.istio.virtualServices[0].name",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findings on the Rollouts sharing the route:\n got %q\nwant %q", got, want)
	}

	// Linting an unrelated Service sees none of that, though the same rule runs.
	svc := mustObj(t, unrelated)
	raw, _ = json.Marshal(svc.Object)
	res, err = l.Lint(Key{KindService, "shop", "other"}, "shop", raw, svc.Object)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 || res.Related != 0 {
		t.Fatalf("unrelated Service: %d findings, %d related objects", len(res.Findings), res.Related)
	}
}
