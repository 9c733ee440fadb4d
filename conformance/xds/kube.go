package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// Symbolic plan hashes and the label values the harness gives them.
var hashValues = map[string]string{
	"<stable-hash>": "6c8f9d7b45",
	"<canary-hash>": "7b9d5c4f86",
}

const hashLabel = "rollouts-pod-template-hash"

// pod is one workload pod the harness plays.
type pod struct {
	obj         *corev1.Pod
	hash        string // label value
	ready       bool
	terminating bool
	ports       map[string]int32 // container port name → number
	rollout     string
	seq         int
}

// kubeSide plays the Kubernetes controllers a plan's writes set off: the
// ReplicaSet controller (pods created not ready, turning ready; pods
// terminating, then deleted) and the EndpointSlice controller (each
// Service's slice follows its selector and its pods' conditions).
type kubeSide struct {
	cs       kubernetes.Interface
	view     *istiodView
	services map[string]*corev1.Service // ns/name
	pods     map[string]*pod            // ns/name
	slices   map[string]*discoveryv1.EndpointSlice
	nextIP   int
	podSeq   int
}

func newKubeSide() *kubeSide {
	return &kubeSide{
		services: map[string]*corev1.Service{}, pods: map[string]*pod{},
		slices: map[string]*discoveryv1.EndpointSlice{}, nextIP: 10,
	}
}

func key(ns, name string) string { return ns + "/" + name }

// newPod makes a pod of a revision (not yet created in the API).
func (k *kubeSide) newPod(r *rolloutSpec, hashValue string, ready bool) *pod {
	k.podSeq++
	k.nextIP++
	lbls := map[string]string{}
	for a, b := range r.Spec.Template.Metadata.Labels {
		lbls[a] = b
	}
	lbls[hashLabel] = hashValue
	sa := r.Spec.Template.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	ns := r.Metadata.Namespace
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", r.Metadata.Name, hashValue, k.podSeq), Namespace: ns, Labels: lbls},
		Spec:       corev1.PodSpec{ServiceAccountName: sa, NodeName: "node-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.1.%d.%d", k.nextIP/250, k.nextIP%250+1)},
	}
	p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
	setReady(p, ready)
	ports := map[string]int32{}
	for _, c := range r.Spec.Template.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name != "" {
				ports[cp.Name] = cp.ContainerPort
			}
		}
	}
	return &pod{obj: p, hash: hashValue, ready: ready, ports: ports, rollout: r.Metadata.Name, seq: k.podSeq}
}

func setReady(p *corev1.Pod, ready bool) {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
}

// revisionPods returns the live pods of a rollout revision, oldest first.
func (k *kubeSide) revisionPods(ns, rollout, hashValue string) []*pod {
	var out []*pod
	for _, p := range k.pods {
		if p.obj.Namespace == ns && p.hash == hashValue && !p.terminating && p.rollout == rollout {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// slice computes a Service's EndpointSlice from its selector and pods.
func (k *kubeSide) slice(svc *corev1.Service) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name + "-slice", Namespace: svc.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{},
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	var names []string
	for n, p := range k.pods {
		if p.obj.Namespace == svc.Namespace && len(svc.Spec.Selector) > 0 && sel.Matches(labels.Set(p.obj.Labels)) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var portNums map[string]int32
	for _, n := range names {
		p := k.pods[n]
		ready, serving, term := p.ready && !p.terminating, p.ready || p.terminating, p.terminating
		if p.terminating {
			ready = false
		}
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.obj.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &term},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.obj.Namespace, Name: p.obj.Name},
			NodeName:   ptr("node-1"),
		})
		if portNums == nil {
			portNums = p.ports
		}
	}
	for _, sp := range svc.Spec.Ports {
		num := sp.TargetPort.IntVal
		if sp.TargetPort.Type == intstr.String {
			num = portNums[sp.TargetPort.StrVal]
			if num == 0 {
				continue // no pod names the port: the controller lists no such port
			}
		}
		if num == 0 {
			num = sp.Port
		}
		name, proto := sp.Name, sp.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: &name, Port: &num, Protocol: &proto})
	}
	return es
}

func ptr[T any](v T) *T { return &v }

// syncSlices rewrites every EndpointSlice whose content changed, except the
// Services in skip (their slice lands later), each once istiod has taken in
// the one before (its EDSUpdate for the Service's host).
func (k *kubeSide) syncSlices(ctx context.Context, skip map[string]bool) error {
	var names []string
	for n := range k.services {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		svc := k.services[n]
		if skip[n] || len(svc.Spec.Selector) == 0 {
			continue
		}
		want := k.slice(svc)
		cur := k.slices[n]
		api := k.cs.DiscoveryV1().EndpointSlices(svc.Namespace)
		host := hostOf(svc)
		seen := k.view.count("eds", host)
		switch {
		case cur == nil:
			if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create slice %s: %w", n, err)
			}
		case reflect.DeepEqual(cur.Endpoints, want.Endpoints) && reflect.DeepEqual(cur.Ports, want.Ports):
			continue
		default:
			if _, err := api.Update(ctx, want, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update slice %s: %w", n, err)
			}
		}
		k.slices[n] = want
		if exportedNowhere(svc) {
			continue // istiod's slice handler pushes nothing for it (serviceNeedsPush)
		}
		if err := k.view.waitEvent("eds", host, seen); err != nil {
			return err
		}
	}
	return nil
}

// hostOf is a Service's host name in istiod.
func hostOf(svc *corev1.Service) string {
	return svc.Name + "." + svc.Namespace + ".svc.cluster.local"
}

// exportedNowhere reports a Service exported to no namespace ("~").
func exportedNowhere(svc *corev1.Service) bool {
	for _, ns := range strings.Split(svc.Annotations["networking.istio.io/exportTo"], ",") {
		if strings.TrimSpace(ns) == "~" {
			return true
		}
	}
	return false
}

// createPod creates a pod (not ready) and waits until it is in istiod's pod
// informer: the EndpointSlice naming it is written after that, as the
// EndpointSlice controller writes it after its own informer has the pod.
func (k *kubeSide) createPod(ctx context.Context, p *pod) error {
	k.pods[key(p.obj.Namespace, p.obj.Name)] = p
	if _, err := k.cs.CoreV1().Pods(p.obj.Namespace).Create(ctx, p.obj.DeepCopy(), metav1.CreateOptions{}); err != nil {
		return err
	}
	return k.view.waitPod(p.obj.Namespace, p.obj.Name, func(x *corev1.Pod) bool { return x != nil }, false, 0)
}

// markReady turns a pod ready and waits until istiod's pod cache has added it.
func (k *kubeSide) markReady(ctx context.Context, p *pod) error {
	seen := k.view.count("workload", key(p.obj.Namespace, p.obj.Name))
	p.ready = true
	setReady(p.obj, true)
	if _, err := k.cs.CoreV1().Pods(p.obj.Namespace).UpdateStatus(ctx, p.obj.DeepCopy(), metav1.UpdateOptions{}); err != nil {
		return err
	}
	return k.view.waitPod(p.obj.Namespace, p.obj.Name, func(x *corev1.Pod) bool { return x != nil && podReady(x) }, true, seen)
}

// markTerminating marks a pod deleted (terminating, not ready) and waits
// until istiod's pod cache has dropped it (when it held it: it was ready).
func (k *kubeSide) markTerminating(ctx context.Context, p *pod) error {
	seen := k.view.count("workload", key(p.obj.Namespace, p.obj.Name))
	wasReady := p.ready && !p.terminating
	p.terminating = true
	now := metav1.Now()
	p.obj.DeletionTimestamp = &now
	setReady(p.obj, false)
	if _, err := k.cs.CoreV1().Pods(p.obj.Namespace).Update(ctx, p.obj.DeepCopy(), metav1.UpdateOptions{}); err != nil {
		return err
	}
	return k.view.waitPod(p.obj.Namespace, p.obj.Name, func(x *corev1.Pod) bool { return x != nil && x.DeletionTimestamp != nil }, wasReady, seen)
}

// deletePod deletes a pod and waits until istiod's pod informer lost it.
func (k *kubeSide) deletePod(ctx context.Context, p *pod) error {
	delete(k.pods, key(p.obj.Namespace, p.obj.Name))
	if err := k.cs.CoreV1().Pods(p.obj.Namespace).Delete(ctx, p.obj.Name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return k.view.waitPod(p.obj.Namespace, p.obj.Name, func(x *corev1.Pod) bool { return x == nil }, false, 0)
}

// updateService writes a Service and waits until istiod's registry has it.
func (k *kubeSide) updateService(ctx context.Context, svc *corev1.Service) error {
	seen := k.view.count("service", hostOf(svc))
	k.services[key(svc.Namespace, svc.Name)] = svc
	if _, err := k.cs.CoreV1().Services(svc.Namespace).Update(ctx, svc.DeepCopy(), metav1.UpdateOptions{}); err != nil {
		return err
	}
	return k.view.waitEvent("service", hostOf(svc), seen)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
