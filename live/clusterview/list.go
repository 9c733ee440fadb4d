package clusterview

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Bounds of a one-shot List, so that a big cluster cannot make a lint slow
// or large without saying so.
const (
	// DefaultPageSize is how many objects one list request asks for.
	DefaultPageSize = 500
	// DefaultMaxObjects stops listing once the view holds this many objects.
	DefaultMaxObjects = 20000
	// DefaultMaxBytes stops listing once the objects kept take this much JSON.
	DefaultMaxBytes = 512 << 20
	// DefaultListWorkers is how many list requests run at once.
	DefaultListWorkers = 4
)

// Scope is a set of kinds and the namespaces to read them in.
type Scope struct {
	Kinds []string
	// Namespaces are the namespaces the namespaced kinds are listed in; nil
	// (or "*" among them) lists them in every namespace. Cluster-scoped
	// kinds and Applications are always listed whole, as Start watches them.
	Namespaces []string
}

// ListOptions says what List reads and how much of it.
type ListOptions struct {
	Scopes []Scope
	// LabelSelectors restrict the objects of a kind (kind → label selector),
	// e.g. the ReplicaSets Argo Rollouts made.
	LabelSelectors map[string]string
	// PageSize, MaxObjects and MaxBytes bound the requests and what is kept
	// (0: the defaults; a negative MaxObjects or MaxBytes is no bound).
	PageSize   int64
	MaxObjects int
	MaxBytes   int64
	// Workers is how many requests run at once (0: DefaultListWorkers).
	Workers int
	// Progress, when set, is called after every page, one call at a time.
	Progress func(ListProgress)
}

// ListProgress is how far a List has come.
type ListProgress struct {
	// Objects and Bytes are what the view keeps so far.
	Objects int
	Bytes   int64
	// Done of Total lists (one per kind and namespace) have finished.
	Done, Total int
}

// Reason says why a list did not read everything it was asked to.
type Reason string

// Reasons a list is incomplete.
const (
	ReasonForbidden Reason = "forbidden" // RBAC does not allow the list
	ReasonLimit     Reason = "limit"     // MaxObjects or MaxBytes reached
	ReasonTimeout   Reason = "timeout"   // the context ended first
	ReasonFailed    Reason = "failed"    // any other error
)

// ListProblem is one list (a kind in a namespace, or in all of them) that
// did not read everything.
type ListProblem struct {
	Kind string
	// Namespace is "" for a list over every namespace.
	Namespace string
	// Resource is the resource asked for as RBAC names it, e.g.
	// virtualservices.networking.istio.io.
	Resource string
	Reason   Reason
	// Err is the API server's answer (nil for ReasonLimit).
	Err error
}

// String says what was not read and why, in a line.
func (p ListProblem) String() string {
	where := "in every namespace"
	if p.Namespace != "" {
		where = "in namespace " + p.Namespace
	}
	switch p.Reason {
	case ReasonForbidden:
		return fmt.Sprintf("%s %s: forbidden (RBAC does not allow list on %s)", p.Kind, where, p.Resource)
	case ReasonLimit:
		return fmt.Sprintf("%s %s: not read completely, the object or size bound was reached", p.Kind, where)
	case ReasonTimeout:
		return fmt.Sprintf("%s %s: not read completely before the time limit", p.Kind, where)
	default:
		return fmt.Sprintf("%s %s: %v", p.Kind, where, p.Err)
	}
}

// ListResult is what a List read.
type ListResult struct {
	// Objects and Bytes are what the view keeps (JSON bytes).
	Objects int
	Bytes   int64
	// Requests is the number of list requests (pages) made.
	Requests int
	// Listed are the resources listed, group/version/resource.
	Listed []string
	// NotServed are the kinds asked for that the cluster does not serve
	// (their CRD is not installed): nothing is missing, there are none.
	NotServed []string
	// Problems are the lists that did not read everything, in request order.
	Problems []ListProblem
	Elapsed  time.Duration
}

// Partial reports whether some objects asked for may be missing.
func (r *ListResult) Partial() bool { return len(r.Problems) > 0 }

// listRequest is one kind in one namespace ("" for all).
type listRequest struct {
	w         watchedResource
	gvr       schema.GroupVersionResource
	namespace string
	selector  string
}

// List reads the objects of the scopes once, page by page, into the view:
// the one-shot counterpart of Start for a lint of local files against the
// cluster. Kinds the cluster does not serve are skipped (NotServed); a list
// RBAC forbids, one that fails, or one left unfinished by a bound or by
// ctx is recorded in Problems and the others go on. The error is for
// failures that leave nothing to go on: discovery not answering.
func (v *View) List(ctx context.Context, disc Discovery, client dynamic.Interface, opts ListOptions) (*ListResult, error) {
	began := time.Now()
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.MaxObjects == 0 {
		opts.MaxObjects = DefaultMaxObjects
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultListWorkers
	}
	res := &ListResult{}
	reqs, err := v.plan(disc, opts, res)
	if err != nil {
		return nil, err
	}
	l := &lister{v: v, client: client, opts: opts, res: res, total: len(reqs), problems: make([]*ListProblem, len(reqs))}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(opts.Workers, max(1, len(reqs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				l.problems[i] = l.list(ctx, reqs[i])
			}
		}()
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, p := range l.problems {
		if p != nil {
			res.Problems = append(res.Problems, *p)
		}
	}
	res.Elapsed = time.Since(began)
	return res, nil
}

// plan resolves the scopes into list requests in a fixed order: the kinds
// in table order, each in its sorted namespaces (one request over all of
// them when any scope asks for every namespace).
func (v *View) plan(disc Discovery, opts ListOptions, res *ListResult) ([]listRequest, error) {
	type want struct {
		all bool
		ns  map[string]bool
	}
	wanted := map[string]*want{}
	for _, s := range opts.Scopes {
		for _, k := range s.Kinds {
			w := wanted[k]
			if w == nil {
				w = &want{ns: map[string]bool{}}
				wanted[k] = w
			}
			if s.Namespaces == nil {
				w.all = true
			}
			for _, ns := range s.Namespaces {
				if ns == "*" {
					w.all = true
				} else if ns != "" {
					w.ns[ns] = true
				}
			}
		}
	}
	for k := range wanted {
		if !knownKind(k) {
			return nil, fmt.Errorf("the cluster view cannot read kind %q", k)
		}
	}
	r := newResolver(disc)
	var reqs []listRequest
	for _, w := range watchedResources {
		want := wanted[w.kind]
		if want == nil {
			continue
		}
		gvr, err := r.resolve(w)
		if err != nil {
			return nil, fmt.Errorf("reading the cluster: %w", err)
		}
		if gvr.Resource == "" {
			res.NotServed = append(res.NotServed, w.kind)
			continue
		}
		res.Listed = append(res.Listed, gvr.String())
		add := func(ns string) {
			reqs = append(reqs, listRequest{w: w, gvr: gvr, namespace: ns, selector: opts.LabelSelectors[w.kind]})
		}
		switch {
		case w.allNamespaces || want.all:
			add("")
		default:
			nss := make([]string, 0, len(want.ns))
			for ns := range want.ns {
				nss = append(nss, ns)
			}
			sort.Strings(nss)
			for _, ns := range nss {
				add(ns)
			}
		}
	}
	return reqs, nil
}

func knownKind(kind string) bool {
	for _, w := range watchedResources {
		if w.kind == kind {
			return true
		}
	}
	return false
}

// lister runs the requests of one List.
type lister struct {
	v      *View
	client dynamic.Interface
	opts   ListOptions
	res    *ListResult

	mu       sync.Mutex // guards res's counters, done and full
	done     int
	total    int
	full     bool // a bound was reached: the remaining lists stop
	problems []*ListProblem
}

// list reads one kind in one namespace, page by page, and returns what
// kept it from reading everything (nil when nothing did).
func (l *lister) list(ctx context.Context, req listRequest) *ListProblem {
	problem := func(reason Reason, err error) *ListProblem {
		return &ListProblem{Kind: req.w.kind, Namespace: req.namespace, Resource: resourceName(req.gvr), Reason: reason, Err: err}
	}
	defer func() {
		l.mu.Lock()
		l.done++
		l.report()
		l.mu.Unlock()
	}()
	var ri dynamic.ResourceInterface = l.client.Resource(req.gvr)
	if req.namespace != "" {
		ri = l.client.Resource(req.gvr).Namespace(req.namespace)
	}
	cont := ""
	for {
		if l.stopped() {
			return problem(ReasonLimit, nil)
		}
		if err := ctx.Err(); err != nil {
			return problem(ReasonTimeout, err)
		}
		page, err := ri.List(ctx, metav1.ListOptions{Limit: l.opts.PageSize, Continue: cont, LabelSelector: req.selector})
		l.mu.Lock()
		l.res.Requests++
		l.mu.Unlock()
		switch {
		case err == nil:
		case apierrors.IsForbidden(err):
			return problem(ReasonForbidden, err)
		case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err):
			return problem(ReasonTimeout, err)
		default:
			return problem(ReasonFailed, fmt.Errorf("listing %s: %w", resourceName(req.gvr), err))
		}
		for i := range page.Items {
			u := &page.Items[i]
			if u.GetKind() == "" { // list items may come without their type
				u.SetAPIVersion(req.gvr.GroupVersion().String())
				u.SetKind(req.w.kind)
			}
			if !l.admit() {
				return problem(ReasonLimit, nil)
			}
			n, err := l.v.set(u, time.Time{})
			l.mu.Lock()
			if err != nil {
				l.res.Objects-- // the place admit reserved
				l.mu.Unlock()
				return problem(ReasonFailed, err)
			}
			l.res.Bytes += int64(n)
			l.mu.Unlock()
		}
		l.mu.Lock()
		l.report()
		l.mu.Unlock()
		if cont = page.GetContinue(); cont == "" {
			return nil
		}
	}
}

// admit reports whether one more object may be kept and, if so, counts it
// at once: lists run in parallel, and counting only after the object is
// stored let two lists both take the last place (3 objects kept under
// --cluster-max-objects 2). It notes when a bound is reached so that every
// list stops.
func (l *lister) admit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full {
		return false
	}
	if l.opts.MaxObjects > 0 && l.res.Objects >= l.opts.MaxObjects || l.opts.MaxBytes > 0 && l.res.Bytes >= l.opts.MaxBytes {
		l.full = true
		return false
	}
	l.res.Objects++
	return true
}

func (l *lister) stopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.full
}

// report calls Progress; l.mu is held, which serialises the calls.
func (l *lister) report() {
	if l.opts.Progress != nil {
		l.opts.Progress(ListProgress{Objects: l.res.Objects, Bytes: l.res.Bytes, Done: l.done, Total: l.total})
	}
}

// resourceName is resource.group, as RBAC and kubectl name it (services
// for the core group).
func resourceName(gvr schema.GroupVersionResource) string {
	return strings.TrimSuffix(gvr.Resource+"."+gvr.Group, ".")
}
