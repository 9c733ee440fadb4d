package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/live/clusterview"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/policies"
	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// clusterOptions are the flags of the commands that read a live cluster
// (lint --cluster, plan --cluster). Reading is list only: nothing is written.
type clusterOptions struct {
	enabled     bool
	kubeconfig  string
	kubeContext string
	namespaces  []string
	timeout     time.Duration
	maxObjects  int
}

func (o *clusterOptions) bind(fl *pflag.FlagSet, what string) {
	fl.BoolVar(&o.enabled, "cluster", false, what)
	fl.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of --cluster (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)")
	fl.StringVar(&o.kubeContext, "kube-context", "", "kubeconfig context of --cluster (default: the kubeconfig's current context)")
	fl.StringArrayVar(&o.namespaces, "cluster-namespace", nil,
		"namespace read by --cluster, replacing the ones the local files touch (repeatable or comma-separated; '*' is every namespace)")
	fl.DurationVar(&o.timeout, "cluster-timeout", time.Minute, "time limit for reading the cluster; what is not read by then makes the lint partial")
	fl.IntVar(&o.maxObjects, "cluster-max-objects", clusterview.DefaultMaxObjects,
		fmt.Sprintf("most objects read from the cluster (and at most %d MiB of them); past it the lint is partial", clusterview.DefaultMaxBytes>>20))
}

// check rejects cluster flags without --cluster, which would silently do nothing.
func (o *clusterOptions) check(fl *pflag.FlagSet) error {
	if o.enabled {
		if o.timeout <= 0 {
			return fmt.Errorf("--cluster-timeout must be positive")
		}
		if o.maxObjects <= 0 {
			return fmt.Errorf("--cluster-max-objects must be positive")
		}
		return nil
	}
	for _, f := range []string{"kubeconfig", "kube-context", "cluster-namespace", "cluster-timeout", "cluster-max-objects"} {
		if fl.Changed(f) {
			return fmt.Errorf("--%s needs --cluster", f)
		}
	}
	return nil
}

// explicitNamespaces returns --cluster-namespace's namespaces, nil when unset.
func (o *clusterOptions) explicitNamespaces() []string {
	return splitList(o.namespaces)
}

// liveRead is what one command read from the cluster.
type liveRead struct {
	target *kubeTarget
	view   *clusterview.View
	list   *clusterview.ListResult
}

// target resolves the cluster the flags name.
func (o *clusterOptions) target(e *Env) (*kubeTarget, error) {
	return restConfig(e, e.path(o.kubeconfig), o.kubeContext, "give --kubeconfig, or drop --cluster")
}

// read lists the scopes' objects from the cluster into a fresh view, with
// progress on stderr once it takes more than a second, and says on stderr
// what could not be read. Only an unreachable cluster is an error.
func (o *clusterOptions) read(e *Env, kt *kubeTarget, scopes []clusterview.Scope, selectors map[string]string) (*liveRead, error) {
	rc := *kt.rest
	rc.QPS, rc.Burst = 50, 100 // pages of a few lists; client-go's default of 5/s would dominate
	rc.UserAgent = "rolloutlint/" + VersionString()
	rc.Timeout = o.timeout // discovery takes no context: bound each request too
	dyn, err := dynamic.NewForConfig(&rc)
	if err != nil {
		return nil, fmt.Errorf("cluster client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(&rc)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	prog := startProgress(e.Err, time.Second)
	view := clusterview.New()
	res, err := view.List(ctx, disc, dyn, clusterview.ListOptions{
		Scopes: scopes, LabelSelectors: selectors, MaxObjects: o.maxObjects, Progress: prog.update,
	})
	prog.stop()
	if err != nil {
		return nil, fmt.Errorf("cluster at %s (%s): %w", rc.Host, kt.source, err)
	}
	o.tellProblems(e.Err, res)
	return &liveRead{target: kt, view: view, list: res}, nil
}

// tellProblems writes one line per list that did not read everything (the
// lists a bound stopped in one line), and that the result is partial.
func (o *clusterOptions) tellProblems(w io.Writer, res *clusterview.ListResult) {
	var limited []string
	for _, p := range res.Problems {
		if p.Reason == clusterview.ReasonLimit {
			limited = append(limited, p.Kind+nsSuffix(p.Namespace))
			continue
		}
		fmt.Fprintf(w, "rolloutlint: cluster: %s\n", p)
	}
	if len(limited) > 0 {
		fmt.Fprintf(w, "rolloutlint: cluster: stopped at %d objects (--cluster-max-objects %d, or %d MiB): not read completely: %s\n",
			res.Objects, o.maxObjects, clusterview.DefaultMaxBytes>>20, strings.Join(limited, ", "))
	}
	if res.Partial() {
		fmt.Fprintf(w, "rolloutlint: warning: the cluster was read partially (%d of the lists); the result may miss findings, "+
			"or report objects as missing, that the unread objects would change\n", len(res.Problems))
	}
}

func nsSuffix(ns string) string {
	if ns == "" {
		return " (every namespace)"
	}
	return " in " + ns
}

// problems are the lines of the result's problems, for the report.
func (l *liveRead) problems() []string {
	out := make([]string, 0, len(l.list.Problems))
	for _, p := range l.list.Problems {
		out = append(out, p.String())
	}
	return out
}

// progress prints how far a List has come every period, starting one
// period after it began, so that a quick read prints nothing.
type progress struct {
	mu    sync.Mutex
	last  clusterview.ListProgress
	shown bool
	w     io.Writer
	began time.Time
	done  chan struct{}
	wg    sync.WaitGroup
}

func startProgress(w io.Writer, period time.Duration) *progress {
	p := &progress{w: w, began: time.Now(), done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.print("")
			}
		}
	}()
	return p
}

func (p *progress) update(lp clusterview.ListProgress) {
	p.mu.Lock()
	p.last = lp
	p.mu.Unlock()
}

func (p *progress) print(suffix string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.last
	fmt.Fprintf(p.w, "rolloutlint: reading the cluster: %d of %d lists, %d objects (%.1f MB), %s%s\n",
		l.Done, l.Total, l.Objects, float64(l.Bytes)/1e6, time.Since(p.began).Round(100*time.Millisecond), suffix)
	p.shown = true
}

// stop ends the printing; once anything was printed, a last line says the
// read is done.
func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	p.mu.Lock()
	shown := p.shown
	p.mu.Unlock()
	if shown {
		p.print(": done")
	}
}

// clusterKinds are the kinds the cluster view can list that the given
// rules read (their Kinds; a policy over every kind reads them all).
// ReplicaSets are left out: in a cluster, Deployments and Rollouts make
// them from templates that are read anyway.
func clusterKinds(rs []*rules.Rule) []string {
	want := map[string]bool{}
	for _, r := range rs {
		for _, k := range r.Kinds {
			if k == policies.AllKinds {
				for _, k := range clusterview.Kinds() {
					want[k] = true
				}
			}
			want[k] = true
		}
	}
	var out []string
	for _, k := range clusterview.Kinds() {
		if want[k] && k != clusterview.KindReplicaSet {
			out = append(out, k)
		}
	}
	return out
}

// touchedNamespaces are the namespaces of the bundle's objects and of the
// objects they name (a VirtualService of another namespace, a Gateway in
// istio-system, a destination host's Service), sorted.
func touchedNamespaces(g *graph.Graph) []string {
	set := map[string]bool{}
	for _, r := range g.Resources {
		if r.Namespace != "" {
			set[r.Namespace] = true
		}
		for _, k := range clusterview.References(r.Kind, r.Namespace, r.Object()) {
			if k.Namespace != "" {
				set[k.Namespace] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// lintScopes are what lint --cluster reads: the kinds in the namespaces
// (those the bundle touches, or --cluster-namespace), and, unless the
// namespaces were given, the Istio kinds in Istio's root namespace, whose
// config applies to every namespace.
func lintScopes(kinds, namespaces []string, explicit bool) []clusterview.Scope {
	if len(namespaces) == 0 {
		namespaces = []string{} // none touched: cluster-scoped kinds only
	}
	scopes := []clusterview.Scope{{Kinds: kinds, Namespaces: namespaces}}
	if !explicit {
		var istio []string
		for _, k := range kinds {
			if clusterview.IsIstioKind(k) {
				istio = append(istio, k)
			}
		}
		scopes = append(scopes, clusterview.Scope{Kinds: istio, Namespaces: []string{xds.RootNamespace}})
	}
	return scopes
}

// liveInputs turns the view's objects into inputs loaded after the local
// ones, leaving out those a local object replaces (same group, kind,
// namespace and name: kubectl apply would overwrite them). Each is written
// as kubectl get -o yaml prints it, so that its lines are the ones a user
// sees there. It returns the inputs and how many objects were replaced.
func liveInputs(local *graph.Graph, objs []clusterview.Object) ([]load.Input, int, error) {
	type id struct{ group, kind, ns, name string }
	have := map[id]bool{}
	for _, r := range local.Resources {
		have[id{r.Group, r.Kind, r.Namespace, r.Name}] = true
	}
	var out []load.Input
	replaced := 0
	for _, o := range objs {
		if have[id{clusterview.GroupOf(o.Key.Kind), o.Key.Kind, o.Key.Namespace, o.Key.Name}] {
			replaced++
			continue
		}
		data, err := yaml.JSONToYAML(o.JSON)
		if err != nil {
			return nil, 0, fmt.Errorf("live %s: %w", o.Key, err)
		}
		out = append(out, load.Input{Path: o.Key.File(), Data: data})
	}
	return out, replaced, nil
}

// lintGraph reads the cluster for a lint of b and loads b's files again
// with the live objects after them. It returns the graph, the files to
// report on (the local ones: live objects are only context) and the
// report's description of the read.
func (o *clusterOptions) lintGraph(e *Env, kt *kubeTarget, b *bundle, kinds []string) (*graph.Graph, map[string]bool, *report.Cluster, error) {
	namespaces := o.explicitNamespaces()
	explicit := namespaces != nil
	if !explicit {
		namespaces = touchedNamespaces(b.graph)
	}
	lr, err := o.read(e, kt, lintScopes(kinds, namespaces, explicit), nil)
	if err != nil {
		return nil, nil, nil, err
	}
	live, replaced, err := liveInputs(b.graph, lr.view.Objects())
	if err != nil {
		return nil, nil, nil, err
	}
	g := load.Inputs(append(slices.Clip(b.inputs), live...), b.opts)
	memlimit.Fit()
	reported := b.reported
	if reported == nil {
		reported = make(map[string]bool, len(b.inputs))
		for _, in := range b.inputs {
			reported[e.canonical(in.Path)] = true
		}
	}
	return g, reported, lr.reportCluster(len(live), replaced), nil
}

// reportCluster is the report's description of what was read.
func (l *liveRead) reportCluster(objects, replaced int) *report.Cluster {
	return &report.Cluster{
		Server: l.target.rest.Host, Context: l.target.context, Objects: objects, Replaced: replaced,
		Partial: l.list.Partial(), Problems: l.problems(),
	}
}

// planKinds are what plan --cluster reads: the Rollouts, the objects their
// plans write and the Sidecars that scope the pushes.
var planKinds = []string{clusterview.KindRollout, clusterview.KindService, clusterview.KindVirtualService,
	clusterview.KindDestinationRule, clusterview.KindSidecar, clusterview.KindReplicaSet}

// livePlans reads the cluster for plan --cluster and plans each Rollout
// from its live state: the Rollouts of the local files (b.graph set), each
// with the live objects the files do not replace, or else every live
// Rollout of the namespaces. It returns the graph the plans were built on.
func (o *clusterOptions) livePlans(e *Env, kt *kubeTarget, b *bundle) (*graph.Graph, []*plan.Plan, error) {
	namespaces := o.explicitNamespaces()
	explicit := namespaces != nil
	switch {
	case explicit:
	case b.graph != nil:
		namespaces = touchedNamespaces(b.graph)
	default:
		ns := kt.namespace
		if ns == "" {
			ns = "default"
		}
		namespaces = []string{ns}
	}
	// Only the ReplicaSets Argo Rollouts made: they carry its hash label.
	lr, err := o.read(e, kt, lintScopes(planKinds, namespaces, explicit), map[string]string{clusterview.KindReplicaSet: plan.HashLabel})
	if err != nil {
		return nil, nil, err
	}
	objs := lr.view.Objects()
	all := make([]load.Input, 0, len(objs))
	for _, obj := range objs {
		data, err := yaml.JSONToYAML(obj.JSON)
		if err != nil {
			return nil, nil, fmt.Errorf("live %s: %w", obj.Key, err)
		}
		all = append(all, load.Input{Path: obj.Key.File(), Data: data})
	}
	live := load.Inputs(all, load.Options{})
	merged := live
	if b.graph != nil {
		extra, _, err := liveInputs(b.graph, objs)
		if err != nil {
			return nil, nil, err
		}
		merged = load.Inputs(append(slices.Clip(b.inputs), extra...), b.opts)
	}
	liveRollouts := map[graph.ObjectKey]*graph.RolloutRefs{}
	for _, rr := range live.Refs().Rollouts {
		liveRollouts[graph.ObjectKey{Kind: rr.Rollout.Kind, Namespace: rr.Rollout.Namespace, Name: rr.Rollout.Name}] = rr
	}
	var plans []*plan.Plan
	for _, rr := range merged.Refs().Rollouts {
		r := rr.Rollout
		if b.graph != nil && (graph.IsLive(r.File) || b.reported != nil && !b.reported[e.canonical(r.File)]) {
			continue // with files, their Rollouts only
		}
		name := r.Namespace + "/" + r.Name
		var p *plan.Plan
		lrr := liveRollouts[graph.ObjectKey{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}]
		if lrr == nil {
			fmt.Fprintf(e.Err, "rolloutlint: plan: Rollout %s is not in the cluster; planned from its committed state\n", name)
		} else if l, err := plan.ReadLive(live, lrr); err != nil {
			fmt.Fprintf(e.Err, "rolloutlint: plan: %v; planned from its committed state\n", err)
		} else {
			l.NewTemplate = b.graph != nil && !sameTemplate(r, lrr.Rollout)
			p = plan.FromLive(merged, rr, l)
		}
		if p == nil {
			p = plan.ForRollout(merged, rr)
		}
		if p != nil {
			plans = append(plans, p)
		}
	}
	return merged, plans, nil
}

// sameTemplate reports whether two Rollouts have the same pod template, as
// data (a creationTimestamp: null that clients write is no difference).
func sameTemplate(a, b *graph.Resource) bool {
	norm := func(r *graph.Resource) any {
		spec, _ := r.Object()["spec"].(map[string]any)
		data, err := json.Marshal(spec["template"])
		if err != nil {
			return nil
		}
		var v map[string]any
		if json.Unmarshal(data, &v) != nil {
			return nil
		}
		if md, ok := v["metadata"].(map[string]any); ok {
			if ts, has := md["creationTimestamp"]; has && ts == nil {
				delete(md, "creationTimestamp")
			}
			if len(md) == 0 {
				delete(v, "metadata")
			}
		}
		return v
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// ontoLocal moves each finding that lands on a live object but involves a
// local file (a related location in it) onto that location: lint --cluster
// reports on the local files only. The live location becomes the first
// related one, naming the object and field; the finding's object is the
// local one. Findings stay sorted.
func ontoLocal(res *analyzer.Result) {
	moved := false
	for i := range res.Diagnostics {
		d := &res.Diagnostics[i]
		if !graph.IsLive(d.Pos.File) {
			continue
		}
		at := -1
		for j, r := range d.Related {
			if !graph.IsLive(r.File) {
				at = j
				break
			}
		}
		if at < 0 {
			continue
		}
		local := d.Related[at]
		what := "the live " + d.Object.Kind + " " + nsName(d.Object.Namespace, d.Object.Name)
		if d.Path != "" {
			what += " at " + d.Path
		}
		rel := make([]rules.Related, 0, len(d.Related))
		rel = append(rel, rules.Related{File: d.Pos.File, Line: d.Pos.Line, Column: d.Pos.Column, EndLine: d.Pos.EndLine, EndColumn: d.Pos.EndColumn,
			Message: what, Object: d.Object})
		rel = append(rel, d.Related[:at]...)
		rel = append(rel, d.Related[at+1:]...)
		d.Pos = graph.Position{File: local.File, Line: local.Line, Column: local.Column, EndLine: local.EndLine, EndColumn: local.EndColumn}
		d.Object, d.Path, d.Related, d.Resource = local.Object, "", rel, nil
		if d.Fix != nil {
			d.Fix = &rules.Fix{Description: d.Fix.Description} // its replacement was for the live object's text
		}
		moved = true
	}
	if moved {
		sort.SliceStable(res.Diagnostics, func(i, j int) bool { return rules.Less(&res.Diagnostics[i], &res.Diagnostics[j]) })
	}
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
