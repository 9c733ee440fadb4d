package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The plan names an experiment's objects symbolically: its ReplicaSets and
// Services carry the canary's hash and the update's revision
// (<rollout>-<canary-hash>-<revision>-<step>-<template>), its pods the
// template's own hash (<experiment-hash:template>). The harness gives them
// concrete values and records istiod's keys with the plan's names again.

// revisionValue is the update's revision: the committed Rollout is at 1.
const revisionValue = "2"

// hashValue is the label value of a symbolic hash: the stable and canary
// revisions', or one derived from an experiment template's name.
func hashValue(sym string) string {
	if v, ok := hashValues[sym]; ok {
		return v
	}
	if strings.HasPrefix(sym, "<experiment-hash:") {
		h := fnv.New32a()
		h.Write([]byte(sym))
		return fmt.Sprintf("e%08x", h.Sum32())
	}
	return ""
}

// symbolic maps the concrete names the harness created to the plan's; the
// recorder reads it from istiod's goroutines.
type symbolic struct {
	mu    sync.Mutex
	names map[string]string
}

// concrete turns a plan name into the one the harness creates, and
// remembers it.
func (s *symbolic) concrete(name string) string {
	out := strings.ReplaceAll(name, "<revision>", revisionValue)
	for sym, v := range hashValues {
		out = strings.ReplaceAll(out, sym, v)
	}
	if out != name {
		s.mu.Lock()
		if s.names == nil {
			s.names = map[string]string{}
		}
		s.names[out] = name
		s.mu.Unlock()
	}
	return out
}

// plan rewrites the concrete names in an istiod key back to the plan's.
func (s *symbolic) plan(k string) string {
	if s == nil {
		return k
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.names))
	for n := range s.names {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, n := range names {
		k = strings.ReplaceAll(k, n, s.names[n])
	}
	return k
}

// experimentService is the Service the experiment controller creates for a
// template: the ReplicaSet's labels as selector (the pod template's and the
// template's hash) and the containers' ports, each as its own target
// (argo-rollouts v1.10 experiments/experiment.go createTemplateService).
func (r *run) experimentService(name, ns, hash string) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	svc.Spec.Selector = map[string]string{}
	for k, v := range r.ro.Spec.Template.Metadata.Labels {
		svc.Spec.Selector[k] = v
	}
	svc.Spec.Selector[hashLabel] = hash
	for _, c := range r.ro.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: corev1.ProtocolTCP,
				Port: p.ContainerPort, TargetPort: intstr.FromInt32(p.ContainerPort)})
		}
	}
	r.kube.nextIP++
	svc.Spec.ClusterIP = fmt.Sprintf("10.96.%d.%d", r.kube.nextIP/250, r.kube.nextIP%250+1)
	return svc
}

// createService creates a Service and waits until istiod's registry has it;
// its EndpointSlice follows with the batch's (syncSlices), as the
// EndpointSlice controller writes one for a new Service at once.
func (k *kubeSide) createService(ctx context.Context, svc *corev1.Service) error {
	seen := k.view.count("service", hostOf(svc))
	k.services[key(svc.Namespace, svc.Name)] = svc
	if _, err := k.cs.CoreV1().Services(svc.Namespace).Create(ctx, svc.DeepCopy(), metav1.CreateOptions{}); err != nil {
		return err
	}
	return k.view.waitEvent("service", hostOf(svc), seen)
}

// deleteService deletes a Service and then its EndpointSlice (the garbage
// collector follows its owner reference), each once istiod has taken in the
// one before.
func (k *kubeSide) deleteService(ctx context.Context, ns, name string) error {
	n := key(ns, name)
	svc := k.services[n]
	if svc == nil {
		return fmt.Errorf("no Service %s", n)
	}
	seen := k.view.count("service", hostOf(svc))
	delete(k.services, n)
	if err := k.cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := k.view.waitEvent("service", hostOf(svc), seen); err != nil {
		return err
	}
	if es := k.slices[n]; es != nil {
		delete(k.slices, n)
		if err := k.cs.DiscoveryV1().EndpointSlices(ns).Delete(ctx, es.Name, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	return nil
}
