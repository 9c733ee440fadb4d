// Package analysisrun predicts the AnalysisRuns a bundle's Rollouts start: for
// each analysis reference (a step, the background analysis, blue-green pre-
// and post-promotion, an experiment's analysis) the templates it merges and
// the argument values they see, merged the way Argo Rollouts does, and every
// Prometheus query with those values substituted and parsed. It is computed
// once per graph and shared by the RL4xxx rules and the live Prometheus check.
package analysisrun

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/rolloutlint/rolloutlint/internal/parallel"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// Arg is one argument as the AnalysisRun sees it after merging.
type Arg struct {
	Name string
	// Value is the value; Runtime is set when only the controller knows it
	// (valueFrom a secret, the pod template hash, a field of the Rollout).
	Value promql.Value
	// Resolved is false when neither the Rollout nor a template gives a value.
	Resolved bool
	// Template and DeclPath locate the first declaration (spec.args[i]).
	Template  *graph.Resource
	declIndex int
	// FromRollout is set when the Rollout supplies the value; RolloutPath
	// is then its field path (…args[i]).
	FromRollout  bool
	argsPath     string
	rolloutIndex int
	// declValue is set when the merged declaration has a `value`.
	declValue bool
	// Source says where a Rollout-supplied valueFrom value comes from, for
	// messages ("metadata.labels['team'] of the Rollout object, which has no
	// such label"); "" for a plain value.
	Source string
	// Problem is set when the controller cannot build the argument at all
	// (an unsupported fieldPath): it fails to create the run.
	Problem string
	// FieldRefDefault is set when the value is the template's default
	// valueFrom.fieldRef and the Rollout supplies none: the analysis
	// controller resolves only secretKeyRef there, so the run fails with
	// "argument was not supplied".
	FieldRefDefault bool
}

// DeclPath is the field path of the declaration, spec.args[i]: built only
// for a finding, not for every argument of every run.
func (a *Arg) DeclPath() string { return graph.Index("spec.args", a.declIndex) }

// RolloutPath is the field path of the Rollout's value (…args[i]) when
// FromRollout is set.
func (a *Arg) RolloutPath() string {
	if !a.FromRollout {
		return ""
	}
	return graph.Index(a.argsPath, a.rolloutIndex)
}

// Run is one AnalysisRun a Rollout starts.
type Run struct {
	Refs *graph.RolloutRefs
	Use  graph.AnalysisUse
	Step int // step index for step and experiment uses, else -1
	// ArgsPath is the field path of the Rollout args list of this analysis.
	ArgsPath string
	// Templates are the references of this analysis, in order (Target nil
	// when the template is not in the bundle).
	Templates []*graph.TemplateRef
	// Args are the merged arguments in declaration order, one per name (Arg
	// finds one by name).
	Args []Arg
	// byName indexes Args when there are many; a run has a few, which a
	// scan finds faster than a map.
	byName map[string]int
	// Queries are the Prometheus queries this run sends.
	Queries []*Query
	// targets are the distinct templates with a spec (DistinctTemplates).
	targets []*graph.Resource
}

// manyArgs is the length of a list (arguments, template references) from
// which a map indexes it; shorter ones are scanned.
const manyArgs = 8

// Arg returns the merged argument of that name, nil when no template of the
// run declares it.
func (r *Run) Arg(name string) *Arg {
	if r.byName != nil {
		if i, ok := r.byName[name]; ok {
			return &r.Args[i]
		}
		return nil
	}
	for i := range r.Args {
		if r.Args[i].Name == name {
			return &r.Args[i]
		}
	}
	return nil
}

// DistinctTemplates returns the run's templates that are in the bundle, each
// once, in reference order. The slice is shared: read only.
func (r *Run) DistinctTemplates() []*graph.Resource { return r.targets }

// distinctTargets lists the referenced templates that are in the bundle and
// have a spec, each once, in reference order.
func distinctTargets(refs []*graph.TemplateRef) []*graph.Resource {
	var out []*graph.Resource
	var seen map[*graph.Resource]bool // only for long lists: a scan is cheaper
	if len(refs) > manyArgs {
		seen = map[*graph.Resource]bool{}
	}
	for _, ref := range refs {
		t := ref.Target
		if t == nil || t.AnalysisTemplateSpec() == nil {
			continue
		}
		if seen != nil {
			if seen[t] {
				continue
			}
			seen[t] = true
		} else if slices.Contains(out, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// TriggerPath is where the Rollout starts the run: the first templateName.
func (r *Run) TriggerPath() string {
	if len(r.Templates) > 0 {
		return r.Templates[0].Path
	}
	return r.ArgsPath
}

// Describe names the run for messages, e.g. `Rollout app step 2 analysis`.
func (r *Run) Describe() string {
	name := "Rollout " + r.Refs.Rollout.Name
	switch r.Use {
	case graph.UseStep:
		return fmt.Sprintf("%s step %d analysis", name, r.Step)
	case graph.UseExperiment:
		return fmt.Sprintf("%s step %d experiment analysis", name, r.Step)
	case graph.UseBackground:
		return name + " background analysis"
	default:
		return fmt.Sprintf("%s %s analysis", name, r.Use)
	}
}

// Lookup resolves a template tag (`args.<name>`) as this run would; ok is
// false for an undeclared or unresolved argument and for other tags.
func (r *Run) Lookup(tag string) (promql.Value, bool) {
	name, ok := strings.CutPrefix(tag, "args.")
	if !ok {
		return promql.Value{}, false
	}
	a := r.Arg(name)
	if a == nil || !a.Resolved {
		return promql.Value{}, false
	}
	return a.Value, true
}

// Query is one Prometheus query of one metric, as one run (or, for a template
// no Rollout of the bundle uses, the template alone) would send it.
type Query struct {
	Run      *Run // nil for a template without users
	Template *graph.Resource
	Metric   *v1alpha1.Metric
	metric   int // the index of Metric in spec.metrics
	Sub      *promql.Substitution
	// Type is the value type of the parsed query (vector, scalar, …), ""
	// when it does not parse. The syntax tree itself is not kept: every
	// query of the bundle stays in memory until the lint ends, and the rules
	// need only the type and the matchers (promql.Parse(q.Sub.Query) gives
	// the tree back to code that needs more).
	Type parser.ValueType
	Err  *promql.Error // the parse error, offsets in Sub.Query
	// Matchers are the label matchers of the query, offsets in Sub.Query.
	// Err and Matchers come from promql.Summarize and are shared with every
	// query of the same text: read only.
	Matchers []promql.Matcher
}

// MetricPath is the field path of the metric, spec.metrics[i].
func (q *Query) MetricPath() string { return graph.Index("spec.metrics", q.metric) }

// Path is the field path of the query: built only for a finding.
func (q *Query) Path() string { return q.MetricPath() + ".provider.prometheus.query" }

// Parsed reports whether the query, placeholders substituted, is valid PromQL.
func (q *Query) Parsed() bool { return q.Type != "" }

// Analysis is every run and query of a bundle.
type Analysis struct {
	Runs    []*Run
	Queries []*Query
	// runQueries is how many of Queries are the runs' (in Rollout order);
	// the rest are of the templates no Rollout runs, by kind (unusedKinds)
	// and in load order, unused[k] the end of kind k's.
	runQueries int
	unused     [len(unusedKinds)]int
}

// unusedKinds are the kinds whose objects no Rollout runs have queries of
// their own, in the order Queries lists them.
var unusedKinds = [...]string{kinds.AnalysisTemplate, kinds.ClusterAnalysisTemplate, kinds.AnalysisRun}

// RunQueries returns the queries of the runs, in Rollout order (each
// Query.Run.Refs.Rollout in the order of Graph.OfKind(kinds.Rollout)).
func (a *Analysis) RunQueries() []*Query { return a.Queries[:a.runQueries] }

// UnusedQueries calls fn with each kind of template and the queries of its
// objects no Rollout runs (Query.Run nil), in the order of
// Graph.OfKind(kind): the rest of Queries.
func (a *Analysis) UnusedQueries(fn func(kind string, qs []*Query)) {
	from := a.runQueries
	for k, kind := range unusedKinds {
		fn(kind, a.Queries[from:a.unused[k]])
		from = a.unused[k]
	}
}

// analyses memoizes Of.
var analyses = graph.NewMemo[*Analysis]("analysisrun.Of")

// Of returns the analysis of a graph, computed once.
func Of(g *graph.Graph) *Analysis {
	return analyses.Get(g, func() *Analysis { return build(g) })
}

// build predicts every run and parses every query. The Rollouts are
// independent, so they are worked on every CPU (parsing the queries is most
// of the cost), and the results are joined in Rollout order.
func build(g *graph.Graph) *Analysis {
	rollouts := g.Refs().Rollouts
	phs := placeholdersOf(g)
	byRollout := make([][]*Run, len(rollouts))
	parallel.For(len(rollouts), 32, func(i int) {
		runs := runsOf(rollouts[i])
		for _, run := range runs {
			for _, t := range run.targets {
				run.Queries = queriesOf(run.Queries, t, run, run.Lookup, phs)
			}
		}
		byRollout[i] = runs
	})
	a := &Analysis{}
	used := map[*graph.Resource]bool{}
	for _, runs := range byRollout {
		for _, run := range runs {
			a.Runs = append(a.Runs, run)
			a.Queries = append(a.Queries, run.Queries...)
			for _, t := range run.Templates {
				if t.Target != nil {
					used[t.Target] = true
				}
			}
		}
	}
	a.runQueries = len(a.Queries)
	var unused []*graph.Resource
	var ends [len(unusedKinds)]int // of each kind's objects in unused
	// AnalysisRuns committed to the bundle are checked like templates no
	// Rollout runs, with their own argument values.
	for k, kind := range unusedKinds {
		for _, t := range g.OfKind(kind) {
			if !used[t] {
				unused = append(unused, t)
			}
		}
		ends[k] = len(unused)
	}
	alone := make([][]*Query, len(unused))
	parallel.For(len(unused), 32, func(i int) { alone[i] = queriesOf(nil, unused[i], nil, defaultsLookup(unused[i]), phs) })
	k := 0
	for i, qs := range alone {
		for ; i == ends[k]; k++ {
			a.unused[k] = len(a.Queries)
		}
		a.Queries = append(a.Queries, qs...)
	}
	for ; k < len(unusedKinds); k++ {
		a.unused[k] = len(a.Queries)
	}
	return a
}

// runsOf groups a Rollout's template references into runs: references that
// share an args list belong to one analysis.
func runsOf(rr *graph.RolloutRefs) []*Run {
	var out []*Run
	byArgs := map[string]*Run{}
	for i := range rr.Templates {
		t := &rr.Templates[i]
		run := byArgs[t.ArgsPath]
		if run == nil {
			run = &Run{Refs: rr, Use: t.Use, Step: t.Step, ArgsPath: t.ArgsPath}
			byArgs[t.ArgsPath] = run
			out = append(out, run)
		}
		run.Templates = append(run.Templates, t)
	}
	for _, run := range out {
		run.targets = distinctTargets(run.Templates)
		mergeArgs(run)
	}
	return out
}

// mergeArgs follows Argo Rollouts: the templates' args are flattened (a
// declaration without a value gives way to a later one of the same name; two
// different values are RL4004's business and the first is kept here), then every declared arg the Rollout names takes the Rollout's
// value, the last one when a name repeats. Rollout args no template declares
// are ignored, as Argo ignores them.
func mergeArgs(run *Run) {
	n := 0
	for _, t := range run.targets {
		n += len(t.AnalysisTemplateSpec().Args)
	}
	run.Args = make([]Arg, 0, n)
	if n > manyArgs {
		run.byName = make(map[string]int, n)
	}
	for _, t := range run.targets {
		for i, ta := range t.AnalysisTemplateSpec().Args {
			prev := run.Arg(ta.Name)
			if prev != nil && prev.declValue {
				continue // a declaration with a value is never replaced
			}
			a := Arg{Name: ta.Name, Template: t, declIndex: i, declValue: ta.Value != nil}
			switch {
			case ta.Value != nil:
				a.Value, a.Resolved = promql.Value{Text: *ta.Value}, true
			case ta.ValueFrom != nil:
				a.Value, a.Resolved = promql.Value{Runtime: true}, true
				a.FieldRefDefault = ta.ValueFrom.SecretKeyRef == nil && ta.ValueFrom.FieldRef != nil
			}
			if prev != nil {
				*prev = a // keeps its place in declaration order
				continue
			}
			if run.byName != nil {
				run.byName[ta.Name] = len(run.Args)
			}
			run.Args = append(run.Args, a)
		}
	}
	// Each Rollout arg overwrites in turn, so the last of duplicate names wins.
	for i, ra := range run.Templates[0].Args {
		a := run.Arg(ra.Name)
		if a == nil {
			continue
		}
		a.Value, a.Source, a.Problem = rolloutValue(run.Refs.Rollout, run.Refs.Spec, ra)
		a.Resolved, a.FieldRefDefault = true, false
		a.FromRollout, a.argsPath, a.rolloutIndex = true, run.ArgsPath, i
	}
}

// rolloutValue is a Rollout arg's value as the controller builds it
// (utils/analysis BuildArgumentsForRolloutAnalysisRun): value as written
// (a missing value is the empty string, since the field is a plain string);
// a fieldRef under metadata read from the Rollout object itself — its own
// name, namespace, labels and annotations, not its pod template's — a
// missing label or annotation giving the empty string; any other fieldRef
// read from the Rollout's JSON; the pod template hash only at run time.
// source describes a valueFrom value for messages; problem says why the
// controller cannot build the argument, when it cannot.
func rolloutValue(r *graph.Resource, ro *v1alpha1.Rollout, ra v1alpha1.AnalysisRunArgument) (v promql.Value, source, problem string) {
	vf := ra.ValueFrom
	switch {
	case vf == nil:
		return promql.Value{Text: ra.Value}, "", ""
	case vf.PodTemplateHashValue != nil:
		return promql.Value{Runtime: true}, "", ""
	case vf.FieldRef == nil:
		return promql.Value{Text: ra.Value}, "", ""
	}
	path := vf.FieldRef.FieldPath
	if strings.HasPrefix(path, "metadata") {
		return metadataValue(r, ro, path)
	}
	return jsonPathValue(ro, path)
}

// metadataValue reads a metadata fieldPath of the Rollout object the way
// Kubernetes' fieldpath.ExtractFieldPathAsString does.
func metadataValue(r *graph.Resource, ro *v1alpha1.Rollout, path string) (promql.Value, string, string) {
	src := path + " of the Rollout object"
	if base, key, ok := subscript(path); ok {
		var m map[string]string
		switch base {
		case "metadata.labels":
			m = ro.Labels
		case "metadata.annotations":
			m = ro.Annotations
		default:
			return promql.Value{Runtime: true}, src, fmt.Sprintf("fieldPath %q does not support a subscript", path)
		}
		v, ok := m[key]
		if !ok {
			what := "label"
			if base == "metadata.annotations" {
				what = "annotation"
			}
			src += fmt.Sprintf(", which has no %s %s (the pod template's labels are not read)", what, key)
		}
		return promql.Value{Text: v}, src, ""
	}
	switch path {
	case "metadata.name":
		return promql.Value{Text: r.Name}, src, ""
	case "metadata.namespace":
		return promql.Value{Text: r.Namespace}, src, ""
	case "metadata.uid":
		return promql.Value{Runtime: true}, src, ""
	case "metadata.labels", "metadata.annotations":
		return promql.Value{Runtime: true}, src, ""
	}
	return promql.Value{Runtime: true}, src, fmt.Sprintf("unsupported fieldPath %q", path)
}

// subscript splits "metadata.labels['key']" into its base and key.
func subscript(path string) (base, key string, ok bool) {
	open := strings.Index(path, "['")
	if open < 0 || !strings.HasSuffix(path, "']") || open+2 > len(path)-2 {
		return "", "", false
	}
	return path[:open], path[open+2 : len(path)-2], true
}

// jsonPathValue reads a non-metadata fieldPath from the Rollout's JSON as
// the controller does (extractValueFromRollout: sections split at dots and
// brackets, numbers index lists, the end must be a scalar). Status fields
// exist only in the cluster.
func jsonPathValue(ro *v1alpha1.Rollout, path string) (promql.Value, string, string) {
	src := path + " of the Rollout"
	if strings.HasPrefix(path, "status") {
		return promql.Value{Runtime: true}, src, ""
	}
	data, err := json.Marshal(ro)
	if err != nil {
		return promql.Value{Runtime: true}, src, ""
	}
	var cur any
	if err := json.Unmarshal(data, &cur); err != nil {
		return promql.Value{Runtime: true}, src, ""
	}
	for _, sec := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
		switch c := cur.(type) {
		case []any:
			i, err := strconv.Atoi(sec)
			if err != nil || i < 0 || i >= len(c) {
				return promql.Value{Runtime: true}, src, fmt.Sprintf("invalid path %s in the Rollout", path)
			}
			cur = c[i]
		case map[string]any:
			cur = c[sec]
		default:
			return promql.Value{Runtime: true}, src, fmt.Sprintf("invalid path %s in the Rollout", path)
		}
	}
	switch cur.(type) {
	case nil:
		return promql.Value{Runtime: true}, src, fmt.Sprintf("invalid path %s in the Rollout", path)
	case []any, map[string]any:
		return promql.Value{Runtime: true}, src, fmt.Sprintf("path %s in the Rollout must end in a scalar", path)
	}
	return promql.Value{Text: fmt.Sprintf("%v", cur)}, src, ""
}

// defaultsLookup resolves tags from a template's own defaults, for templates
// no Rollout of the bundle runs.
func defaultsLookup(t *graph.Resource) func(string) (promql.Value, bool) {
	vals := map[string]promql.Value{}
	if spec := t.AnalysisTemplateSpec(); spec != nil {
		for _, a := range spec.Args {
			switch {
			case a.Value != nil:
				vals[a.Name] = promql.Value{Text: *a.Value}
			case a.ValueFrom != nil:
				vals[a.Name] = promql.Value{Runtime: true}
			}
		}
	}
	return func(tag string) (promql.Value, bool) {
		name, ok := strings.CutPrefix(tag, "args.")
		if !ok {
			return promql.Value{}, false
		}
		v, ok := vals[name]
		return v, ok
	}
}

// queryPlaceholders holds the placeholders of every template query text of
// a bundle: Rollouts run copies of one template, so a lint sees a few texts
// many times over. It is filled before the parallel work and only read by it.
type queryPlaceholders map[string][]promql.Placeholder

// placeholdersOf finds the placeholders of every query text of g once.
func placeholdersOf(g *graph.Graph) queryPlaceholders {
	phs := queryPlaceholders{}
	for _, kind := range []string{kinds.AnalysisTemplate, kinds.ClusterAnalysisTemplate, kinds.AnalysisRun} {
		for _, t := range g.OfKind(kind) {
			spec := t.AnalysisTemplateSpec()
			if spec == nil {
				continue
			}
			for i := range spec.Metrics {
				if p := spec.Metrics[i].Provider.Prometheus; p != nil {
					if _, ok := phs[p.Query]; !ok {
						phs[p.Query] = promql.Placeholders(p.Query)
					}
				}
			}
		}
	}
	return phs
}

// queriesOf appends to out the Prometheus queries of template t as run (nil
// for a template alone) sends them.
func queriesOf(out []*Query, t *graph.Resource, run *Run, lookup func(string) (promql.Value, bool), phs queryPlaceholders) []*Query {
	spec := t.AnalysisTemplateSpec()
	if spec == nil {
		return out
	}
	for i := range spec.Metrics {
		m := &spec.Metrics[i]
		p := m.Provider.Prometheus
		if p == nil || strings.TrimSpace(p.Query) == "" {
			continue
		}
		q := &Query{Run: run, Template: t, Metric: m, metric: i}
		if ph, ok := phs[p.Query]; ok {
			q.Sub = promql.SubstitutePlaceholders(p.Query, ph, lookup)
		} else {
			q.Sub = promql.Substitute(p.Query, lookup)
		}
		// Shared with every query of the same text (a template reviewed
		// again, Rollouts passing the same arguments): read only.
		sum := promql.SummarizeSubstitution(q.Sub)
		q.Type, q.Err, q.Matchers = sum.Type, sum.Err, sum.Matchers
		out = append(out, q)
	}
	return out
}
