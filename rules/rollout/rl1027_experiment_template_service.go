package rollout

import (
	"fmt"
	"strconv"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// maxServiceName is the longest Service name Kubernetes accepts (a DNS-1035
// label).
const maxServiceName = 63

// hashLen is the length of a pod template hash in the common case: the
// decimal digits of a 32-bit FNV hash, re-encoded one character each
// (utils/hash ComputePodTemplateHash), ten for most templates.
const hashLen = 10

// ExperimentTemplateService reports experiment templates whose Service the
// controller cannot create, or cannot be reached through the routes.
var ExperimentTemplateService = &rules.Rule{
	ID: "RL1027", Name: "experiment-template-service", Severity: rules.Error, Source: rules.SourceGo,
	Kinds:   []string{kinds.Rollout, kinds.Experiment, kinds.VirtualService, kinds.Deployment, kinds.ReplicaSet, kinds.PodTemplate},
	Tags:    []string{"rollout", "experiment", "traffic"},
	Summary: "An experiment template with weight or service gets no Service (no container port, a name over 63 characters), or a weight the VirtualService cannot route (it lives in another namespace).",
	Doc: rules.Doc{
		Why: `For a template with \'weight\' (or \'service\') the Experiment creates a Service per template
(experiments/experiment.go createTemplateService): named after the template's ReplicaSet —
\'<experiment>-<template>\', and for a Rollout's step the Experiment is
\'<rollout>-<pod-template-hash>-<revision>-<step>\' — unless \'service.name\' sets one, with a port
for each container port of the template. With weight, the Istio reconciler then adds a
destination with that Service's **short name** to the managed routes and gives it the weight
(rollout/trafficrouting/istio processRoutes). This goes wrong three ways:

- the pod template declares no \'containerPort\': no Service is created (there is no port to give
  it), and the weighted destination names a host that does not exist: that share of requests
  fails with \'503\' \'NC\';
- the name is longer than 63 characters (a pod template hash is ten characters in most cases):
  the API server rejects the Service and the template's status is \'Error\';
- the managed VirtualService is in another namespace than the Rollout: Istio resolves the short
  host in the VirtualService's namespace, where no such Service is: \'503\' \'NC\' for the weight.

Severity: **error**, except a template without container ports that has \'service\' but no
\'weight\' (an Experiment object's templates never have one): nothing routes to the Service
that is not created, the Experiment runs (it is what Argo Rollouts' own e2e fixtures do), and
the \'service\' field is dead configuration, a **warning**.

Fix: declare the container port, set a short \'service.name\', keep the VirtualService in the
Rollout's namespace for weighted experiments.`,
		Bad: `
- experiment:
    templates:
    - name: canary-experiment-with-a-long-name
      specRef: canary
      weight: 10            # the pods declare no containerPort
`,
		Good: `
- experiment:
    templates:
    - name: exp-canary
      specRef: canary
      weight: 10
      service: {name: checkout-exp}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, r := range p.OfKind(kinds.Experiment) {
			ex := r.Experiment()
			if ex == nil {
				continue
			}
			for i, t := range ex.Spec.Templates {
				if t.Service == nil {
					continue
				}
				base := graph.Index("spec.templates", i)
				if !hasPorts(t.Template.Spec.Containers) {
					// Experiment objects carry no weights: nothing routes to
					// the missing Service and the Experiment still runs.
					p.ReportDiag(rules.Diagnostic{Resource: r, Path: base + ".service", Severity: rules.Warning,
						Message: fmt.Sprintf("template %q of Experiment %s asks for a Service but its containers declare no ports", t.Name, ex.Name),
						Detail:  "The controller creates none and the Experiment runs without it (dead configuration); declare a containerPort or drop service."})
					continue
				}
				name, path := ex.Name+"-"+t.Name, base+".name"
				if t.Service.Name != "" {
					name, path = t.Service.Name, base+".service.name"
				}
				if len(name) > maxServiceName {
					p.ReportDetail(r, path, fmt.Sprintf("the Service of template %q of Experiment %s would be named %q (%d characters, over %d)", t.Name, ex.Name, name, len(name), maxServiceName), "The API server rejects it and the template's status is Error.")
				}
			}
		}
		eachRollout(p, func(r *graph.Resource, ro *v1alpha1.Rollout) {
			refs := p.Graph.Refs().ForRollout(r)
			eachStepTemplate(p.Graph, r, ro, func(st stepTemplate) {
				t := st.tmpl
				if t.Weight == nil && t.Service == nil {
					return
				}
				what := fmt.Sprintf("template %q in step %d of Rollout %s", t.Name, st.step, ro.Name)
				if containers, known := podContainers(p.Graph, r, ro); known && !hasPorts(containers) {
					msg := what + " gets no Service: the pod template declares no container port"
					detail := "The Experiment creates none"
					sev := rules.Error
					if t.Weight != nil {
						detail += fmt.Sprintf("; its weight %d goes to a host that does not exist and those requests get 503 NC.", *t.Weight)
					} else {
						// Without weight nothing routes to it: the step runs.
						sev = rules.Warning
						detail += " and the step runs without it (dead configuration)."
					}
					p.ReportDiag(rules.Diagnostic{Resource: r, Path: st.path, Severity: sev, Message: msg, Detail: detail})
					return
				}
				if t.Service != nil && t.Service.Name != "" {
					if len(t.Service.Name) > maxServiceName {
						p.ReportDetail(r, st.path+".service.name", fmt.Sprintf("service.name %q of %s is %d characters, over %d", t.Service.Name, what, len(t.Service.Name), maxServiceName), "The API server rejects the Service.")
					}
				} else {
					// <rollout>-<hash>-<revision>-<step>-<template>, revision 1 at least.
					n := len(ro.Name) + 1 + hashLen + 1 + 1 + 1 + len(strconv.Itoa(st.step)) + 1 + len(t.Name)
					if n > maxServiceName {
						p.ReportDetail(r, st.path+".name", fmt.Sprintf("the Service of %s has a name of %d characters or more, over %d", what, n, maxServiceName),
							fmt.Sprintf("It is named <rollout>-<pod-template-hash>-<revision>-%d-%s, with a ten-character hash: the API server rejects it and the template's status is Error; set a short service.name.", st.step, t.Name))
					}
				}
				if t.Weight == nil || refs == nil {
					return
				}
				for _, vs := range refs.VirtualServices {
					if vs.Target != nil && vs.Target.Namespace != r.Namespace {
						p.ReportDetail(r, st.path+".weight", fmt.Sprintf("%s sends weight %d through VirtualService %s/%s of another namespace", what, *t.Weight, vs.Target.Namespace, vs.Target.Name),
							"The weight goes to its Service by short name: Istio resolves the host in the VirtualService's namespace, where the Service is not, and those requests get 503 NC.", rules.RelatedAt(r, vs.Path, "the VirtualService of another namespace"))
					}
				}
			})
		})
		return nil
	},
}

func hasPorts(cs []corev1.Container) bool {
	for _, c := range cs {
		if len(c.Ports) > 0 {
			return true
		}
	}
	return false
}

// podContainers returns the containers of the pods a Rollout runs: its
// template's, or the workloadRef's when the bundle holds it.
func podContainers(g *graph.Graph, r *graph.Resource, ro *v1alpha1.Rollout) ([]corev1.Container, bool) {
	w := resolveWorkloadRef(g, r, ro)
	if w == nil {
		return ro.Spec.Template.Spec.Containers, true
	}
	tm := w.templateMap()
	if tm == nil {
		return nil, false
	}
	spec, _ := tm["spec"].(map[string]any)
	raw, _ := spec["containers"].([]any)
	var out []corev1.Container
	for _, c := range raw {
		cm, _ := c.(map[string]any)
		var ct corev1.Container
		if ps, _ := cm["ports"].([]any); len(ps) > 0 {
			ct.Ports = make([]corev1.ContainerPort, len(ps))
		}
		out = append(out, ct)
	}
	return out, true
}
