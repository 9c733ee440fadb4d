package traffic

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// ServiceNotFound reports a Service a Rollout names (stable, canary, ping,
// pong, active, preview) that the bundle does not hold.
var ServiceNotFound = &rules.Rule{
	ID: "RL2019", Name: "service-not-found", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.Service}, Tags: tags,
	Summary: "A Service a Rollout names (stable, canary, ping, pong, active or preview) is not in the bundle.",
	Doc: rules.Doc{
		Why: `Before it reconciles a Rollout, Argo Rollouts looks up every Service the Rollout names —
\'canary.stableService\', \'canary.canaryService\', \'canary.pingPong.pingService\' and
\'pongService\', \'blueGreen.activeService\' and \'previewService\' — in the Rollout's own namespace.
When one does not exist the validation fails (\'spec.strategy.canary.stableService: Invalid
value: "chekout-stable": service "chekout-stable" not found\'), the Rollout is marked
\'InvalidSpec\' and nothing is rolled out until the Service appears. \'kubectl argo rollouts lint\'
does not check it: only the controller does, once the Rollout is applied.

Severity, as for the other references to objects a bundle may not hold: **warning** when the
bundle holds Services of the Rollout's namespace (this one should be among them: it is misspelt
or missing, and the finding suggests the closest name), **info** when it holds none (the Services are deployed from
elsewhere, and the reference was not checked). It is never an error, so that the admission
webhook, which sees the Rollout with only the cluster's objects, does not reject a Rollout
applied just before its Services. A Service of that name in another namespace is shown as a
related location: the lookup never leaves the Rollout's namespace. A name holding a look-alike
or invisible character (a Cyrillic \'е\', a zero-width space) is reported with the character,
and with the Service whose ASCII name it imitates. A Service whose name is the reference with a
prefix is suggested too: a kustomize \'namePrefix\' renames Services but not a Rollout's
references to them unless kustomize is given Argo Rollouts' configuration for Rollouts.

Fix the name, or add the Service to the bundle.`,
		Bad: `
kind: Service
metadata: {name: checkout-stable, namespace: shop}
---
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  strategy:
    canary:
      stableService: chekout-stable   # no such Service
      canaryService: checkout-canary
`,
		Good: `
    canary:
      stableService: checkout-stable
      canaryService: checkout-canary
`,
	},
	Since: "v0.1.0",
	// A Rollout's findings depend on it and on lookups (its Services, the
	// Services' index) only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		var idx *serviceIndex // built on the lint's first finding
		for _, rr := range p.Rollouts() {
			for _, ref := range rr.Services {
				if ref.Target != nil {
					continue
				}
				if idx == nil {
					idx = servicesIndexed(p.Graph)
				}
				reportServiceNotFound(p, idx, rr, ref)
			}
		}
		return nil
	},
}

// reportServiceNotFound reports one of rr's Services that the bundle does not
// hold, with the Service most likely meant.
func reportServiceNotFound(p *rules.Pass, idx *serviceIndex, rr *graph.RolloutRefs, ref graph.ServiceRef) {
	ro := rr.Rollout
	ns := ro.Namespace
	detail := fmt.Sprintf("Argo Rollouts looks it up in the Rollout's namespace and, until it exists, marks the Rollout InvalidSpec (service %q not found) and rolls nothing out.", ref.Name)
	sev := rules.Info
	if len(idx.byNS[ns]) > 0 {
		sev = rules.Warning
		detail += fmt.Sprintf(" The bundle holds other Services of namespace %s, so this one should be among them: the name is misspelt, or the Service is missing.", ns)
	} else {
		detail += fmt.Sprintf(" The bundle holds no Service of namespace %s: they are presumably deployed from elsewhere, and this one was not checked.", ns)
	}
	// A name with look-alike characters is shown quoted (an invisible one
	// escaped) and compared by the ASCII it imitates; the Service meant is
	// the nearest name to that, as for any other name.
	odd := lookalikeRef(ref.Name, &detail, func(string) *graph.Resource { return nil })
	lookup := ref.Name
	if odd.ascii != "" {
		lookup = odd.ascii
	}
	msg := fmt.Sprintf("%s: Service %s/%s is not in the bundle", ref.Role, ns, odd.show(ref.Name)) + odd.hint()
	var related []rules.Related
	if near, prefixed := nearestService(lookup, idx.byNS[ns], rr); near != nil {
		msg += fmt.Sprintf(" (did you mean %q?)", near.Name)
		what := "has a similar name"
		switch {
		case odd.codes != "" && near.Name == odd.ascii:
			what = "has the ASCII name it imitates"
		case prefixed:
			what = "has the name with a prefix"
			detail += fmt.Sprintf(" If a kustomize namePrefix made %s, it renamed the Service but not this reference: kustomize updates a Rollout's Service fields only when given them (configurations: with Argo Rollouts' rollout-transform.yaml).", near.Name)
		}
		related = append(related, rules.RelatedAt(near, "metadata.name", fmt.Sprintf("Service %s %s", objectName(near), what)))
	}
	for _, s := range idx.byName[ref.Name] {
		if len(related) == 3 {
			break
		}
		related = append(related, rules.RelatedAt(s, "metadata.name", fmt.Sprintf("Service %s (another namespace: the Rollout's Services are looked up in its own)", objectName(s))))
	}
	p.ReportDiag(rules.Diagnostic{Resource: ro, Path: ref.Path, Severity: sev, Message: msg, Detail: detail, Related: related})
}

// serviceIndex indexes the bundle's Services for ServiceNotFound's findings.
type serviceIndex struct {
	byNS   map[string][]*graph.Resource // namespace → Services, in load order
	byName map[string][]*graph.Resource // name → Services, every namespace
}

// serviceIndexMemo holds the index once a lint, whichever shard asks first.
// Read only.
var serviceIndexMemo = graph.NewMemo[*serviceIndex]("traffic.servicesIndexed")

func servicesIndexed(g *graph.Graph) *serviceIndex {
	return serviceIndexMemo.Get(g, func() *serviceIndex {
		x := &serviceIndex{byNS: map[string][]*graph.Resource{}, byName: map[string][]*graph.Resource{}}
		for _, s := range g.OfKind(kinds.Service) {
			x.byNS[s.Namespace] = append(x.byNS[s.Namespace], s)
			x.byName[s.Name] = append(x.byName[s.Name], s)
		}
		return x
	})
}

// nearestService returns the Service whose name is within edit distance 2 of
// name (the closest, first in load order on ties), else the first whose name
// is name with a prefix (prefixed: what a kustomize namePrefix makes), or
// nil. Services rr already names in another role are left out: two roles
// need two Services.
func nearestService(name string, candidates []*graph.Resource, rr *graph.RolloutRefs) (near *graph.Resource, prefixed bool) {
	var withPrefix *graph.Resource
	bestD := 0
	for _, c := range candidates {
		if slices.ContainsFunc(rr.Services, func(s graph.ServiceRef) bool { return s.Target == c }) {
			continue
		}
		if d, ok := textdist.Within(name, c.Name, 2); ok && (near == nil || d < bestD) {
			near, bestD = c, d
		} else if withPrefix == nil && strings.HasSuffix(c.Name, "-"+name) {
			withPrefix = c
		}
	}
	if near == nil && withPrefix != nil {
		return withPrefix, true
	}
	return near, false
}
