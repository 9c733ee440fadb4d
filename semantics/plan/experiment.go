package plan

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// An experiment step, as argo-rollouts v1.10 plays it (the sources cited are
// github.com/argoproj/argo-rollouts@v1.10.1):
//
//   - The Rollout creates the Experiment <rollout>-<pod hash>-<revision>-<step>
//     (rollout/experiment.go GetExperimentFromTemplate). A template with a
//     weight or a service gets a Service (template.Service set there).
//   - The experiment controller creates each template's ReplicaSet
//     <experiment>-<template> at 0 replicas (experiments/replicaset.go
//     newReplicaSetFromTemplate, createReplicaSetForTemplate); nothing Istio
//     sees. On its next reconcile it creates the template's Service, named as
//     the ReplicaSet unless service.name is set, selecting the ReplicaSet's
//     labels (the pod template's plus its own rollouts-pod-template-hash),
//     with the containers' ports, and then scales the ReplicaSet up
//     (experiments/experiment.go reconcileTemplate, createTemplateService).
//   - Once every template is available the Experiment is Running, and the
//     Rollout's next traffic reconcile appends a destination for each
//     weighted template, host the Service's name, and takes its weight from
//     the stable (rollout/trafficrouting.go
//     calculateWeightDestinationsFromExperiment, trafficrouting/istio/istio.go
//     processRoutes).
//   - When the Experiment has succeeded the step is complete; the next
//     traffic reconcile no longer sees a Running experiment and deletes the
//     destination. The experiment controller scales each ReplicaSet to 0
//     after the experiment's scaleDownDelaySeconds (30 s by default,
//     addScaleDownDelayToTemplateRS / scaleTemplateRS) and deletes the
//     Service once no pod is available (reconcileTemplate).
//
// An abort terminates the Experiment (rollout/experiment.go
// reconcileExperiments): the destination goes with the abort's weights and
// the ReplicaSets and Services the same way.

// experiment is the live experiment of a step.
type experiment struct {
	step  int
	tmpls []expTemplate
	// running: the templates' pods are available (the reconcile after they
	// were scaled up, as the model takes every ReplicaSet).
	running bool
}

// expTemplate is one template's objects.
type expTemplate struct {
	name     string
	rs       Object
	svc      *Object // nil: no Service (no weight, no service)
	hash     string
	replicas int32
	weight   *int32
}

// weights returns the weighted templates while the experiment runs, sorted
// by template name (experimentWeights).
func (e *experiment) weights(st *v1alpha1.CanaryStep) []v1alpha1.RolloutExperimentTemplate {
	if e == nil || !e.running {
		return nil
	}
	return experimentWeights(st)
}

// ExperimentServiceName is the Service the experiment controller creates for
// a template of the experiment step at index step: the template's
// service.name, else its ReplicaSet's name.
func ExperimentServiceName(rollout string, step int, t *v1alpha1.RolloutExperimentTemplate) string {
	if t.Service != nil && t.Service.Name != "" {
		return t.Service.Name
	}
	return experimentRSName(rollout, step, t.Name)
}

// experimentRSName is <experiment>-<template>, the experiment being
// <rollout>-<canary pod hash>-<revision>-<step>.
func experimentRSName(rollout string, step int, template string) string {
	return fmt.Sprintf("%s-%s-%s-%d-%s", rollout, NewHash, Revision, step, template)
}

// startExperiment records the experiment controller's reconcile that
// creates the step's Services and scales its ReplicaSets up.
func (s *routed) startExperiment(i int, st *v1alpha1.CanaryStep) {
	b := s.b
	ns, name := b.rr.Rollout.Namespace, b.rr.Rollout.Name
	e := &experiment{step: i}
	// createTemplateService creates no Service for a pod template without
	// container ports.
	hasPorts := false
	for _, c := range b.rr.Spec.Spec.Template.Spec.Containers {
		hasPorts = hasPorts || len(c.Ports) > 0
	}
	for _, t := range st.Experiment.Templates {
		n := int32(1)
		if t.Replicas != nil {
			n = *t.Replicas
		}
		et := expTemplate{name: t.Name, rs: Object{Kind: "ReplicaSet", Namespace: ns, Name: experimentRSName(name, i, t.Name)},
			hash: ExperimentHash(t.Name), replicas: n, weight: t.Weight}
		if (t.Weight != nil || t.Service != nil) && hasPorts {
			et.svc = &Object{Kind: "Service", Namespace: ns, Name: ExperimentServiceName(name, i, &t)}
		}
		e.tmpls = append(e.tmpls, et)
	}
	sortExpTemplates(e.tmpls)
	s.exp = e
	b.batch++
	b.changes++
	if b.noWrites {
		return
	}
	for _, t := range e.tmpls {
		if t.svc != nil {
			b.cur.Writes = append(b.cur.Writes, Write{Kind: WriteServiceCreate, Object: *t.svc, Field: "metadata",
				Old: "absent", New: fmt.Sprintf("selector %s=%s", HashLabel, t.hash), Batch: b.batch, Hash: t.hash,
				Hosts: []string{graph.ServiceFQDN(t.svc.Name, t.svc.Namespace)}})
		}
		if t.replicas > 0 {
			b.cur.Writes = append(b.cur.Writes, Write{Kind: WriteScale, Object: t.rs, Field: "spec.replicas",
				Old: "0", New: itoa(t.replicas), Batch: b.batch, Hash: t.hash, Hosts: s.expHosts(t)})
		}
	}
}

// expHosts are the hosts whose endpoints hold a template's pods: its own
// Service, and a DestinationRule's Service, which selects every revision of
// the pod template (the template's pods carry its labels).
func (s *routed) expHosts(t expTemplate) []string {
	var out []string
	if t.svc != nil {
		out = append(out, graph.ServiceFQDN(t.svc.Name, t.svc.Namespace))
	}
	for _, h := range s.b.revisionHosts(t.hash) {
		if len(out) == 0 || h != out[0] {
			out = append(out, h)
		}
	}
	return out
}

// endExperiment records the experiment's teardown after it succeeded or was
// terminated: each ReplicaSet to 0 after the scale-down delay, then, with
// the pods gone, its Service deleted.
func (s *routed) endExperiment() {
	e, b := s.exp, s.b
	if e == nil {
		return
	}
	s.exp = nil
	b.changes++
	if b.noWrites {
		return
	}
	b.batch++
	for _, t := range e.tmpls {
		if t.replicas > 0 {
			b.cur.Writes = append(b.cur.Writes, Write{Kind: WriteScale, Object: t.rs, Field: "spec.replicas",
				Old: itoa(t.replicas), New: "0", Batch: b.batch, Hash: t.hash, Hosts: s.expHosts(t)})
		}
	}
	b.batch++
	for _, t := range e.tmpls {
		if t.svc != nil {
			b.cur.Writes = append(b.cur.Writes, Write{Kind: WriteServiceDelete, Object: *t.svc, Field: "metadata",
				Old: fmt.Sprintf("selector %s=%s", HashLabel, t.hash), New: "deleted", Batch: b.batch, Hash: t.hash,
				Hosts: []string{graph.ServiceFQDN(t.svc.Name, t.svc.Namespace)}})
		}
	}
}

func sortExpTemplates(ts []expTemplate) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].name < ts[j-1].name; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}
