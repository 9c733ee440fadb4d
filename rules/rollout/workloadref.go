package rollout

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// workloadKinds are the kinds a workloadRef may name, by group and kind
// (rollout/templateref.go infoByGroupKind), with the field path of their pod
// template.
var workloadKinds = map[schema.GroupKind]string{
	{Group: "", Kind: kinds.PodTemplate}:    "template",
	{Group: "apps", Kind: kinds.Deployment}: "spec.template",
	{Group: "apps", Kind: kinds.ReplicaSet}: "spec.template",
}

// workloadRef is a Rollout's workloadRef, resolved in the bundle.
type workloadRef struct {
	ref *v1alpha1.ObjectRef
	gk  schema.GroupKind
	// supported is false for a group/kind the controller does not resolve.
	supported bool
	// target is the referenced object in the Rollout's namespace, or nil.
	target *graph.Resource
	// templatePath is the field path of the target's pod template.
	templatePath string
}

// resolveWorkloadRef finds a Rollout's workloadRef target as the controller
// does: by apiVersion's group and kind, by name in the Rollout's namespace.
func resolveWorkloadRef(g *graph.Graph, r *graph.Resource, ro *v1alpha1.Rollout) *workloadRef {
	ref := ro.Spec.WorkloadRef
	if ref == nil {
		return nil
	}
	gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
	path, ok := workloadKinds[gk]
	w := &workloadRef{ref: ref, gk: gk, supported: ok, templatePath: path}
	if !ok {
		return w
	}
	for _, o := range g.All(ref.Kind, r.Namespace, ref.Name) {
		if o.Group == gk.Group {
			w.target = o
			break
		}
	}
	return w
}

// templateMap returns the referenced object's pod template as generic data.
func (w *workloadRef) templateMap() map[string]any {
	if w.target == nil {
		return nil
	}
	cur := any(w.target.Object())
	for _, k := range splitDots(w.templatePath) {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	out, _ := cur.(map[string]any)
	return out
}

func splitDots(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}
