package argoconformance

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	argoclient "github.com/argoproj/argo-rollouts/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-rollouts/pkg/kubectl-argo-rollouts/cmd/abort"
	"github.com/argoproj/argo-rollouts/pkg/kubectl-argo-rollouts/cmd/promote"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/retry"
)

// Env is what every scenario run shares: the cluster, its clients and the
// event recorder.
type Env struct {
	Kube   kubernetes.Interface
	Dyn    dynamic.Interface
	Argo   argoclient.Interface
	Mapper meta.RESTMapper
	Rec    *Recorder
	// Logf reports progress.
	Logf func(format string, args ...any)
	// MaxPauseWait is the longest timed pause a run waits out; longer ones
	// are promoted through the API, as `kubectl argo rollouts promote` does.
	MaxPauseWait time.Duration
	// Quiet is how long the namespaces must see no event for the cluster to
	// count as settled.
	Quiet time.Duration
	// RunTimeout bounds one run.
	RunTimeout time.Duration
	// Rolloutlint and Kubeconfig, when set, run `rolloutlint plan
	// --cluster` at each pause a run promotes or aborts at (LivePlan).
	Rolloutlint, Kubeconfig string
}

// NewEnv builds the clients for a cluster whose CRDs are installed.
func NewEnv(c *Cluster) (*Env, error) {
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	argo, err := argoclient.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	return &Env{
		Kube: kube, Dyn: dyn, Argo: argo,
		Mapper:       restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		Rec:          &Recorder{},
		Logf:         func(string, ...any) {},
		MaxPauseWait: 10 * time.Second, Quiet: 1500 * time.Millisecond, RunTimeout: 5 * time.Minute,
	}, nil
}

// Run is one walk of a bundle's Rollout through the controller.
type Run struct {
	// ID makes the run's namespaces unique: "r<ID>-<namespace>".
	ID     int
	Bundle string
	// Abort aborts the rollout where the plan's abort path starts.
	Abort bool
	// Plan is the Rollout's plan (for the abort point).
	Plan *PlanRollout
}

// Observation is what a run saw: the forward states and, for an abort run,
// the abort path.
type Observation struct {
	States []View
	Abort  []View
	// FromLive are the plans from the live state at the pauses the run
	// promoted or aborted at (Env.Rolloutlint).
	FromLive []LivePlan
	// Elapsed is the run's wall time.
	Elapsed time.Duration
}

const revisionAnnotation = "conformance.rolloutlint.io/revision"

// Execute applies the bundle in fresh namespaces, brings the Rollout up at
// a stable revision (the bundle's pod template plus an annotation), changes
// the template to the bundle's to start the rollout, walks every step
// (promoting long and indefinite pauses, aborting where the plan's abort
// path starts) and reads the states off the event log.
func (e *Env) Execute(ctx context.Context, r Run) (*Observation, error) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, e.RunTimeout)
	defer cancel()
	docs, err := readYAMLDocs(r.Bundle)
	if err != nil {
		return nil, err
	}
	nsBack := map[string]string{}
	live := func(ns string) string {
		if ns == "" {
			ns = "default"
		}
		l := fmt.Sprintf("r%d-%s", r.ID, ns)
		nsBack[l] = ns
		return l
	}
	var rollout *unstructured.Unstructured
	var others []*unstructured.Unstructured
	for _, d := range docs {
		d.SetNamespace(live(d.GetNamespace()))
		if d.GetKind() == "Rollout" {
			if rollout != nil {
				return nil, fmt.Errorf("%s: more than one Rollout; a scenario bundle holds one", r.Bundle)
			}
			rollout = d
			continue
		}
		others = append(others, d)
	}
	if rollout == nil {
		return nil, fmt.Errorf("%s: no Rollout", r.Bundle)
	}
	var ro v1alpha1.Rollout
	if err := fromUnstructured(rollout, &ro); err != nil {
		return nil, fmt.Errorf("%s: decode Rollout: %w", r.Bundle, err)
	}
	if c := ro.Spec.Strategy.Canary; c != nil && c.TrafficRouting != nil && c.TrafficRouting.Istio != nil {
		vss := c.TrafficRouting.Istio.VirtualServices
		if vs := c.TrafficRouting.Istio.VirtualService; vs != nil {
			vss = append(vss, *vs)
		}
		for _, vs := range vss {
			if len(vs.TLSRoutes) > 0 || len(vs.TCPRoutes) > 0 {
				return nil, fmt.Errorf("%s: the harness observes http routes only; VirtualService %s names tls/tcp routes", r.Bundle, vs.Name)
			}
		}
	}
	namespaces := map[string]bool{}
	for l := range nsBack {
		namespaces[l] = true
		if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: l}}, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create namespace %s: %w", l, err)
		}
		// What kube-controller-manager's service account controller adds:
		// the API server admits no pod without it.
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: l}}
		if _, err := e.Kube.CoreV1().ServiceAccounts(l).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create service account in %s: %w", l, err)
		}
	}
	for _, d := range others {
		if err := e.create(ctx, d); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Bundle, err)
		}
	}
	// The stable revision: the bundle's template with one more annotation.
	stable := rollout.DeepCopy()
	if err := unstructured.SetNestedField(stable.Object, "stable", "spec", "template", "metadata", "annotations", revisionAnnotation); err != nil {
		return nil, err
	}
	if err := e.create(ctx, stable); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Bundle, err)
	}
	rolloutIf := e.Argo.ArgoprojV1alpha1().Rollouts(stable.GetNamespace())
	name := stable.GetName()
	cur, err := e.drive(ctx, namespaces, rolloutIf, name, func(*v1alpha1.Rollout) error { return nil }, func(ro *v1alpha1.Rollout) bool {
		return ro.Status.StableRS != "" && ro.Status.StableRS == ro.Status.CurrentPodHash && e.available(ctx, ro)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: initial rollout: %w", r.Bundle, err)
	}
	stableHash := cur.Status.StableRS
	e.Logf("%s: stable revision %s up", r.Bundle, stableHash)

	// Start the rollout: back to the bundle's template.
	var updateRV int64
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := rolloutIf.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		delete(got.Spec.Template.Annotations, revisionAnnotation)
		upd, err := rolloutIf.Update(ctx, got, metav1.UpdateOptions{})
		if err == nil {
			updateRV = atoi(upd.ResourceVersion)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: update template: %w", r.Bundle, err)
	}

	abortStep := -1
	if r.Abort {
		if abortStep, err = abortPoint(&ro, r.Plan); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Bundle, err)
		}
	}
	var abortRV int64
	promoted := map[int]bool{}
	var fromLive []LivePlan
	planLive := func(x *v1alpha1.Rollout, step int, abort bool) error {
		if e.Rolloutlint == "" || x.Spec.Strategy.Canary == nil {
			return nil
		}
		p, err := e.planFromLive(ctx, x.Namespace, x.Name, stableHash, x.Status.CurrentPodHash, nsBack)
		if err != nil {
			return fmt.Errorf("at step %d: %w", step, err)
		}
		fromLive = append(fromLive, LivePlan{Step: step, Abort: abort, Plan: p})
		return nil
	}
	done := func(x *v1alpha1.Rollout) bool {
		if x.Status.CurrentPodHash == stableHash {
			return false
		}
		if r.Abort {
			if !x.Status.Abort {
				return false
			}
			// Done when the canary is gone, or when nothing has happened for
			// well past the abort's scale-down delay: the abort stalled
			// (argo-rollouts#4898), and that is what there is to observe.
			return e.replicas(ctx, x, x.Status.CurrentPodHash) == 0 ||
				time.Since(e.Rec.LastIn(namespaces)) > abortDelay(x)+8*time.Second
		}
		return x.Status.StableRS == x.Status.CurrentPodHash && e.available(ctx, x)
	}
	act := func(x *v1alpha1.Rollout) error {
		if x.Status.Abort || len(x.Status.PauseConditions) == 0 || x.Status.CurrentPodHash == stableHash {
			return nil
		}
		if time.Since(e.Rec.LastIn(namespaces)) < e.Quiet {
			// Act on a paused rollout only once the cluster has settled
			// there (ReplicaSet statuses caught up), as a person would.
			return nil
		}
		reason := x.Status.PauseConditions[0].Reason
		step := -1
		if x.Status.CurrentStepIndex != nil {
			step = int(*x.Status.CurrentStepIndex)
		}
		switch {
		case r.Abort && (reason == v1alpha1.PauseReasonBlueGreenPause || step == abortStep):
			if err := planLive(x, step, true); err != nil {
				return err
			}
			out, err := abort.AbortRollout(rolloutIf, name)
			if err != nil {
				return fmt.Errorf("abort: %w", err)
			}
			abortRV = atoi(out.ResourceVersion)
			e.Logf("%s: aborted at step %d", r.Bundle, step)
		case reason == v1alpha1.PauseReasonBlueGreenPause && !promoted[-1]:
			promoted[-1] = true
			if _, err := promote.PromoteRollout(rolloutIf, name, false, false, false); err != nil {
				return fmt.Errorf("promote: %w", err)
			}
			e.Logf("%s: promoted blue-green", r.Bundle)
		case reason == v1alpha1.PauseReasonCanaryPauseStep && step >= 0 && !promoted[step]:
			p := x.Spec.Strategy.Canary.Steps[step].Pause
			if p != nil && p.Duration != nil && time.Duration(p.DurationSeconds())*time.Second <= e.MaxPauseWait {
				return nil // a short timed pause: let it run out
			}
			promoted[step] = true
			if !r.Abort { // an abort run observes the forward path up to its abort only
				if err := planLive(x, step, false); err != nil {
					return err
				}
			}
			if _, err := promote.PromoteRollout(rolloutIf, name, false, false, false); err != nil {
				return fmt.Errorf("promote step %d: %w", step, err)
			}
			e.Logf("%s: promoted pause at step %d", r.Bundle, step)
		}
		return nil
	}
	final, err := e.drive(ctx, namespaces, rolloutIf, name, act, done)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Bundle, err)
	}
	if r.Abort && abortRV == 0 {
		return nil, fmt.Errorf("%s: the rollout finished without pausing at step %d to abort", r.Bundle, abortStep)
	}
	end, err := e.syncLog(ctx, namespaces)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Bundle, err)
	}
	obs := &observer{ro: &ro, nsBack: nsBack, stableHash: stableHash, newHash: final.Status.CurrentPodHash, events: e.Rec.Events(namespaces)}
	var fwd, ab []mark
	if ro.Spec.Strategy.BlueGreen != nil {
		fwd, ab, err = obs.blueGreenMarks(updateRV, abortRV, end)
	} else {
		fwd, ab, err = obs.canaryMarks(updateRV, abortRV, end, len(ro.Spec.Strategy.Canary.Steps), abortStep)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Bundle, err)
	}
	out := &Observation{States: obs.views(fwd, updateRV), FromLive: fromLive}
	if len(ab) > 0 {
		out.Abort = obs.views(ab, fwd[len(fwd)-1].rv)
	}
	out.Elapsed = time.Since(began)
	return out, nil
}

// ErrNoRest says an abort run cannot abort where the plan's abort path
// starts, because the rollout never stops there.
var ErrNoRest = errors.New("no state to abort at")

// abortPoint returns the canary step at which the run aborts: the plan's
// abort path starts from states[abortFrom]; the rollout must rest there,
// paused at that step or at a pause right after it. Blue-green aborts at its
// pause before promotion (-1).
func abortPoint(ro *v1alpha1.Rollout, p *PlanRollout) (int, error) {
	if ro.Spec.Strategy.BlueGreen != nil {
		if bg := ro.Spec.Strategy.BlueGreen; bg.AutoPromotionEnabled == nil || *bg.AutoPromotionEnabled {
			return 0, fmt.Errorf("%w: a blue-green rollout that promotes itself never rests before promotion (autoPromotionEnabled)", ErrNoRest)
		}
		return -1, nil
	}
	if p.AbortFrom < 0 || p.AbortFrom >= len(p.States) {
		return 0, fmt.Errorf("plan abortFrom %d out of range", p.AbortFrom)
	}
	k := p.States[p.AbortFrom].Step
	steps := ro.Spec.Strategy.Canary.Steps
	at := -1
	switch {
	case k >= 0 && k < len(steps) && steps[k].Pause != nil:
		at = k
	case k+1 >= 0 && k+1 < len(steps) && steps[k+1].Pause != nil:
		at = k + 1
	}
	if at >= 0 {
		if d := steps[at].Pause.Duration; d != nil && steps[at].Pause.DurationSeconds() <= 60 {
			// A short timed pause may end before the abort lands.
			return 0, fmt.Errorf("the plan's abort path starts at step %d, a %s pause: make it indefinite (pause: {}) or longer than a minute so that the abort lands there", at, d.String())
		}
		return at, nil
	}
	return 0, fmt.Errorf("%w: the plan's abort path starts at step %d and no pause holds the rollout there", ErrNoRest, k)
}

// abortDelay is the Rollout's abortScaleDownDelaySeconds (default 30s).
func abortDelay(ro *v1alpha1.Rollout) time.Duration {
	var d *int32
	if c := ro.Spec.Strategy.Canary; c != nil {
		d = c.AbortScaleDownDelaySeconds
	}
	if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		d = bg.AbortScaleDownDelaySeconds
	}
	if d == nil {
		return 30 * time.Second
	}
	return time.Duration(*d) * time.Second
}

// create creates an object of any kind the API server serves.
func (e *Env) create(ctx context.Context, u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	m, err := e.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvk, u.GetName(), err)
	}
	_, err = e.Dyn.Resource(m.Resource).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create %s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// replicas returns spec.replicas of the Rollout's ReplicaSet of a hash (0 when absent).
func (e *Env) replicas(ctx context.Context, ro *v1alpha1.Rollout, hash string) int32 {
	rs, err := e.Kube.AppsV1().ReplicaSets(ro.Namespace).Get(ctx, ro.Name+"-"+hash, metav1.GetOptions{})
	if err != nil {
		return 0
	}
	return ptrOr(rs.Spec.Replicas, 1)
}

// othersDown reports whether every ReplicaSet of the Rollout but the current one is at 0.
func (e *Env) othersDown(ctx context.Context, ro *v1alpha1.Rollout) bool {
	list, err := e.Kube.AppsV1().ReplicaSets(ro.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	for _, rs := range list.Items {
		if rs.Labels[hashLabel] != ro.Status.CurrentPodHash && ptrOr(rs.Spec.Replicas, 1) > 0 {
			return false
		}
	}
	return true
}

// available reports whether the current ReplicaSet has every pod available.
func (e *Env) available(ctx context.Context, ro *v1alpha1.Rollout) bool {
	rs, err := e.Kube.AppsV1().ReplicaSets(ro.Namespace).Get(ctx, ro.Name+"-"+ro.Status.CurrentPodHash, metav1.GetOptions{})
	return err == nil && rs.Status.AvailableReplicas == ptrOr(rs.Spec.Replicas, 1) && e.othersDown(ctx, ro)
}

type rolloutGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1alpha1.Rollout, error)
}

// drive polls the Rollout, calls act on every observation, and returns once
// done holds and the namespaces have been quiet for e.Quiet.
func (e *Env) drive(ctx context.Context, namespaces map[string]bool, ri rolloutGetter, name string, act func(*v1alpha1.Rollout) error, done func(*v1alpha1.Rollout) bool) (*v1alpha1.Rollout, error) {
	var last *v1alpha1.Rollout
	for {
		ro, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("timed out; last status: %s", statusLine(last))
			}
			return nil, err
		}
		if ro != nil {
			last = ro
			if err := act(ro); err != nil {
				return nil, err
			}
			if done(ro) && time.Since(e.Rec.LastIn(namespaces)) >= e.Quiet {
				return ro, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("timed out after %s; last status: %s", e.RunTimeout, statusLine(last))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func statusLine(ro *v1alpha1.Rollout) string {
	if ro == nil {
		return "(no Rollout)"
	}
	s := ro.Status
	step := "-"
	if s.CurrentStepIndex != nil {
		step = fmt.Sprint(*s.CurrentStepIndex)
	}
	var pauses []string
	for _, p := range s.PauseConditions {
		pauses = append(pauses, string(p.Reason))
	}
	return fmt.Sprintf("phase=%s message=%q step=%s stable=%s current=%s abort=%v pauses=%v", s.Phase, s.Message, step, s.StableRS, s.CurrentPodHash, s.Abort, pauses)
}

// syncLog waits until the recorder holds every write the API server has
// made in the namespaces (each live object's resourceVersion replayed) and
// returns the newest revision.
func (e *Env) syncLog(ctx context.Context, namespaces map[string]bool) (int64, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		want := map[string]string{}
		for kind, gvr := range watched {
			for ns := range namespaces {
				list, err := e.Dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return 0, err
				}
				for _, u := range list.Items {
					want[kind+"/"+u.GetNamespace()+"/"+u.GetName()] = u.GetResourceVersion()
				}
			}
		}
		events := e.Rec.Events(namespaces)
		end := int64(0)
		if len(events) > 0 {
			end = events[len(events)-1].RV
		}
		got := Replay(events, end)
		ok := len(got) == len(want)
		for k, rv := range want {
			if g := got[k]; g == nil || g.GetResourceVersion() != rv {
				ok = false
			}
		}
		if ok {
			return end, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the watch log never caught up with the API server")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Scenarios lists the bundles under the directories, sorted.
func Scenarios(dirs ...string) ([]string, error) {
	var out []string
	seen := map[string]string{}
	for _, d := range dirs {
		m, err := filepath.Glob(filepath.Join(d, "*.yaml"))
		if err != nil {
			return nil, err
		}
		for _, f := range m {
			base := strings.TrimSuffix(filepath.Base(f), ".yaml")
			if prev, dup := seen[base]; dup {
				return nil, fmt.Errorf("two scenario bundles named %s: %s and %s", base, prev, f)
			}
			seen[base] = f
			out = append(out, f)
		}
	}
	return out, nil
}
