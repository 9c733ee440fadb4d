package argoconformance

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Player plays what a cluster adds to a ReplicaSet without a kubelet: it
// keeps as many pods as spec.replicas asks (created from the pod template,
// owned by the ReplicaSet), marks each pod ready ReadyAfter after its
// creation, deletes pods on scale-down, and writes the ReplicaSet status
// (replicas, ready, available after minReadySeconds, observedGeneration) the
// way the ReplicaSet controller does, so that Argo's availability checks see
// what they would see in a cluster.
type Player struct {
	Kube       kubernetes.Interface
	ReadyAfter time.Duration

	queue workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	errs  []error
}

// Run plays until ctx ends.
func (p *Player) Run(ctx context.Context) {
	p.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	f := informers.NewSharedInformerFactory(p.Kube, 0)
	inf := f.Apps().V1().ReplicaSets().Informer()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			p.queue.Add(key)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }, DeleteFunc: enqueue,
	})
	f.Start(ctx.Done())
	go func() { <-ctx.Done(); p.queue.ShutDown() }()
	for {
		key, quit := p.queue.Get()
		if quit {
			return
		}
		if err := p.sync(ctx, key); err != nil {
			if ctx.Err() == nil && !apierrors.IsConflict(err) {
				p.note(fmt.Errorf("replicaset %s: %w", key, err))
			}
			p.queue.AddRateLimited(key)
		} else {
			p.queue.Forget(key)
		}
		p.queue.Done(key)
	}
}

func (p *Player) note(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) < 20 {
		p.errs = append(p.errs, err)
	}
}

// Errors returns the errors the player met (a few; retried).
func (p *Player) Errors() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.errs...)
}

func podReady(pod *corev1.Pod) (bool, time.Time) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}

func (p *Player) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pods := p.Kube.CoreV1().Pods(ns)
	rs, err := p.Kube.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Deleted: no garbage collector runs, so remove its pods here.
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for i := range list.Items {
			if owner := metav1.GetControllerOf(&list.Items[i]); owner != nil && owner.Kind == "ReplicaSet" && owner.Name == name {
				if err := pods.Delete(ctx, list.Items[i].Name, *metav1.NewDeleteOptions(0)); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return err
	}
	// A live list, not a cache: counts never lag behind our own writes.
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return err
	}
	var own []*corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		if owner := metav1.GetControllerOf(pod); owner != nil && owner.UID == rs.UID && pod.DeletionTimestamp == nil {
			own = append(own, pod)
		}
	}
	want := int(ptrOr(rs.Spec.Replicas, 1))
	for len(own) < want {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				GenerateName: rs.Name + "-", Namespace: ns,
				Labels: rs.Spec.Template.Labels, Annotations: rs.Spec.Template.Annotations,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))},
			},
			Spec: rs.Spec.Template.Spec,
		}
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		own = append(own, created)
	}
	if len(own) > want {
		// Like the ReplicaSet controller: unready pods go first, then the newest.
		sort.SliceStable(own, func(i, j int) bool {
			ri, _ := podReady(own[i])
			rj, _ := podReady(own[j])
			if ri != rj {
				return !ri
			}
			return own[i].CreationTimestamp.After(own[j].CreationTimestamp.Time)
		})
		for _, pod := range own[:len(own)-want] {
			if err := pods.Delete(ctx, pod.Name, *metav1.NewDeleteOptions(0)); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		own = own[len(own)-want:]
	}
	now := time.Now()
	var ready, available int32
	var wait time.Duration
	minReady := time.Duration(rs.Spec.MinReadySeconds) * time.Second
	for _, pod := range own {
		ok, since := podReady(pod)
		if !ok {
			if age := now.Sub(pod.CreationTimestamp.Time); age < p.ReadyAfter {
				wait = minPositive(wait, p.ReadyAfter-age)
				continue
			}
			if err := p.markReady(ctx, pod); err != nil {
				return err
			}
			since = now
		}
		ready++
		if now.Sub(since) >= minReady {
			available++
		} else {
			wait = minPositive(wait, minReady-now.Sub(since))
		}
	}
	st := appsv1.ReplicaSetStatus{
		Replicas: int32(len(own)), FullyLabeledReplicas: int32(len(own)),
		ReadyReplicas: ready, AvailableReplicas: available, ObservedGeneration: rs.Generation,
		Conditions: rs.Status.Conditions,
	}
	if rs.Status.Replicas != st.Replicas || rs.Status.FullyLabeledReplicas != st.FullyLabeledReplicas ||
		rs.Status.ReadyReplicas != st.ReadyReplicas || rs.Status.AvailableReplicas != st.AvailableReplicas ||
		rs.Status.ObservedGeneration != st.ObservedGeneration {
		rs.Status = st
		if _, err := p.Kube.AppsV1().ReplicaSets(ns).UpdateStatus(ctx, rs, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if wait > 0 {
		p.queue.AddAfter(key, wait)
	}
	return nil
}

func (p *Player) markReady(ctx context.Context, pod *corev1.Pod) error {
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: ptrTo(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	_, err := p.Kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || b < a {
		return b
	}
	return a
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func ptrTo[T any](v T) *T { return &v }
