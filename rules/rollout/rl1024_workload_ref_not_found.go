package rollout

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// WorkloadRefNotFound reports workloadRefs to kinds the controller does not
// resolve, and to objects the bundle does not hold.
var WorkloadRefNotFound = &rules.Rule{
	ID: "RL1024", Name: "workload-ref-not-found", Severity: rules.Error, Source: rules.SourceGo,
	Kinds:   []string{kinds.Rollout, kinds.Deployment, kinds.ReplicaSet, kinds.PodTemplate},
	Tags:    []string{"rollout"},
	Summary: "spec.workloadRef names a kind Argo Rollouts cannot take a template from, or an object the bundle does not hold.",
	Doc: rules.Doc{
		Why: `A Rollout with \'workloadRef\' takes its pod template (and, without its own \'selector\', its
selector) from the referenced object in its own namespace (rollout/templateref.go Resolve). Only
\'apps/v1\' Deployments and ReplicaSets and core \'v1\' PodTemplates are resolved; anything else —
a StatefulSet, or \'kind: Deployment\' with \'apiVersion: v1\' (core has no Deployment) — fails with
"workload of type <group>/<kind> is not supported" and the Rollout is \'InvalidSpec\'. A name that
matches no object of that kind fails the same way ("not found") until it exists.

Severity: **error** for an unsupported kind; for an object the bundle does not hold, **warning**
when the bundle holds workloads of the Rollout's namespace (the reference most likely should
resolve inside it) and **info** when it holds none (the Deployment is deployed from elsewhere).`,
		Bad: `
spec:
  workloadRef:
    apiVersion: v1            # Deployments are apps/v1
    kind: Deployment
    name: checkout
`,
		Good: `
  workloadRef:
    apiVersion: apps/v1
    kind: Deployment
    name: checkout
`,
	},
	Since: "v0.1.0",
	// A Rollout's findings depend on it and on lookups (its workload, the
	// workloads' index) only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			w := resolveWorkloadRef(p.Graph, r, ro)
			if w == nil {
				return
			}
			if !w.supported {
				p.ReportDetail(r, "spec.workloadRef.kind", fmt.Sprintf("workloadRef of Rollout %s names %s %q (group %q), which Argo Rollouts cannot resolve",
					ro.Name, w.ref.Kind, w.ref.APIVersion, w.gk.Group),
					fmt.Sprintf("It takes templates only from apps/v1 Deployments and ReplicaSets and v1 PodTemplates, fails with \"workload of type %s/%s is not supported\" and marks the Rollout InvalidSpec.",
						w.gk.Group, w.gk.Kind))
				return
			}
			if w.target != nil {
				return
			}
			workloads := workloadsByName(p.Graph)
			sev := rules.Info
			if workloads.namespaces[r.Namespace] {
				sev = rules.Warning
			}
			msg := fmt.Sprintf("workloadRef of Rollout %s names %s %s/%s, which is not in the bundle", ro.Name, w.ref.Kind, r.Namespace, w.ref.Name)
			detail := "Until it exists the controller cannot resolve the template and the Rollout is InvalidSpec."
			var rel []rules.Related
			for _, o := range workloads.byName[w.ref.Kind+"/"+w.ref.Name] {
				if o.Namespace != r.Namespace && len(rel) < 3 {
					rel = append(rel, rules.RelatedAt(o, "metadata.name", fmt.Sprintf("%s %s/%s (another namespace: workloadRef looks in the Rollout's)", o.Kind, o.Namespace, o.Name)))
				}
			}
			p.ReportDiag(rules.Diagnostic{Resource: r, Path: "spec.workloadRef.name", Severity: sev, Message: msg, Detail: detail, Related: rel})
		})
		return nil
	},
}

// workloadRefTargets indexes the objects a workloadRef may name, for the
// Rollouts whose reference the bundle does not hold: built once a lint, on
// the first such Rollout, whichever shard it is in.
type workloadRefTargets struct {
	namespaces map[string]bool              // namespaces holding any of them
	byName     map[string][]*graph.Resource // kind/name → objects, every namespace
}

var workloadRefTargetsMemo = graph.NewMemo[*workloadRefTargets]("rollout.workloadRefTargets")

func workloadsByName(g *graph.Graph) *workloadRefTargets {
	return workloadRefTargetsMemo.Get(g, func() *workloadRefTargets {
		x := &workloadRefTargets{namespaces: map[string]bool{}, byName: map[string][]*graph.Resource{}}
		for _, k := range []string{kinds.Deployment, kinds.ReplicaSet, kinds.PodTemplate} {
			for _, o := range g.OfKind(k) {
				x.namespaces[o.Namespace] = true
				x.byName[k+"/"+o.Name] = append(x.byName[k+"/"+o.Name], o)
			}
		}
		return x
	})
}
