package argoconformance

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// The kinds whose writes the comparison reads.
var watched = map[string]schema.GroupVersionResource{
	"Rollout":         {Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"},
	"ReplicaSet":      {Group: "apps", Version: "v1", Resource: "replicasets"},
	"Service":         {Group: "", Version: "v1", Resource: "services"},
	"VirtualService":  {Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"},
	"DestinationRule": {Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"},
}

// Event is one watch event. RV is the object's resourceVersion: with one
// etcd it is etcd's global revision, so events of every kind are totally
// ordered by it, the order the API server committed the writes in.
type Event struct {
	RV   int64
	Type watch.EventType
	Kind string
	Obj  *unstructured.Unstructured
	At   time.Time
}

// Key is kind/namespace/name.
func (e Event) Key() string { return e.Kind + "/" + e.Obj.GetNamespace() + "/" + e.Obj.GetName() }

// Recorder keeps every watch event of the watched kinds, in all namespaces.
type Recorder struct {
	mu     sync.Mutex
	events []Event
	last   time.Time
	errs   []error
}

// Start lists and watches every watched kind until ctx ends; it returns
// once every watch is established.
func (r *Recorder) Start(ctx context.Context, dyn dynamic.Interface) error {
	for kind, gvr := range watched {
		list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list %s: %w", kind, err)
		}
		for i := range list.Items {
			r.add(Event{Type: watch.Added, Kind: kind, Obj: &list.Items[i]})
		}
		w, err := dyn.Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			return fmt.Errorf("watch %s: %w", kind, err)
		}
		go r.follow(ctx, dyn, kind, gvr, w, list.GetResourceVersion())
	}
	return nil
}

func (r *Recorder) follow(ctx context.Context, dyn dynamic.Interface, kind string, gvr schema.GroupVersionResource, w watch.Interface, rv string) {
	for {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				r.fail(fmt.Errorf("watch %s: %v", kind, ev.Object))
				continue
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rv = u.GetResourceVersion()
			r.add(Event{Type: ev.Type, Kind: kind, Obj: u})
		}
		if ctx.Err() != nil {
			return
		}
		// The server closes watches now and then: resume where it stopped.
		var err error
		w, err = dyn.Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			if ctx.Err() == nil {
				r.fail(fmt.Errorf("re-watch %s from %s: %w", kind, rv, err))
			}
			return
		}
	}
}

func (r *Recorder) add(e Event) {
	n, err := strconv.ParseInt(e.Obj.GetResourceVersion(), 10, 64)
	if err != nil {
		r.fail(fmt.Errorf("%s: resourceVersion %q is not etcd's revision", e.Key(), e.Obj.GetResourceVersion()))
		return
	}
	e.RV, e.At = n, time.Now()
	r.mu.Lock()
	r.events = append(r.events, e)
	r.last = e.At
	r.mu.Unlock()
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// Errors returns the watch errors met.
func (r *Recorder) Errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// Events returns the events of objects in the namespaces, ordered by RV.
func (r *Recorder) Events(namespaces map[string]bool) []Event {
	r.mu.Lock()
	var out []Event
	for _, e := range r.events {
		if namespaces[e.Obj.GetNamespace()] {
			out = append(out, e)
		}
	}
	r.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].RV < out[j].RV })
	return out
}

// LastIn returns when the last event in the namespaces arrived.
func (r *Recorder) LastIn(namespaces map[string]bool) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.events) - 1; i >= 0; i-- {
		if namespaces[r.events[i].Obj.GetNamespace()] {
			return r.events[i].At
		}
	}
	return time.Time{}
}

// Objects is the state of the watched objects at some revision.
type Objects map[string]*unstructured.Unstructured

// Replay applies events in order up to and including revision rv.
func Replay(events []Event, rv int64) Objects {
	objs := Objects{}
	for _, e := range events {
		if e.RV > rv {
			break
		}
		if e.Type == watch.Deleted {
			delete(objs, e.Key())
		} else {
			objs[e.Key()] = e.Obj
		}
	}
	return objs
}
