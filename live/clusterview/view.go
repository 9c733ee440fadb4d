// Package clusterview keeps an in-memory picture of the Argo Rollouts and
// Istio objects of a cluster — Rollouts, Services, VirtualServices,
// DestinationRules, (Cluster)AnalysisTemplates and Argo CD Applications —
// fed by client-go informers, with the references between them indexed both
// ways. The admission webhook asks it for the objects one incoming object
// must be linted with (Related); a one-shot lint of a cluster can list
// everything it holds (Objects) once it has synced (WaitForSync).
package clusterview

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
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
}

type entry struct {
	json []byte
	refs []Key
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

	maxRelated int
	// RediscoverEvery is how often Start looks again for kinds the cluster
	// did not serve (0: DefaultRediscoverEvery; negative: never).
	RediscoverEvery time.Duration
	// Namespace limits the namespaced kinds Start watches to one namespace
	// ("" watches all). Cluster-scoped kinds are always watched whole.
	Namespace string

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
	k := Key{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
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
		return fmt.Errorf("caching %s: %w", k, err)
	}
	e := &entry{json: data, refs: references(k.Kind, k.Namespace, obj)}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.removeLocked(k)
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
	return nil
}

// Delete removes an object.
func (v *View) Delete(k Key) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.removeLocked(k)
}

func (v *View) removeLocked(k Key) {
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

// Related returns the cached objects an incoming object must be linted with,
// sorted by key: what it references, what references it, and — through the
// VirtualServices and DestinationRules involved — the other Rollouts that
// manage them (shared routes). The cached copy of the object itself is left
// out: the incoming version replaces it.
func (v *View) Related(self Key, obj map[string]any) []Object {
	v.mu.RLock()
	defer v.mu.RUnlock()
	picked := map[Key]bool{self: true}
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
		if _, ok := v.objects[k]; !ok {
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
		out = append(out, Object{Key: k, JSON: v.objects[k].json})
	}
	return out
}

// Objects returns every cached object, sorted by key, restricted to the
// given namespaces when any are given (cluster-scoped objects are always
// included). The JSON is shared with the view: do not modify it.
func (v *View) Objects(namespaces ...string) []Object {
	want := map[string]bool{}
	for _, ns := range namespaces {
		want[ns] = true
	}
	v.mu.RLock()
	out := make([]Object, 0, len(v.objects))
	for k, e := range v.objects {
		if len(want) == 0 || k.Namespace == "" || want[k.Namespace] {
			out = append(out, Object{Key: k, JSON: e.json})
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

// watchedResource is one kind the view watches, with the group's versions in
// order of preference.
type watchedResource struct {
	group    string
	versions []string
	resource string
	kind     string
	// allNamespaces: watched in every namespace even when the view is
	// limited to one (cluster-scoped kinds; Applications, which live in
	// Argo CD's namespace and are found by name).
	allNamespaces bool
}

var watchedResources = []watchedResource{
	{"argoproj.io", []string{"v1alpha1"}, "rollouts", KindRollout, false},
	{"", []string{"v1"}, "services", KindService, false},
	{"networking.istio.io", []string{"v1", "v1beta1", "v1alpha3"}, "virtualservices", KindVirtualService, false},
	{"networking.istio.io", []string{"v1", "v1beta1", "v1alpha3"}, "destinationrules", KindDestinationRule, false},
	{"argoproj.io", []string{"v1alpha1"}, "analysistemplates", KindAnalysisTemplate, false},
	{"argoproj.io", []string{"v1alpha1"}, "clusteranalysistemplates", KindClusterAnalysisTemplate, true},
	{"argoproj.io", []string{"v1alpha1"}, "applications", KindApplication, true},
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
	scoped := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 10*time.Minute, v.Namespace, nil)
	all := scoped
	if v.Namespace != "" {
		all = dynamicinformer.NewDynamicSharedInformerFactory(client, 10*time.Minute)
	}
	factories := func(w watchedResource) dynamicinformer.DynamicSharedInformerFactory {
		if w.allNamespaces {
			return all
		}
		return scoped
	}
	startAll := func() {
		scoped.Start(ctx.Done())
		all.Start(ctx.Done())
	}
	pending, err := v.watch(factories, disc, watchedResources, true, log)
	if err != nil {
		return err
	}
	startAll()
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
				if pending, err = v.watch(factories, disc, pending, false, log); err != nil {
					log.Error("cannot watch a newly served kind", "err", err)
				}
				startAll()
			}
		}()
	}
	return nil
}

// watch starts informers for the resources the cluster serves and returns
// the ones it does not. Informers started initially gate Synced.
func (v *View) watch(factory func(watchedResource) dynamicinformer.DynamicSharedInformerFactory, disc Discovery, list []watchedResource, initial bool, log *slog.Logger) ([]watchedResource, error) {
	served := map[string]map[string]bool{} // group/version → resources
	servedResources := func(gv string) map[string]bool {
		if m, ok := served[gv]; ok {
			return m
		}
		m := map[string]bool{}
		if l, err := disc.ServerResourcesForGroupVersion(gv); err == nil {
			for _, r := range l.APIResources {
				m[r.Name] = true
			}
		}
		served[gv] = m
		return m
	}
	var pending []watchedResource
	for _, w := range list {
		var gvr schema.GroupVersionResource
		for _, ver := range w.versions {
			gv := schema.GroupVersion{Group: w.group, Version: ver}
			if servedResources(gv.String())[w.resource] {
				gvr = gv.WithResource(w.resource)
				break
			}
		}
		if gvr.Resource == "" {
			if initial {
				log.Info("kind not served by the cluster; not watched until it is", "kind", w.kind, "group", w.group, "resource", w.resource)
			}
			pending = append(pending, w)
			continue
		}
		inf := factory(w).ForResource(gvr).Informer()
		if err := inf.SetTransform(stripManagedFields); err != nil {
			return pending, fmt.Errorf("watching %s: %w", gvr, err)
		}
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { v.onSet(obj, log) },
			UpdateFunc: func(_, obj any) { v.onSet(obj, log) },
			DeleteFunc: func(obj any) { v.onDelete(obj) },
		})
		if err != nil {
			return pending, fmt.Errorf("watching %s: %w", gvr, err)
		}
		v.smu.Lock()
		if initial {
			v.synced = append(v.synced, inf.HasSynced)
		}
		v.watched = append(v.watched, gvr.String())
		v.smu.Unlock()
		log.Info("watching", "resource", gvr.String())
	}
	return pending, nil
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
