// Package analysis holds the RL4xxx rules: AnalysisTemplate references and
// arguments, metric settings Argo Rollouts only checks when a run starts, and
// the Prometheus queries the runs would send (parsed with the real PromQL
// parser after substituting each Rollout's argument values).
package analysis

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
)

// tags every RL4xxx rule carries.
var tags = []string{"analysis"}

// templateKinds are the kinds the template rules read. AnalysisRuns
// committed to the bundle are checked like templates (their spec has the
// same metrics and args).
var templateKinds = []string{kinds.Rollout, kinds.AnalysisTemplate, kinds.ClusterAnalysisTemplate, kinds.AnalysisRun}

// collector merges diagnostics that land on the same spot with the same
// message and detail (a template used by several steps of one Rollout), keeping every
// trigger as a related location, and files them in first-seen order.
type collector struct {
	p     *rules.Pass
	index map[string]int
	diags []rules.Diagnostic
	// seen holds, per merged diagnostic, the related locations it already
	// has, so merging stays linear in the number of triggers (a Rollout of
	// thousands of analysis steps).
	seen []map[rules.Related]struct{}
}

func newCollector(p *rules.Pass) *collector { return &collector{p: p, index: map[string]int{}} }

func (c *collector) add(d rules.Diagnostic) {
	if !d.Pos.IsValid() && d.Resource != nil {
		d.Pos = d.Resource.Pos(d.Path)
	}
	key := fmt.Sprintf("%s:%d:%d\x00%s\x00%s", d.Pos.File, d.Pos.Line, d.Pos.Column, d.Message, d.Detail)
	if i, ok := c.index[key]; ok {
		for _, r := range d.Related {
			if _, dup := c.seen[i][r]; !dup {
				c.seen[i][r] = struct{}{}
				c.diags[i].Related = append(c.diags[i].Related, r)
			}
		}
		return
	}
	c.index[key] = len(c.diags)
	seen := make(map[rules.Related]struct{}, len(d.Related))
	for _, r := range d.Related {
		seen[r] = struct{}{}
	}
	c.diags = append(c.diags, d)
	c.seen = append(c.seen, seen)
}

func (c *collector) flush() {
	for _, d := range c.diags {
		c.p.ReportDiag(d)
	}
}

// mergeSameSpot is the Rule.MergeShards of the rules that report through a
// collector: it merges the shards' diagnostics as one collector over the
// whole graph would have (each shard's come merged already, in first-seen
// order, and the shards in order, so first-seen order and the order of
// the related locations are kept).
func mergeSameSpot(ds []rules.Diagnostic) []rules.Diagnostic {
	c := newCollector(nil)
	for _, d := range ds {
		c.add(d)
	}
	return c.diags
}

// scannedRuns returns the predicted runs of the Rollouts the pass scans
// (Pass.Rollouts), in Rollout order.
func scannedRuns(p *rules.Pass) []*analysisrun.Run {
	return rules.ShardPart(p, analysisrun.Of(p.Graph).Runs, kinds.Rollout, func(r *analysisrun.Run) *graph.Resource { return r.Refs.Rollout })
}

// scannedQueries returns the queries the pass scans, in the order of
// analysisrun.Analysis.Queries: those of its Rollouts' runs, then those of
// its templates no Rollout runs. The slice may be shared: do not modify it.
func scannedQueries(p *rules.Pass) []*analysisrun.Query {
	a := analysisrun.Of(p.Graph)
	if p.Shard().Whole() {
		return a.Queries
	}
	out := rules.ShardPart(p, a.RunQueries(), kinds.Rollout, func(q *analysisrun.Query) *graph.Resource { return q.Run.Refs.Rollout })
	out = out[:len(out):len(out)] // appending copies: out is a run of Queries
	a.UnusedQueries(func(kind string, qs []*analysisrun.Query) {
		out = append(out, rules.ShardPart(p, qs, kind, func(q *analysisrun.Query) *graph.Resource { return q.Template })...)
	})
	return out
}

// trigger is the related location of the Rollout reference that starts a run.
func trigger(run *analysisrun.Run, what string) rules.Related {
	msg := run.Describe() + " runs this template"
	if what != "" {
		msg = run.Describe() + " " + what
	}
	return rules.RelatedAt(run.Refs.Rollout, run.TriggerPath(), msg)
}

// templateSpecs calls fn for every (Cluster)AnalysisTemplate and AnalysisRun
// with a decoded spec that the pass scans (Pass.OfKind: the shard's, for a
// sharded rule).
func templateSpecs(p *rules.Pass, fn func(t *graph.Resource, spec *v1alpha1.AnalysisTemplateSpec)) {
	for _, kind := range []string{kinds.AnalysisTemplate, kinds.ClusterAnalysisTemplate, kinds.AnalysisRun} {
		for _, t := range p.OfKind(kind) {
			if spec := t.AnalysisTemplateSpec(); spec != nil {
				fn(t, spec)
			}
		}
	}
}

// templateName is "AnalysisTemplate x" or "ClusterAnalysisTemplate x".
func templateName(t *graph.Resource) string { return t.Kind + " " + t.Name }

// users returns a related location for every Rollout reference that runs
// template t, for findings about the template alone.
func users(g *graph.Graph, t *graph.Resource) []rules.Related {
	var out []rules.Related
	seen := map[rules.Related]struct{}{}
	for _, u := range g.Refs().TemplateUsers(t) {
		r := rules.RelatedAt(u.Refs.Rollout, u.Ref.Path, fmt.Sprintf("Rollout %s runs this template (%s)", u.Refs.Rollout.Name, useName(u.Ref)))
		if _, dup := seen[r]; !dup {
			seen[r] = struct{}{}
			out = append(out, r)
		}
	}
	return out
}

// useName describes where a Rollout runs a template: "step 2 analysis".
func useName(ref *graph.TemplateRef) string {
	switch ref.Use {
	case graph.UseStep:
		return fmt.Sprintf("step %d analysis", ref.Step)
	case graph.UseExperiment:
		return fmt.Sprintf("step %d experiment", ref.Step)
	}
	return string(ref.Use) + " analysis"
}

// similar reports whether two arg names are close enough to be a typo of
// each other: a prefix of the other, or a few edits apart.
func similar(a, b string) bool {
	if strings.HasPrefix(a, b) || strings.HasPrefix(b, a) {
		return true
	}
	return textdist.Distance(a, b) <= max(3, max(len(a), len(b))/2)
}

// intValue returns an IntOrString's value; ok is false when unset or templated.
func intValue(v *intstr.IntOrString) (int, bool) {
	if v == nil || v.Type == intstr.String && strings.Contains(v.StrVal, "{{") {
		return 0, false
	}
	return v.IntValue(), true
}

// oneProvider reports whether a metric sets exactly one provider: len(providers(mp)) == 1.
func oneProvider(mp *v1alpha1.MetricProvider) bool {
	n := len(mp.Plugin)
	for _, on := range [...]bool{mp.Prometheus != nil, mp.Kayenta != nil, mp.Web != nil, mp.Datadog != nil, mp.Wavefront != nil,
		mp.NewRelic != nil, mp.Job != nil, mp.CloudWatch != nil, mp.Graphite != nil, mp.Influxdb != nil, mp.SkyWalking != nil} {
		if on {
			n++
		}
	}
	return n == 1
}

// providers names the providers a metric sets, in a stable order.
func providers(mp *v1alpha1.MetricProvider) []string {
	var out []string
	set := []struct {
		name string
		on   bool
	}{
		{"prometheus", mp.Prometheus != nil}, {"kayenta", mp.Kayenta != nil}, {"web", mp.Web != nil},
		{"datadog", mp.Datadog != nil}, {"wavefront", mp.Wavefront != nil}, {"newRelic", mp.NewRelic != nil},
		{"job", mp.Job != nil}, {"cloudWatch", mp.CloudWatch != nil}, {"graphite", mp.Graphite != nil},
		{"influxdb", mp.Influxdb != nil}, {"skywalking", mp.SkyWalking != nil},
	}
	for _, s := range set {
		if s.on {
			out = append(out, s.name)
		}
	}
	var plugins []string
	for name := range mp.Plugin {
		plugins = append(plugins, fmt.Sprintf("plugin %s", name))
	}
	sort.Strings(plugins)
	return append(out, plugins...)
}

// firstLine is the first line of an error message (expr errors span several).
func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
