// Package clusterview keeps an in-memory picture of the Argo Rollouts and
// Istio objects of a cluster — Rollouts, Services, VirtualServices,
// DestinationRules, (Cluster)AnalysisTemplates and Argo CD Applications, and
// on request the other kinds rules read — with the references between them
// indexed both ways. The admission webhook keeps it up to date with
// client-go informers (Start) and asks it for the objects one incoming
// object must be linted with (Related); lint and plan --cluster fill it once
// with paged lists (List) and take what it holds (Objects). One table of
// kinds, one discovery and one scoping rule serve both.
package clusterview

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// DefaultMaxRelated bounds how many cluster objects one request is linted
// with, so that a heavily shared object cannot make a review slow.
const DefaultMaxRelated = 200

// Object is one cached cluster object, ready to be loaded with the incoming one.
type Object struct {
	Key Key
	// JSON is the object as the API server returned it, managedFields removed.
	JSON []byte
	// Derived holds what a user of the view derived from this version of the
	// object (the webhook keeps it loaded there); a changed object comes with
	// a new, empty one. Never nil in what Related returns.
	Derived *Derived
}

// Derived is a slot for a value computed from one version of a cached
// object: Set with different content starts a new slot, so what it holds is
// never stale. It is safe for concurrent use.
type Derived struct{ v atomic.Pointer[derivedValue] }

type derivedValue struct{ v any }

// Load returns the value stored, or nil.
func (d *Derived) Load() any {
	if d == nil {
		return nil
	}
	if p := d.v.Load(); p != nil {
		return p.v
	}
	return nil
}

// Store keeps v for this version of the object.
func (d *Derived) Store(v any) {
	if d != nil {
		d.v.Store(&derivedValue{v})
	}
}

type entry struct {
	json    []byte
	refs    []Key
	derived *Derived
}

// View is a picture of the cluster: every watched object, the names each
// one references and the reverse index, so that one object finds the
// objects it must be linted with without scanning the cache. It is safe for
// concurrent use.
type View struct {
	mu      sync.RWMutex
	objects map[Key]*entry
	users   map[Key]map[Key]struct{} // referenced object → objects that reference it
	apps    map[string]map[Key]struct{}

	// pending holds, for objects Admitted put in the view before their
	// watch event came, until when they count; the watch's Set or Delete
	// clears them.
	pending map[Key]time.Time
	// swept is when set last removed the pending objects that expired.
	swept time.Time

	maxRelated int
	// RediscoverEvery is how often Start looks again for kinds the cluster
	// did not serve (0: DefaultRediscoverEvery; negative: never).
	RediscoverEvery time.Duration
	// Namespace limits the namespaced kinds Start watches to one namespace
	// ("" watches all). Cluster-scoped kinds are always watched whole.
	Namespace string
	// Prepare, when set (before the view is filled), derives a value from
	// each new version of an object as it is set, outside the view's lock
	// (on the informer's goroutine, not a review's); Related hands it back
	// in Object.Derived. The webhook loads the object there once.
	Prepare func(Object) any

	smu     sync.Mutex // guards synced and watched
	synced  []cache.InformerSynced
	watched []string
}

// New returns an empty view; Set and Delete fill it, or Start wires it to informers.
func New() *View {
	return &View{
		objects:    map[Key]*entry{},
		users:      map[Key]map[Key]struct{}{},
		apps:       map[string]map[Key]struct{}{},
		pending:    map[Key]time.Time{},
		maxRelated: DefaultMaxRelated,
	}
}

// Len returns the number of cached objects.
func (v *View) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.objects)
}

// Set adds or replaces an object.
func (v *View) Set(u *unstructured.Unstructured) error {
	_, err := v.set(u, time.Time{})
	return err
}

// clock is the time Admitted's pending objects are measured by (a variable
// for the tests).
var clock = time.Now

// PendingFor is how long an object Admitted put in the view counts without
// its watch event: a create the webhook admitted may still fail after it
// (another webhook, a quota), and then no event ever comes.
const PendingFor = 30 * time.Second

// Admitted puts an object the webhook has just admitted for creation in the
// view, unless the view has it already, so that the reviews that follow
// within the same `kubectl apply` see it: the watch event that carries it
// comes asynchronously, often after the next object's review (a Rollout
// reviewed before the view saw the AnalysisTemplate created a millisecond
// earlier was warned that the template does not exist). It counts for
// PendingFor, or until the watch sets or deletes the object.
func (v *View) Admitted(k Key, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	if u.GetNamespace() == "" && k.Namespace != "" {
		u = u.DeepCopy()
		u.SetNamespace(k.Namespace)
	}
	if u.GetKind() == "" || u.GetName() == "" {
		return nil // not an object the view can key
	}
	_, err := v.set(u, clock().Add(PendingFor))
	return err
}

// set is Set returning the size of the object's JSON. A non-zero until sets
// the object only when the view lacks it, as pending until then (Admitted).
func (v *View) set(u *unstructured.Unstructured, until time.Time) (int, error) {
	k := Key{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
	if !until.IsZero() {
		v.mu.RLock()
		_, has := v.objects[k]
		v.mu.RUnlock()
		if has {
			return 0, nil
		}
	}
	obj := u.Object
	if md, ok := obj["metadata"].(map[string]any); ok {
		if _, has := md["managedFields"]; has {
			u = u.DeepCopy()
			unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
			obj = u.Object
		}
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return 0, fmt.Errorf("caching %s: %w", k, err)
	}
	e := &entry{json: data, refs: references(k.Kind, k.Namespace, obj), derived: &Derived{}}
	v.mu.RLock()
	old := v.objects[k]
	v.mu.RUnlock()
	switch {
	case old != nil && bytes.Equal(old.json, data):
		e.derived = old.derived // an informer's resync: the same content keeps what was derived from it
	case v.Prepare != nil:
		e.derived.Store(v.Prepare(Object{Key: k, JSON: data, Derived: e.derived}))
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if !until.IsZero() {
		if _, has := v.objects[k]; has {
			return 0, nil // the watch came first
		}
	}
	v.removeLocked(k)
	if !until.IsZero() {
		v.sweepLocked()
		v.pending[k] = until
	}
	v.objects[k] = e
	for _, r := range e.refs {
		set := v.users[r]
		if set == nil {
			set = map[Key]struct{}{}
			v.users[r] = set
		}
		set[k] = struct{}{}
	}
	if k.Kind == KindApplication {
		set := v.apps[k.Name]
		if set == nil {
			set = map[Key]struct{}{}
			v.apps[k.Name] = set
		}
		set[k] = struct{}{}
	}
	return len(data), nil
}

// Delete removes an object.
func (v *View) Delete(k Key) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.removeLocked(k)
}

func (v *View) removeLocked(k Key) {
	delete(v.pending, k)
	old, ok := v.objects[k]
	if !ok {
		return
	}
	delete(v.objects, k)
	for _, r := range old.refs {
		if set := v.users[r]; set != nil {
			delete(set, k)
			if len(set) == 0 {
				delete(v.users, r)
			}
		}
	}
	if k.Kind == KindApplication {
		delete(v.apps[k.Name], k)
		if len(v.apps[k.Name]) == 0 {
			delete(v.apps, k.Name)
		}
	}
}

// sweepLocked removes, at most once a second, the objects Admitted put in
// the view whose watch event never came, so that creates that failed after
// the webhook do not pile up. The caller holds v.mu for writing.
func (v *View) sweepLocked() {
	now := clock()
	if len(v.pending) == 0 || now.Sub(v.swept) < time.Second {
		return
	}
	v.swept = now
	for k, until := range v.pending {
		if now.After(until) {
			v.removeLocked(k)
		}
	}
}

// expired reports an object Admitted put in the view whose watch event has
// not come within PendingFor: its creation failed after the webhook, and it
// no longer counts. The caller holds v.mu.
func (v *View) expired(k Key, now time.Time) bool {
	until, ok := v.pending[k]
	return ok && now.After(until)
}

// Related returns the cached objects an incoming object must be linted with,
// sorted by key: what it references, what references it, and — through the
// VirtualServices and DestinationRules involved — the other Rollouts that
// manage them (shared routes). The cached copy of the object itself is left
// out: the incoming version replaces it.
func (v *View) Related(self Key, obj map[string]any) []Object {
	v.mu.RLock()
	defer v.mu.RUnlock()
	picked := map[Key]bool{self: true}
	now := clock()
	var order []Key
	add := func(k Key) bool {
		if k.Kind == KindApplication && k.Namespace == "" {
			for ak := range v.apps[k.Name] {
				if !picked[ak] && len(order) < v.maxRelated {
					picked[ak] = true
					order = append(order, ak)
				}
			}
			return false
		}
		if picked[k] || len(order) >= v.maxRelated {
			return false
		}
		if _, ok := v.objects[k]; !ok || v.expired(k, now) {
			return false
		}
		picked[k] = true
		order = append(order, k)
		return true
	}
	// Level 1: direct neighbours in both directions.
	first := append([]Key(nil), references(self.Kind, self.Namespace, obj)...)
	first = append(first, sortedKeys(v.users[self])...)
	var reached []Key
	for _, k := range first {
		if add(k) {
			reached = append(reached, k)
		}
	}
	// Level 2: what those neighbours reference, and who else uses the routing
	// objects involved.
	routing := append([]Key{self}, reached...)
	for _, k := range reached {
		for _, r := range v.objects[k].refs {
			add(r)
		}
	}
	for _, k := range routing {
		if k.Kind == KindVirtualService || k.Kind == KindDestinationRule || k.Kind == KindService {
			for _, u := range sortedKeys(v.users[k]) {
				add(u)
			}
		}
	}
	if self.Kind == KindRollout {
		for _, r := range references(self.Kind, self.Namespace, obj) {
			if r.Kind == KindVirtualService || r.Kind == KindDestinationRule {
				for _, u := range sortedKeys(v.users[r]) {
					add(u)
				}
			}
		}
	}
	sort.Slice(order, func(i, j int) bool { return lessKey(order[i], order[j]) })
	out := make([]Object, 0, len(order))
	for _, k := range order {
		e := v.objects[k]
		out = append(out, Object{Key: k, JSON: e.json, Derived: e.derived})
	}
	return out
}

// Objects returns every cached object, sorted by key, restricted to the
// given namespaces when any are given (objects of the kinds read in every
// namespace, WholeCluster, are always included). The JSON is shared with
// the view: do not modify it.
func (v *View) Objects(namespaces ...string) []Object {
	want := map[string]bool{}
	for _, ns := range namespaces {
		want[ns] = true
	}
	v.mu.RLock()
	out := make([]Object, 0, len(v.objects))
	for k, e := range v.objects {
		if len(want) == 0 || k.Namespace == "" || want[k.Namespace] || WholeCluster(k.Kind) {
			out = append(out, Object{Key: k, JSON: e.json, Derived: e.derived})
		}
	}
	v.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return lessKey(out[i].Key, out[j].Key) })
	return out
}

func sortedKeys(set map[Key]struct{}) []Key {
	out := make([]Key, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return lessKey(out[i], out[j]) })
	return out
}

func lessKey(a, b Key) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// Synced reports whether every started informer has listed its kind.
func (v *View) Synced() bool {
	v.smu.Lock()
	defer v.smu.Unlock()
	for _, s := range v.synced {
		if !s() {
			return false
		}
	}
	return true
}

// WaitForSync blocks until every informer started initially has listed its
// kind, or ctx is done (its error is returned then).
func (v *View) WaitForSync(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !v.Synced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster view not synced: %w", ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// Watched returns the resources the view watches (group/version/resource).
func (v *View) Watched() []string {
	v.smu.Lock()
	defer v.smu.Unlock()
	return append([]string(nil), v.watched...)
}

// watchedResource is one kind the view can read, with the group's versions
// in order of preference.
type watchedResource struct {
	group    string
	versions []string
	resource string
	kind     string
	// allNamespaces: read in every namespace even when the view is
	// limited to some (cluster-scoped kinds; Applications, which live in
	// Argo CD's namespace and are found by name).
	allNamespaces bool
	// webhook: watched by Start (the admission webhook's kinds); the others
	// are only listed on request (List), for the rules that read them.
	webhook bool
}

var istioVersions = []string{"v1", "v1beta1", "v1alpha3"}

// watchedResources is every kind the view knows how to read.
var watchedResources = []watchedResource{
	{"argoproj.io", []string{"v1alpha1"}, "rollouts", KindRollout, false, true},
	{"", []string{"v1"}, "services", KindService, false, true},
	{"networking.istio.io", istioVersions, "virtualservices", KindVirtualService, false, true},
	{"networking.istio.io", istioVersions, "destinationrules", KindDestinationRule, false, true},
	{"argoproj.io", []string{"v1alpha1"}, "analysistemplates", KindAnalysisTemplate, false, true},
	{"argoproj.io", []string{"v1alpha1"}, "clusteranalysistemplates", KindClusterAnalysisTemplate, true, true},
	{"argoproj.io", []string{"v1alpha1"}, "applications", KindApplication, true, true},
	{"networking.istio.io", istioVersions, "gateways", KindGateway, false, false},
	{"networking.istio.io", istioVersions, "serviceentries", KindServiceEntry, false, false},
	{"networking.istio.io", istioVersions, "sidecars", KindSidecar, false, false},
	{"argoproj.io", []string{"v1alpha1"}, "experiments", KindExperiment, false, false},
	{"autoscaling", []string{"v2"}, "horizontalpodautoscalers", KindHorizontalPodAutoscaler, false, false},
	{"apps", []string{"v1"}, "deployments", KindDeployment, false, false},
	{"apps", []string{"v1"}, "statefulsets", KindStatefulSet, false, false},
	{"apps", []string{"v1"}, "daemonsets", KindDaemonSet, false, false},
	{"apps", []string{"v1"}, "replicasets", KindReplicaSet, false, false},
}

// webhookResources are the kinds Start watches.
var webhookResources = func() []watchedResource {
	var out []watchedResource
	for _, w := range watchedResources {
		if w.webhook {
			out = append(out, w)
		}
	}
	return out
}()

// Kinds returns every kind the view can read (List), in a fixed order.
func Kinds() []string {
	out := make([]string, len(watchedResources))
	for i, w := range watchedResources {
		out[i] = w.kind
	}
	return out
}

// WebhookKinds returns the kinds Start watches.
func WebhookKinds() []string {
	out := make([]string, len(webhookResources))
	for i, w := range webhookResources {
		out[i] = w.kind
	}
	return out
}

// Resources returns the group and resource of every kind the view can
// read, in table order: what list permission is needed on.
func Resources() []schema.GroupResource {
	out := make([]schema.GroupResource, len(watchedResources))
	for i, w := range watchedResources {
		out[i] = schema.GroupResource{Group: w.group, Resource: w.resource}
	}
	return out
}

// WholeCluster reports whether the view reads a kind in every namespace
// whatever namespaces it is limited to: cluster-scoped kinds, and
// Applications (found by name, in Argo CD's namespace).
func WholeCluster(kind string) bool {
	for _, w := range watchedResources {
		if w.kind == kind {
			return w.allNamespaces
		}
	}
	return false
}

// GroupOf returns the API group the view reads a kind from ("" for the
// core group or a kind it does not read).
func GroupOf(kind string) string {
	for _, w := range watchedResources {
		if w.kind == kind {
			return w.group
		}
	}
	return ""
}

// IsIstioKind reports whether kind is Istio networking config, which the
// mesh's root namespace holds for every namespace.
func IsIstioKind(kind string) bool {
	for _, w := range watchedResources {
		if w.kind == kind {
			return w.group == "networking.istio.io"
		}
	}
	return false
}

// Discovery is the part of client-go's discovery client the view uses.
type Discovery interface {
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// DefaultRediscoverEvery is how often kinds whose CRD was missing are looked for again.
const DefaultRediscoverEvery = time.Minute

// Start discovers which of the watched kinds the cluster serves, starts an
// informer for each and feeds the view. Kinds whose CRD is not installed are
// skipped with a log line and looked for again every RediscoverEvery, so a CRD
// installed later is picked up without a restart (its informer does not gate
// readiness: all replicas turning unready at once would leave the webhook
// without endpoints). Start returns once the informers are started; Synced
// tells when the first ones have listed.
func (v *View) Start(ctx context.Context, disc Discovery, client dynamic.Interface, log *slog.Logger) error {
	made, pending, err := v.watch(client, disc, webhookResources, true, log)
	if err != nil {
		return err
	}
	run(ctx, made)
	every := v.RediscoverEvery
	if every == 0 {
		every = DefaultRediscoverEvery
	}
	if len(pending) > 0 && every > 0 {
		go func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for len(pending) > 0 {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				made, pending, err = v.watch(client, disc, pending, false, log)
				if err != nil {
					log.Error("cannot watch a newly served kind", "err", err)
				}
				run(ctx, made)
			}
		}()
	}
	return nil
}

// informerResync is how often an informer hands every cached object to the
// view again.
const informerResync = 10 * time.Minute

// newInformer returns an informer of one resource, in namespace ("" for
// all): what client-go's dynamic informer factory builds, without linking
// the factory (which links client-go/informers, and through it every typed
// client of client-go/kubernetes).
func newInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string) cache.SharedIndexInformer {
	ri := client.Resource(gvr).Namespace(namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return ri.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, opts)
		},
	}
	return cache.NewSharedIndexInformerWithOptions(
		cache.ToListWatcherWithWatchListSemantics(lw, client),
		&unstructured.Unstructured{},
		cache.SharedIndexInformerOptions{
			ResyncPeriod:      informerResync,
			Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
			ObjectDescription: gvr.String(),
		},
	)
}

// run starts informers, each until ctx is done.
func run(ctx context.Context, informers []cache.SharedIndexInformer) {
	for _, inf := range informers {
		go inf.Run(ctx.Done())
	}
}

// watch makes an informer, feeding the view, for each of the resources the
// cluster serves, and returns them (not started) with the resources it does
// not serve. Namespaced kinds are watched in v.Namespace ("" for all), the
// kinds read whole (allNamespaces) in every namespace. Informers made
// initially gate Synced.
func (v *View) watch(client dynamic.Interface, disc Discovery, list []watchedResource, initial bool, log *slog.Logger) ([]cache.SharedIndexInformer, []watchedResource, error) {
	var made []cache.SharedIndexInformer
	var pending []watchedResource
	res := newResolver(disc)
	for _, w := range list {
		gvr, _ := res.resolve(w) // a discovery error reads as not served: looked for again later
		if gvr.Resource == "" {
			if initial {
				log.Info("kind not served by the cluster; not watched until it is", "kind", w.kind, "group", w.group, "resource", w.resource)
			}
			pending = append(pending, w)
			continue
		}
		ns := v.Namespace
		if w.allNamespaces {
			ns = metav1.NamespaceAll
		}
		inf := newInformer(client, gvr, ns)
		if err := inf.SetTransform(stripManagedFields); err != nil {
			return made, pending, fmt.Errorf("watching %s: %w", gvr, err)
		}
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { v.onSet(obj, log) },
			UpdateFunc: func(_, obj any) { v.onSet(obj, log) },
			DeleteFunc: func(obj any) { v.onDelete(obj) },
		})
		if err != nil {
			return made, pending, fmt.Errorf("watching %s: %w", gvr, err)
		}
		made = append(made, inf)
		v.smu.Lock()
		if initial {
			v.synced = append(v.synced, inf.HasSynced)
		}
		v.watched = append(v.watched, gvr.String())
		v.smu.Unlock()
		log.Info("watching", "resource", gvr.String())
	}
	return made, pending, nil
}

// resolver finds the group/version/resource the cluster serves for a kind,
// asking discovery once per group version.
type resolver struct {
	disc   Discovery
	served map[string]map[string]bool // group/version → resources
	errs   map[string]error
}

func newResolver(disc Discovery) *resolver {
	return &resolver{disc: disc, served: map[string]map[string]bool{}, errs: map[string]error{}}
}

// resolve returns the preferred served version of w's resource, an empty
// resource when the cluster serves none, and the first discovery error that
// was not "this group version does not exist".
func (r *resolver) resolve(w watchedResource) (schema.GroupVersionResource, error) {
	var firstErr error
	for _, ver := range w.versions {
		gv := schema.GroupVersion{Group: w.group, Version: ver}
		key := gv.String()
		m, ok := r.served[key]
		if !ok {
			m = map[string]bool{}
			l, err := r.disc.ServerResourcesForGroupVersion(key)
			switch {
			case err == nil:
				for _, res := range l.APIResources {
					m[res.Name] = true
				}
			case apierrors.IsNotFound(err):
			default:
				r.errs[key] = fmt.Errorf("discovering %s: %w", key, err)
			}
			r.served[key] = m
		}
		if err := r.errs[key]; err != nil && firstErr == nil {
			firstErr = err
		}
		if m[w.resource] {
			return gv.WithResource(w.resource), nil
		}
	}
	return schema.GroupVersionResource{}, firstErr
}

func stripManagedFields(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
	return obj, nil
}

func (v *View) onSet(obj any, log *slog.Logger) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if err := v.Set(u); err != nil {
		log.Warn("cannot cache object", "err", err)
	}
}

func (v *View) onDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		v.Delete(Key{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()})
	}
}
