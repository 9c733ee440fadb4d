package traffic

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// versionKeys are label keys that carry a release's version; the rule option
// versionKeys adds more.
var versionKeys = map[string]bool{
	"version": true, "app.kubernetes.io/version": true, "helm.sh/chart": true,
	"app.kubernetes.io/revision": true, "revision": true,
}

// versionValue matches values shaped like a release version: 1.2, v1.2.3, 2.0.0-rc.1.
var versionValue = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.-]+)?$`)

// looksLikeVersion reports whether v matches versionValue. Most label
// values (app names, stable, canary) do not start like a version, which is
// told without running the expression.
func looksLikeVersion(v string) bool {
	d := strings.TrimPrefix(v, "v")
	if d == "" || d[0] < '0' || d[0] > '9' {
		return false
	}
	return versionValue.MatchString(v)
}

// hasImageTag reports whether one of a Rollout's container images has the
// tag: a scan of its few containers, for every label value checked.
func hasImageTag(rr *graph.RolloutRefs, tag string) bool {
	spec := &rr.Spec.Spec.Template.Spec
	for _, list := range [...][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			img := list[i].Image
			if i := strings.LastIndexByte(img, ':'); i >= 0 && !strings.Contains(img[i:], "/") && img[i+1:] == tag {
				return true
			}
		}
	}
	return false
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
	// A label set is reported with the first Rollout (in load order) whose
	// image or keys make it pin a version, found by lookup among the set's
	// owners: a Rollout's findings depend on it and on lookups only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		keys := map[string]bool{}
		for k := range versionKeys {
			keys[k] = true
		}
		for _, k := range p.Options.Strings("versionKeys", nil) {
			keys[k] = true
		}
		for _, rr := range p.Rollouts() {
			for _, ls := range rolloutLabelSets(p.Graph, rr) {
				// Most label sets pin nothing: they are checked before their
				// keys are sorted for the findings.
				pinned := false
				for k, v := range ls.Labels {
					if pins(keys, rr, k, v) {
						pinned = true
						break
					}
				}
				if !pinned {
					continue
				}
				for _, k := range sortedKeys(ls.Labels) {
					v := ls.Labels[k]
					why := ""
					switch {
					case keys[k]:
						why = fmt.Sprintf("key %q names a version", k)
					case v != "latest" && hasImageTag(rr, v):
						why = fmt.Sprintf("value %q is the image tag of Rollout %s", v, rr.Rollout.Name)
					case looksLikeVersion(v):
						why = fmt.Sprintf("value %q looks like a version", v)
					default:
						continue
					}
					if pinnedBefore(p.Graph, ls, rr, keys, k, v) {
						continue // reported with that Rollout
					}
					path := graph.Key(ls.Path, k)
					p.ReportDetail(ls.Res, path, fmt.Sprintf("%s pins %s=%s (%s)", ls.What(), k, v, why),
						fmt.Sprintf("Argo selects revisions with %s; a pinned version makes stable and canary select the same or the wrong pods once the next release changes it.", hashLabel),
						templateRelated(p.Graph, rr))
				}
			}
		}
		return nil
	},
}

// pins reports whether label k=v of a label set of rr pins a version: the
// key names one, or the value is rr's image tag or looks like a version.
func pins(keys map[string]bool, rr *graph.RolloutRefs, k, v string) bool {
	return keys[k] || v != "latest" && hasImageTag(rr, v) || looksLikeVersion(v)
}

// pinnedBefore reports whether a Rollout before rr among the owners of
// label set ls finds k=v pinning a version, and so reports it.
func pinnedBefore(g *graph.Graph, ls labelSet, rr *graph.RolloutRefs, keys map[string]bool, k, v string) bool {
	for _, o := range labelSetOwners(g, ls) {
		if o == rr {
			return false
		}
		if pins(keys, o, k, v) {
			return true
		}
	}
	return false
}
