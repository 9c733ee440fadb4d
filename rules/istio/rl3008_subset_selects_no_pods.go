package istio

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// podTemplateHashLabel is the label Argo Rollouts adds to every pod and writes
// into the stable and canary subsets itself.
const podTemplateHashLabel = "rollouts-pod-template-hash"

// workloadKinds are the kinds whose pod templates the bundle can show.
var workloadKinds = []string{kinds.Rollout, kinds.Deployment, kinds.StatefulSet, kinds.DaemonSet, kinds.ReplicaSet}

// SubsetSelectsNoPods reports DestinationRule subsets whose labels no pod
// template behind the host's Service carries.
var SubsetSelectsNoPods = &rules.Rule{
	ID: "RL3008", Name: "subset-selects-no-pods", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.DestinationRule, kinds.Service, kinds.Rollout, kinds.Deployment, kinds.StatefulSet, kinds.DaemonSet, kinds.ReplicaSet}, Tags: []string{"istio"},
	Summary: "A DestinationRule subset's labels match no pod template behind the host's Service.",
	Doc: rules.Doc{
		Why: `A subset's endpoints are the Service's endpoints whose pods also carry every label of the subset.
If no pod can carry them (a typo, a \'version\' label the template does not set, the label of
another app), the subset is empty and every request routed to it fails with \'503 UH\' (no healthy
upstream). \'istioctl analyze\' (IST0173) checks subsets against live pods only, and Kiali flags
Argo Rollouts subsets as invalid because it does not know the controller adds labels.

rolloutlint checks against the pod templates of the bundle: the workloads (Rollout, Deployment,
StatefulSet, DaemonSet, ReplicaSet) in the Service's namespace whose template labels satisfy the
Service selector. A subset passes when one of them carries all of its labels. Labels that a
controller adds are accepted: \'rollouts-pod-template-hash\' (Argo Rollouts writes it into the stable
and canary subsets), and a Rollout's \'canaryMetadata\'/\'stableMetadata\' (and blue-green
\'activeMetadata\'/\'previewMetadata\') labels, and the labels istiod adds to each endpoint from
where its pod runs (\'topology.kubernetes.io/region\' and \'zone\', \'topology.istio.io/subzone\',
\'cluster\' and \'network\', \'kubernetes.io/hostname\'), unless empty: istiod never sets an empty
one. Nothing is reported when the Service or its workloads are not in the bundle; bare Pods are
not read.`,
		Bad: `
kind: Rollout
spec:
  template:
    metadata:
      labels: {app: reviews}
---
kind: DestinationRule
spec:
  host: reviews
  subsets:
  - name: canary
    labels: {app: reviews, version: v2}   # no pod has version=v2
`,
		Good: `
  subsets:
  - name: canary
    labels: {app: reviews}   # Argo Rollouts adds rollouts-pod-template-hash
`,
	},
	Since: "v0.1.0",
	// A DestinationRule's findings depend on it and on lookups (its
	// Service, the workloads' index) only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		g := p.Graph
		idx := workloadsMemo.Get(g, func() workloadIndex { return indexWorkloads(g) })
		for _, r := range p.OfKind(kinds.DestinationRule) {
			o := r.DestinationRule()
			if o == nil || o.Spec.GetHost() == "" {
				continue
			}
			svcRes := g.ServiceForHost(o.Spec.GetHost(), r.Namespace)
			if svcRes == nil || svcRes.Service() == nil || len(svcRes.Service().Spec.Selector) == 0 {
				continue
			}
			sel := svcRes.Service().Spec.Selector
			pods := idx.selected(svcRes.Namespace, sel)
			if len(pods) == 0 {
				continue
			}
			for i, s := range o.Spec.GetSubsets() {
				labels := s.GetLabels()
				if len(labels) == 0 || anyCarries(pods, labels) {
					continue
				}
				key := missingKey(pods, labels)
				base := graph.Index("spec.subsets", i) + ".labels"
				w := pods[0]
				p.ReportDetail(r, graph.Key(base, key), fmt.Sprintf("subset %q of DestinationRule %s selects no pod: none has %s=%s", s.GetName(), objectName(r), key, labels[key]),
					fmt.Sprintf("No pod template behind Service %s carries the label (%s %s has %s); requests routed to the subset get 503 UH.",
						objectName(svcRes), w.res.Kind, objectName(w.res), labelString(w.labels)),
					rules.RelatedAt(w.res, w.path, fmt.Sprintf("pod template labels of %s %s", w.res.Kind, objectName(w.res))))
			}
		}
		return nil
	},
}

// workload is one pod template of the bundle.
type workload struct {
	res    *graph.Resource
	path   string            // field path of the template labels
	labels map[string]string // template labels
	extra  map[podLabel]bool // labels a controller adds to some of its pods
}

// podLabel is one pod label, k=v.
type podLabel struct{ key, value string }

// endpointLabels are the labels istiod adds to every endpoint from where its
// pod runs (its node's locality and name, the cluster and network), which a
// subset may select on; istiod sets only non-empty values, so an empty one
// is still the pod's own.
var endpointLabels = map[string]bool{
	"topology.kubernetes.io/region": true,
	"topology.kubernetes.io/zone":   true,
	"topology.istio.io/subzone":     true,
	"topology.istio.io/cluster":     true,
	"topology.istio.io/network":     true,
	"kubernetes.io/hostname":        true,
}

// carries reports whether some pod of the workload can have label k=v.
func (w *workload) carries(k, v string) bool {
	if k == podTemplateHashLabel && w.res.Kind == "Rollout" {
		return true
	}
	if v != "" && endpointLabels[k] {
		// The node decides; only the network label is the pod's when set.
		if got, ok := w.labels[k]; !ok || k != "topology.istio.io/network" || got == v {
			return true
		}
	}
	if got, ok := w.labels[k]; ok && got == v {
		return true
	}
	return w.extra[podLabel{k, v}]
}

// workloadIndex finds workloads by namespace and one template label.
type workloadIndex map[string]map[podLabel][]*workload

// workloadsMemo holds indexWorkloads' index, which RL3008 reads once per
// shard: built once per lint. Read only.
var workloadsMemo = graph.NewMemo[workloadIndex]("istio.workloads")

// indexWorkloads reads every workload's pod template labels once.
func indexWorkloads(g *graph.Graph) workloadIndex {
	idx := workloadIndex{}
	// Most label pairs name one workload: their lists are one-element
	// windows (capacity one, so that a second workload copies the list) of
	// one array rather than an allocation each.
	n := 0
	for _, kind := range workloadKinds {
		n += len(g.OfKind(kind))
	}
	store := make([]*workload, 0, n)
	for _, kind := range workloadKinds {
		for _, r := range g.OfKind(kind) {
			w := &workload{res: r, path: "spec.template.metadata.labels"}
			if ro := r.Rollout(); ro != nil {
				// The typed Rollout is at hand; its generic form would be decoded again.
				w.labels = ro.Spec.Template.Labels
				var buf [4]*v1alpha1.PodTemplateMetadata
				metas := buf[:0]
				if c := ro.Spec.Strategy.Canary; c != nil {
					metas = append(metas, c.CanaryMetadata, c.StableMetadata)
				}
				if b := ro.Spec.Strategy.BlueGreen; b != nil {
					metas = append(metas, b.ActiveMetadata, b.PreviewMetadata)
				}
				for _, m := range metas {
					if m != nil {
						for k, v := range m.Labels {
							if w.extra == nil {
								w.extra = map[podLabel]bool{}
							}
							w.extra[podLabel{k, v}] = true
						}
					}
				}
			} else {
				w.labels = stringMap(r.Object(), "spec", "template", "metadata", "labels")
			}
			nsIdx := idx[r.Namespace]
			if nsIdx == nil {
				nsIdx = map[podLabel][]*workload{}
				idx[r.Namespace] = nsIdx
			}
			for k, v := range w.labels {
				l := podLabel{k, v}
				if ws, ok := nsIdx[l]; ok {
					nsIdx[l] = append(ws, w)
				} else {
					store = append(store, w) // a full store grows; earlier windows keep the old array
					nsIdx[l] = store[len(store)-1 : len(store) : len(store)]
				}
			}
		}
	}
	return idx
}

// selected returns the workloads of ns whose template labels satisfy sel, in
// load order. Candidates come from the index entry of the selector label with
// the fewest workloads, then are checked against the whole selector.
func (idx workloadIndex) selected(ns string, sel map[string]string) []*workload {
	var cands []*workload
	first := true
	for k, v := range sel {
		if l := idx[ns][podLabel{k, v}]; first || len(l) < len(cands) {
			cands, first = l, false
		}
	}
	var out []*workload
	for _, w := range cands {
		ok := true
		for k, v := range sel {
			if w.labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b *workload) int { return cmp.Compare(a.res.Index(), b.res.Index()) })
	return out
}

// anyCarries reports whether one workload can carry all labels.
func anyCarries(ws []*workload, labels map[string]string) bool {
	for _, w := range ws {
		all := true
		for k, v := range labels {
			if !w.carries(k, v) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// missingKey returns the first (sorted) subset label that the fewest
// workloads carry, the most useful one to name.
func missingKey(ws []*workload, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best, bestN := keys[0], len(ws)+1
	for _, k := range keys {
		n := 0
		for _, w := range ws {
			if w.carries(k, labels[k]) {
				n++
			}
		}
		if n < bestN {
			best, bestN = k, n
		}
	}
	return best
}

// stringMap reads a map of strings at a path of the generic object.
func stringMap(obj map[string]any, path ...string) map[string]string {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// labelString renders labels sorted, as `a=1, b=2`.
func labelString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ", ")
}
