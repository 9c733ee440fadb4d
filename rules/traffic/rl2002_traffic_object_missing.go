package traffic

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rolloutlint/rolloutlint/internal/lookalike"
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

A name holding a look-alike or invisible character (a Cyrillic \'е\', a zero-width space)
is reported with the character, and with the object whose ASCII name it imitates.

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
				detail := "The controller cannot shift traffic without it."
				// A look-alike character: the reference as written, folded to
				// the ASCII it imitates, is read the way Argo Rollouts reads it.
				odd := lookalikeRef(vs.Ref, &detail, func(ascii string) *graph.Resource {
					name, ns := graph.SplitNamespacedName(ascii, rr.Rollout.Namespace)
					return p.Graph.Get(kinds.VirtualService, ns, name)
				})
				msg := fmt.Sprintf("VirtualService %s/%s is not in the bundle", vs.Namespace, odd.show(vs.Name)) + odd.hint()
				// The name as written may mean another namespace: vs.ns.svc.cluster.local
				// is split after its last label, and a plain name is the Rollout's namespace.
				first, _, _ := strings.Cut(vs.Name, ".")
				related := odd.related("VirtualService")
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
				detail := fmt.Sprintf("Subsets %q and %q cannot be updated and routes to them fail.", dr.StableSubset, dr.CanarySubset)
				odd := lookalikeRef(dr.Name, &detail, func(ascii string) *graph.Resource {
					return p.Graph.Get(kinds.DestinationRule, dr.Namespace, ascii)
				})
				msg := fmt.Sprintf("DestinationRule %s/%s is not in the bundle", dr.Namespace, odd.show(dr.Name)) + odd.hint()
				first, _, _ := strings.Cut(dr.Name, ".")
				related := odd.related("DestinationRule")
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

// oddRef is what a missing-object finding says about a referenced name that
// holds look-alike or invisible characters (lookalike.Reference).
type oddRef struct {
	codes string          // "U+0435", for the message; "" for a plain name
	ascii string          // the reference folded to the ASCII it imitates
	meant *graph.Resource // the object that reference names, if any
}

// lookalikeRef checks a reference as written for look-alike characters: it
// prefixes *detail with the sentence naming them, and looks the ASCII name
// they imitate up with find.
func lookalikeRef(ref string, detail *string, find func(ascii string) *graph.Resource) oddRef {
	codes, why, ascii, ok := lookalike.Reference(ref)
	if !ok {
		return oddRef{}
	}
	*detail = why + " " + *detail
	o := oddRef{codes: codes, ascii: ascii}
	if ascii != "" {
		o.meant = find(ascii)
	}
	return o
}

// show is name for a message: quoted (an invisible character escaped) when
// it holds look-alike characters.
func (o oddRef) show(name string) string {
	if o.codes == "" {
		return name
	}
	return strconv.Quote(name)
}

// hint is the message's tail: the characters and the name meant.
func (o oddRef) hint() string {
	switch {
	case o.codes == "":
		return ""
	case o.meant == nil:
		return ": it holds " + o.codes
	}
	return fmt.Sprintf(": it holds %s (did you mean %q?)", o.codes, o.ascii)
}

// related points at the object meant.
func (o oddRef) related(kind string) []rules.Related {
	if o.meant == nil {
		return nil
	}
	return []rules.Related{rules.RelatedAt(o.meant, "metadata.name", fmt.Sprintf("%s %s has the ASCII name it imitates", kind, objectName(o.meant)))}
}
