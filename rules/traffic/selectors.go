package traffic

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// labelSet is a selector or a subset's labels, with where it is written.
type labelSet struct {
	Res    *graph.Resource
	Path   string // field path of the map (spec.selector, spec.subsets[1].labels)
	Labels map[string]string
	// role is the Service's role (stable, canary, ...) or the subset's name.
	role string
	// Namespace is where the selected pods live.
	Namespace string
}

// What names the label set in messages: `stable Service ns/name selector` or
// `DestinationRule ns/name subset "canary" labels`.
func (ls labelSet) What() string {
	if ls.Res.Kind == "Service" {
		return fmt.Sprintf("%s Service %s/%s selector", strings.TrimSuffix(ls.role, "Service"), ls.Res.Namespace, ls.Res.Name)
	}
	return fmt.Sprintf("DestinationRule %s/%s subset %q labels", ls.Res.Namespace, ls.Res.Name, ls.role)
}

// sortedKeys returns a map's keys in order, for deterministic reports.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rolloutLabelSets returns the Service selectors of a Rollout's Services and
// the labels of the stable and canary subsets of its managed DestinationRule.
func rolloutLabelSets(rr *graph.RolloutRefs) []labelSet {
	var out []labelSet
	seen := map[*graph.Resource]bool{}
	for _, s := range rr.Services {
		svc := s.Target
		if svc == nil || seen[svc] || svc.Service() == nil {
			continue
		}
		seen[svc] = true
		out = append(out, labelSet{Res: svc, Path: "spec.selector", Labels: svc.Service().Spec.Selector, Namespace: svc.Namespace, role: string(s.Role)})
	}
	if dr := rr.DestinationRule; dr != nil && dr.Target != nil && dr.Target.DestinationRule() != nil {
		for i, sub := range dr.Target.DestinationRule().Spec.GetSubsets() {
			if sub.GetName() != dr.StableSubset && sub.GetName() != dr.CanarySubset {
				continue
			}
			out = append(out, labelSet{Res: dr.Target, Path: graph.Index("spec.subsets", i) + ".labels", Labels: sub.GetLabels(), Namespace: rr.Rollout.Namespace, role: sub.GetName()})
		}
	}
	return out
}

// versionKeys are label keys that carry a release's version; the rule option
// versionKeys adds more.
var versionKeys = map[string]bool{
	"version": true, "app.kubernetes.io/version": true, "helm.sh/chart": true,
	"app.kubernetes.io/revision": true, "revision": true,
}

// versionValue matches values shaped like a release version: 1.2, v1.2.3, 2.0.0-rc.1.
var versionValue = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.-]+)?$`)

// imageTags returns the tags of a Rollout's container images.
func imageTags(rr *graph.RolloutRefs) map[string]bool {
	tags := map[string]bool{}
	spec := rr.Spec.Spec.Template.Spec
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range list {
			img := c.Image
			if i := strings.LastIndexByte(img, ':'); i >= 0 && !strings.Contains(img[i:], "/") {
				tags[img[i+1:]] = true
			}
		}
	}
	return tags
}

// VersionLabelSelector reports selectors and managed subsets that pin a
// version instead of leaving revision selection to the controller.
var VersionLabelSelector = &rules.Rule{
	ID: "RL2011", Name: "version-label-selector", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.Service, kinds.DestinationRule}, Tags: tags,
	Summary: "A stable/canary Service selector or managed subset pins a version-like label.",
	Doc: rules.Doc{
		Why: `Argo Rollouts tells the stable and the canary revision apart by adding
\'rollouts-pod-template-hash\' to the stable/canary Service selectors and DestinationRule
subsets at runtime. A selector or subset that also pins a version (\'version: v1\',
\'app.kubernetes.io/version\', an image tag) fights that: when the next release changes the label
in the pod template, the Service pinned in git either no longer matches the template (the Rollout
goes \'InvalidSpec\') or is updated together with it — and then the stable Service selects
only the *new* pods while the old stable pods still serve, so stable and canary select the same
pods (or none) during the rollout and the split the steps describe never happens. After
promotion the selector is wrong again for the next release.

Version-like means: the keys \'version\', \'app.kubernetes.io/version\', \'helm.sh/chart\',
\'revision\', \'app.kubernetes.io/revision\' (add your own with the option \'versionKeys\'), a
value equal to one of the Rollout's image tags, or a value shaped like \'1.2\' / \'v1.2.3\'.

Fix: select pods by stable identity labels (\'app\', \'app.kubernetes.io/name\') only and let
the controller add the pod-template hash.`,
		Bad: `
kind: Service
spec:
  selector: {app: checkout, version: v1}
`,
		Good: `
kind: Service
spec:
  selector: {app: checkout}
`,
	},
	Since: "v0.1.0",
	Options: []rules.Option{{
		Name: "versionKeys", Type: rules.OptStrings, Example: "[track, build]",
		Doc: "more label keys that name a version, added to the built-in ones.",
	}},
	Run: func(p *rules.Pass) error {
		keys := map[string]bool{}
		for k := range versionKeys {
			keys[k] = true
		}
		for _, k := range p.Options.Strings("versionKeys", nil) {
			keys[k] = true
		}
		seen := map[string]bool{}
		for _, rr := range p.Graph.Refs().Rollouts {
			tags := imageTags(rr)
			for _, ls := range rolloutLabelSets(rr) {
				for _, k := range sortedKeys(ls.Labels) {
					v := ls.Labels[k]
					why := ""
					switch {
					case keys[k]:
						why = fmt.Sprintf("key %q names a version", k)
					case tags[v] && v != "latest":
						why = fmt.Sprintf("value %q is the image tag of Rollout %s", v, rr.Rollout.Name)
					case versionValue.MatchString(v):
						why = fmt.Sprintf("value %q looks like a version", v)
					default:
						continue
					}
					path := graph.Key(ls.Path, k)
					id := fmt.Sprintf("%p %s", ls.Res, path)
					if seen[id] {
						continue
					}
					seen[id] = true
					p.Report(ls.Res, path, fmt.Sprintf("%s pins %s=%s (%s): Argo selects revisions with %s, and a pinned version makes stable and canary select the same or the wrong pods once the next release changes it",
						ls.What(), k, v, why, hashLabel), templateRelated(p.Graph, rr))
				}
			}
		}
		return nil
	},
}

// SelectorNotInTemplate reports selector or managed-subset labels that the
// Rollout's pod template does not carry.
var SelectorNotInTemplate = &rules.Rule{
	ID: "RL2012", Name: "selector-not-in-template", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.Service, kinds.DestinationRule, kinds.Deployment}, Tags: tags,
	Summary: "A Rollout's Service selector or stable/canary subset requires a label its pod template does not carry.",
	Doc: rules.Doc{
		Why: `A Service (or DestinationRule subset) selects pods by labels; every key it requires must be on
the Rollout's pod template with the same value, or it selects none of the Rollout's pods. For
Services Argo Rollouts refuses the Rollout (\'InvalidSpec\': "Service has unmatch label");
for subsets nothing checks, and traffic sent to the subset fails with 503 \'UH\' (no healthy
upstream). \'rollouts-pod-template-hash\' is exempt: the controller sets it.

Fix: add the label to \'spec.template.metadata.labels\' or remove it from the selector/subset.`,
		Bad: `
kind: Service
spec:
  selector: {app: checkout, tier: web}   # template labels: {app: checkout}
`,
		Good: `
kind: Service
spec:
  selector: {app: checkout}
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Graph.Refs().Rollouts {
			tmpl, known := p.Graph.PodLabels(rr.Rollout)
			if !known {
				continue // workloadRef to a Deployment outside the bundle
			}
			for _, ls := range rolloutLabelSets(rr) {
				for _, k := range sortedKeys(ls.Labels) {
					if k == hashLabel {
						continue
					}
					v := ls.Labels[k]
					got, ok := tmpl[k]
					if ok && got == v {
						continue
					}
					msg := fmt.Sprintf("%s requires %s=%s but Rollout %s's pod template has no label %q: it selects none of its pods", ls.What(), k, v, rr.Rollout.Name, k)
					if ok {
						msg = fmt.Sprintf("%s requires %s=%s but Rollout %s's pod template has %s=%s: it selects none of its pods", ls.What(), k, v, rr.Rollout.Name, k, got)
					}
					p.Report(ls.Res, graph.Key(ls.Path, k), msg, templateRelated(p.Graph, rr))
				}
			}
		}
		return nil
	},
}

// SelectsOtherRollout reports selectors and managed subsets that also select
// the pods of another Rollout.
var SelectsOtherRollout = &rules.Rule{
	ID: "RL2013", Name: "selects-other-rollout-pods", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout, kinds.Service, kinds.DestinationRule}, Tags: tags,
	Summary: "A Rollout's Service selector or stable/canary subset also matches another Rollout's pods.",
	Doc: rules.Doc{
		Why: `Until the controller adds \'rollouts-pod-template-hash\' (when the Service is created, and again
after every GitOps sync that restores the selector from git), a selector that matches another
Rollout's pod labels sends this application's traffic to the other application's pods too. In
subset mode the host Service is never rewritten by the controller, so its selector plus the
subset labels keep matching the other Rollout's pods for any traffic that does not go through
the subsets. Users see a fraction of requests answered by the wrong application.

Fix: add a label that only this Rollout's pods carry (for example \'app.kubernetes.io/name\') to
the selector and the pod template.`,
		Bad: `
# Rollouts cart and checkout both label pods {team: shop}
kind: Service
metadata: {name: checkout-stable}
spec:
  selector: {team: shop}
`,
		Good: `
spec:
  selector: {team: shop, app: checkout}
`,
	},
	Since: "v0.1.0",
	Run: func(p *rules.Pass) error {
		g := p.Graph
		x := g.Refs()
		seen := map[string]bool{}
		for _, rr := range x.Rollouts {
			for _, ls := range rolloutLabelSets(rr) {
				sel := ls.Labels
				owners := map[*graph.Resource]bool{rr.Rollout: true}
				if ls.Res.Kind == "DestinationRule" {
					// A subset narrows the endpoints of its host's Service.
					host := ls.Res.DestinationRule().Spec.GetHost()
					svc := g.ServiceForHost(host, ls.Res.Namespace)
					if svc == nil || svc.Service() == nil {
						continue
					}
					sel = map[string]string{}
					for k, v := range svc.Service().Spec.Selector {
						sel[k] = v
					}
					for k, v := range ls.Labels {
						sel[k] = v
					}
					ls.Namespace = svc.Namespace
				} else {
					for _, o := range x.ServiceUsers(ls.Res) {
						owners[o.Rollout] = true // sharing itself is SharedService's finding
					}
				}
				key := fmt.Sprintf("%p %s", ls.Res, ls.Path)
				if seen[key] || len(sel) == 0 {
					continue
				}
				seen[key] = true
				for _, other := range g.RolloutsSelectedBy(ls.Namespace, sel, hashLabel) {
					if owners[other] {
						continue
					}
					p.Report(ls.Res, ls.Path, fmt.Sprintf("%s (%s) also matches the pods of Rollout %s/%s: traffic for Rollout %s reaches the other application's pods whenever %s is not in the selector",
						ls.What(), formatLabels(sel), other.Namespace, other.Name, rr.Rollout.Name, hashLabel),
						templateRelated(g, x.ForRollout(other)))
				}
			}
		}
		return nil
	},
}

// templateRelated points at the pod template labels: the Rollout's, or the
// workloadRef Deployment's.
func templateRelated(g *graph.Graph, rr *graph.RolloutRefs) rules.Related {
	if ref := rr.Spec.Spec.WorkloadRef; ref != nil {
		if w := g.Get(ref.Kind, rr.Rollout.Namespace, ref.Name); w != nil {
			return rules.RelatedAt(w, "spec.template.metadata.labels", fmt.Sprintf("%s %s pod template labels (workloadRef of Rollout %s)", ref.Kind, ref.Name, rr.Rollout.Name))
		}
	}
	return rules.RelatedAt(rr.Rollout, "spec.template.metadata.labels", "Rollout "+rr.Rollout.Name+" pod template labels")
}

func formatLabels(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
