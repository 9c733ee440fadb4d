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
	fl.DurationVar(&o.timeout, "cluster-timeout", time.Minute, "time limit for reading the cluster; what is not read by then is missing, and the result says it is partial")
	fl.IntVar(&o.maxObjects, "cluster-max-objects", clusterview.DefaultMaxObjects,
		fmt.Sprintf("most objects read from the cluster (and at most %d MiB of them); past it the result is partial", clusterview.DefaultMaxBytes>>20))
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

// namespacesFor are the namespaces read for a graph: --cluster-namespace's,
// else those it touches; explicit says which.
func (o *clusterOptions) namespacesFor(g *graph.Graph) (namespaces []string, explicit bool) {
	if ns := o.explicitNamespaces(); ns != nil {
		return ns, true
	}
	return touchedNamespaces(g), false
}

// target resolves the cluster the flags name.
func (o *clusterOptions) target(e *Env) (*kubeTarget, error) {
	return restConfig(e, e.path(o.kubeconfig), o.kubeContext, "give --kubeconfig, or drop --cluster")
}

// session is one command's reading of the cluster: one view that lists
// are added to as the command needs more namespaces (a repository lint
// reads each bundle's namespaces once), with what could not be read.
type session struct {
	o      *clusterOptions
	e      *Env
	target *kubeTarget
	view   *clusterview.View
	disc   clusterview.Discovery
	dyn    dynamic.Interface
	// deadline ends the whole read (--cluster-timeout).
	deadline time.Time
	// listed are the kind/namespace lists made ("*" for every namespace).
	listed   map[string]bool
	problems []clusterview.ListProblem
	objects  int
	// loaded and replaced are the live objects loaded with local files and
	// those a local object replaced, over every graph built.
	loaded, replaced map[clusterview.Key]bool
}

// newSession connects to the cluster (nothing is read yet).
func (o *clusterOptions) newSession(e *Env, kt *kubeTarget) (*session, error) {
	rc := *kt.rest
	rc.QPS, rc.Burst = 50, 100 // pages of a few lists; client-go's default of 5/s would dominate
	rc.UserAgent = "rolloutlint/" + VersionString()
	rc.Timeout = o.timeout // discovery takes no context: bound each request too
	dyn, err := dynamic.NewForConfig(&rc)
	if err != nil {
		return nil, fmt.Errorf("cluster client: %w", err)
	}
	disc, err := clusterview.NewDiscovery(&rc)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	return &session{o: o, e: e, target: kt, view: clusterview.New(), disc: disc, dyn: dyn,
		deadline: time.Now().Add(o.timeout), listed: map[string]bool{},
		loaded: map[clusterview.Key]bool{}, replaced: map[clusterview.Key]bool{}}, nil
}

// list reads the scopes' lists not made yet into the view, with progress on
// stderr once it takes more than a second, and says on stderr what could
// not be read. Only an unreachable cluster is an error.
func (s *session) list(scopes []clusterview.Scope, selectors map[string]string) error {
	var todo []clusterview.Scope
	for _, sc := range scopes {
		for _, k := range sc.Kinds {
			if s.listed[k+"/*"] {
				continue
			}
			if clusterview.WholeCluster(k) || sc.Namespaces == nil || slices.Contains(sc.Namespaces, "*") {
				todo = append(todo, clusterview.Scope{Kinds: []string{k}})
				continue
			}
			var want []string
			for _, ns := range sc.Namespaces {
				if !s.listed[k+"/"+ns] {
					want = append(want, ns)
				}
			}
			if len(want) > 0 {
				todo = append(todo, clusterview.Scope{Kinds: []string{k}, Namespaces: want})
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	for _, sc := range todo {
		if sc.Namespaces == nil {
			s.listed[sc.Kinds[0]+"/*"] = true
		}
		for _, ns := range sc.Namespaces {
			s.listed[sc.Kinds[0]+"/"+ns] = true
		}
	}
	res := &clusterview.ListResult{}
	if left := s.o.maxObjects - s.view.Len(); left <= 0 {
		// Earlier lists reached the bound: these are not made.
		for _, sc := range todo {
			nss := sc.Namespaces
			if nss == nil {
				nss = []string{""}
			}
			for _, ns := range nss {
				res.Problems = append(res.Problems, clusterview.ListProblem{Kind: sc.Kinds[0], Namespace: ns, Reason: clusterview.ReasonLimit})
			}
		}
	} else {
		ctx, cancel := context.WithDeadline(context.Background(), s.deadline)
		defer cancel()
		prog := startProgress(s.e.Err, time.Second)
		var err error
		res, err = s.view.List(ctx, s.disc, s.dyn, clusterview.ListOptions{
			Scopes: todo, LabelSelectors: selectors, MaxObjects: left, Progress: prog.update,
		})
		prog.stop()
		if err != nil {
			return fmt.Errorf("cluster at %s (%s): %w", s.target.rest.Host, s.target.source, err)
		}
	}
	s.objects = s.view.Len()
	s.problems = append(s.problems, res.Problems...)
	s.o.tellProblems(s.e.Err, res, s.objects)
	return nil
}

// finish says on stderr when the read was partial.
func (s *session) finish() {
	if len(s.problems) > 0 {
		fmt.Fprintf(s.e.Err, "rolloutlint: warning: the cluster was read partially (%d of the lists); the result may miss findings, "+
			"or report objects as missing, that the unread objects would change\n", len(s.problems))
	}
}

// report is the report's description of what was read.
func (s *session) report() *report.Cluster {
	problems := make([]string, 0, len(s.problems))
	for _, p := range s.problems {
		problems = append(problems, p.String())
	}
	return &report.Cluster{
		Server: s.target.rest.Host, Context: s.target.context, Objects: len(s.loaded), Replaced: len(s.replaced),
		Partial: len(s.problems) > 0, Problems: problems,
	}
}

// tellProblems writes one line per list that did not read everything (the
// lists a bound stopped in one line).
func (o *clusterOptions) tellProblems(w io.Writer, res *clusterview.ListResult, objects int) {
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
			objects, o.maxObjects, clusterview.DefaultMaxBytes>>20, strings.Join(limited, ", "))
	}
}

func nsSuffix(ns string) string {
	if ns == "" {
		return " (every namespace)"
	}
	return " in " + ns
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
// sees there. It returns the inputs and the objects replaced.
func liveInputs(local *graph.Graph, objs []clusterview.Object) ([]load.Input, []clusterview.Key, error) {
	type id struct{ group, kind, ns, name string }
	have := map[id]bool{}
	for _, r := range local.Resources {
		have[id{r.Group, r.Kind, r.Namespace, r.Name}] = true
	}
	var out []load.Input
	var replaced []clusterview.Key
	for _, o := range objs {
		if have[id{clusterview.GroupOf(o.Key.Kind), o.Key.Kind, o.Key.Namespace, o.Key.Name}] {
			replaced = append(replaced, o.Key)
			continue
		}
		data, err := yaml.JSONToYAML(o.JSON)
		if err != nil {
			return nil, nil, fmt.Errorf("live %s: %w", o.Key, err)
		}
		out = append(out, load.Input{Path: o.Key.File(), Data: data})
	}
	return out, replaced, nil
}

// liveFor lists what a lint of the local graph g needs and returns the
// live objects to load after its files: those of g's namespaces (and the
// root namespace's Istio config, the cluster-scoped kinds, Applications)
// that no local object replaces.
func (s *session) liveFor(g *graph.Graph, kinds []string) ([]load.Input, error) {
	namespaces, explicit := s.o.namespacesFor(g)
	scopes := lintScopes(kinds, namespaces, explicit)
	if err := s.list(scopes, nil); err != nil {
		return nil, err
	}
	var objs []clusterview.Object
	switch {
	case explicit && slices.Contains(namespaces, "*"):
		objs = s.view.Objects()
	case explicit:
		objs = s.view.Objects(namespaces...)
	default:
		objs = s.view.Objects(append(namespaces, xds.RootNamespace)...)
	}
	in, replaced, err := liveInputs(g, objs)
	if err != nil {
		return nil, err
	}
	for _, k := range replaced {
		s.replaced[k] = true
	}
	for _, i := range in {
		s.loaded[keyOfFile(i.Path)] = true
	}
	return in, nil
}

// keyOfFile is the view key a live file name stands for.
func keyOfFile(file string) clusterview.Key {
	parts := strings.SplitN(strings.TrimPrefix(file, graph.LivePrefix), "/", 3)
	if len(parts) == 2 {
		return clusterview.Key{Kind: parts[0], Name: parts[1]}
	}
	return clusterview.Key{Kind: parts[0], Namespace: parts[1], Name: parts[2]}
}

// lintGraph reads the cluster for a lint of b and loads b's files again
// with the live objects after them. It returns the graph and the files to
// report on (the local ones: live objects are only context).
func (s *session) lintGraph(b *bundle, kinds []string) (*graph.Graph, map[string]bool, error) {
	live, err := s.liveFor(b.graph, kinds)
	if err != nil {
		return nil, nil, err
	}
	g := load.Inputs(append(slices.Clip(b.inputs), live...), b.opts)
	memlimit.Fit()
	reported := b.reported
	if reported == nil {
		reported = make(map[string]bool, len(b.inputs))
		for _, in := range b.inputs {
			reported[s.e.canonical(in.Path)] = true
		}
	}
	return g, reported, nil
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
	s, err := o.newSession(e, kt)
	if err != nil {
		return nil, nil, err
	}
	// Only the ReplicaSets Argo Rollouts made: they carry its hash label.
	if err := s.list(lintScopes(planKinds, namespaces, explicit), map[string]string{clusterview.KindReplicaSet: plan.HashLabel}); err != nil {
		return nil, nil, err
	}
	s.finish()
	objs := s.view.Objects()
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

// localOnly makes a result of a lint with the cluster report on the local
// files only: findings on a live object that involve a local file move
// onto it (ontoLocal), those between live objects alone are dropped. It
// says on stderr when the read was partial and returns the report's
// description of the read.
func (s *session) localOnly(res *analyzer.Result) (*analyzer.Result, *report.Cluster) {
	ontoLocal(res)
	kept := make([]rules.Diagnostic, 0, len(res.Diagnostics))
	for _, d := range res.Diagnostics {
		if !graph.IsLive(d.Pos.File) {
			kept = append(kept, d)
		}
	}
	if len(kept) < len(res.Diagnostics) {
		out := &analyzer.Result{Rules: res.Rules, Summary: res.Summary, Err: res.Err, LiveErr: res.LiveErr}
		out.Add(kept...)
		res = out
	}
	s.finish()
	return res, s.report()
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
