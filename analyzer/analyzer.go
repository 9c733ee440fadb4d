// Package analyzer is the driver: it runs the enabled rules over one graph,
// applies configuration and suppressions, and returns sorted findings.
package analyzer

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// IDs of the findings the driver itself produces.
const (
	RuleSuppressionNoReason = "RL0007"
	RuleSuppressionUnused   = "RL0008"
	RuleInternal            = "RL0009"
)

// IgnoreAnnotation suppresses rules on one object: "RL2003,RL5001 -- reason".
const IgnoreAnnotation = graph.AnnotationPrefix + "ignore"

// Options select and configure rules.
type Options struct {
	// Rules is the registry to choose from (rules/all.Rules() plus user policies).
	Rules  []*rules.Rule
	Config *config.Config
	// Enable turns rules (IDs or globs) back on after the config; Disable turns
	// them off. Disable wins over Enable for the same rule.
	Enable, Disable []string
	Mode            rules.Mode
	// Globals are passed to every rule.
	Globals rules.Globals
	// Live is the running systems the live rules (rules.SourceLive) may ask;
	// nil leaves those rules off, as if the config disabled them.
	Live *rules.Live
	// Parallelism bounds concurrent rules within a stage (see Run). 0 starts
	// every rule of the stage at once and lets the Go scheduler share the
	// GOMAXPROCS threads among them: a bound of GOMAXPROCS left cores idle
	// while rules waited for a computation another rule was doing for them
	// all (graph.Memo, the Rego input). A graph of at most serialObjects
	// objects, linted without live systems, runs its rules one at a time
	// instead.
	Parallelism int
	// Context, when set, stops the lint early once it is done: rules not yet
	// started are skipped, Rego evaluations are interrupted and Go rules may
	// return early (rules.Pass.Context). The result then has Err set and its
	// findings are incomplete.
	Context context.Context
	// ShardSize sets how the sharded Go rules (rules.Rule.Sharded) run.
	// 0, the default, runs them shard by shard, shards of about
	// defaultShardSize objects, on a graph of at least shardObjects
	// objects, and over the whole graph on a smaller one; a positive size
	// shards every graph into shards of about that many objects (the tests
	// use 1: each object alone); a negative one never shards. The findings
	// are the same either way: it changes only the order the objects are
	// visited in, and so how well they stay in the CPU caches.
	ShardSize int
	// Selection, when set, is Prepare's answer for these options (the
	// webhook lints every review with the same ones): Run takes its rules
	// and settings instead of selecting them again.
	Selection *Selection
}

// Selection is the rules Select enables and their settings, with each
// rule's options completed with its declared defaults (rules.WithDefaults),
// for many runs with the same Rules, Config, Enable, Disable and Live.
type Selection struct {
	enabled  []*rules.Rule
	settings map[string]config.Setting
}

// Prepare selects the rules for opts once (see Options.Selection).
func Prepare(opts Options) *Selection {
	enabled, settings := Select(opts)
	for _, r := range enabled {
		s := settings[r.ID]
		s.Options = rules.WithDefaults(r, s.Options)
		settings[r.ID] = s
	}
	return &Selection{enabled: enabled, settings: settings}
}

// Summary counts findings by severity; suppressed ones are counted apart.
type Summary struct {
	Errors     int `json:"errors"`
	Warnings   int `json:"warnings"`
	Infos      int `json:"infos"`
	Suppressed int `json:"suppressed"`
	Files      int `json:"files"`
	Objects    int `json:"objects"`
	Rules      int `json:"rules"`
}

// Result is the outcome of one lint.
type Result struct {
	// Diagnostics are sorted by file, line, column and rule; suppressed ones
	// are included with Suppressed set.
	Diagnostics []rules.Diagnostic
	Summary     Summary
	// Rules are the enabled rules, sorted by ID.
	Rules []*rules.Rule

	graph *graph.Graph // the linted graph, whose Mapper Add applies too
	// Err is Options.Context's error when the lint was stopped before every
	// rule had run; Diagnostics are then incomplete.
	Err error
	// LiveErr is set when a live rule could not reach its system (an error
	// wrapping rules.ErrUnreachable); that rule's findings are missing and
	// the caller should fail the run.
	LiveErr error
}

// Active returns the diagnostics that are not suppressed.
func (r *Result) Active() []rules.Diagnostic {
	out := make([]rules.Diagnostic, 0, len(r.Diagnostics))
	for _, d := range r.Diagnostics {
		if d.Suppressed == nil {
			out = append(out, d)
		}
	}
	return out
}

// Fails reports whether an active finding is at or above level.
func (r *Result) Fails(level rules.Severity) bool {
	for _, d := range r.Diagnostics {
		if d.Suppressed == nil && d.Severity >= level {
			return true
		}
	}
	return false
}

// Select returns the rules enabled by config and flags, sorted by ID, with their settings.
func Select(opts Options) ([]*rules.Rule, map[string]config.Setting) {
	settings := map[string]config.Setting{}
	var out []*rules.Rule
	for _, r := range opts.Rules {
		s := opts.Config.For(r.ID)
		if r.OptIn && !s.Explicit {
			s.Enabled = false
		}
		for _, p := range opts.Enable {
			if config.MatchRule(p, r.ID) {
				s.Enabled = true
			}
		}
		for _, p := range opts.Disable {
			if config.MatchRule(p, r.ID) {
				s.Enabled = false
			}
		}
		if r.Source == rules.SourceLive && opts.Live == nil {
			s.Enabled = false // nothing to ask
		}
		settings[r.ID] = s
		if s.Enabled {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, settings
}

// Run lints a graph.
//
// The rules run in two stages: first the Go rules (with the live rules,
// which share their memos and overlap their network waits with them), then
// the Rego policies.
// The Go rules share computations (the predicted AnalysisRuns, the step
// plans) through graph memos, and the policies share one large conversion of
// the bundle into OPA values; between the stages the graph forgets what the
// Go rules memoized, so the two never sit in memory together. On a large bundle that is
// what bounds the peak memory of a lint. The Go rules go first because the
// policies' input is held a little longer than its last use (OPA pools its
// evaluation state), while the Go rules' memos are freed at once.
func Run(g *graph.Graph, opts Options) *Result {
	var (
		enabled  []*rules.Rule
		settings map[string]config.Setting
	)
	if opts.Selection != nil {
		enabled, settings = opts.Selection.enabled, opts.Selection.settings
	} else {
		enabled, settings = Select(opts)
	}
	perRule := make([][]rules.Diagnostic, len(enabled))
	liveErrs := make([]error, len(enabled))
	isGo := func(r *rules.Rule) bool { return r.Source == rules.SourceGo || r.Source == rules.SourceLive }
	isPolicy := func(r *rules.Rule) bool { return !isGo(r) }
	for _, r := range enabled {
		if r.Prepare != nil && isPolicy(r) {
			go r.Prepare(g, opts.Globals) // compiles while the Go rules run
		}
	}
	mark := g.MemoMark()
	runStage(g, enabled, isGo, settings, opts, perRule, liveErrs)
	g.ForgetMemosSince(mark)
	runStage(g, enabled, isPolicy, settings, opts, perRule, liveErrs)
	var diags []rules.Diagnostic
	for _, ds := range perRule {
		for i := range ds {
			if !followsFromDecoding(&ds[i]) {
				diags = append(diags, ds[i])
			}
		}
	}
	mapToUserFiles(g, diags)
	byID := map[string]*rules.Rule{}
	for _, r := range opts.Rules {
		byID[r.ID] = r
	}
	diags = append(diags, suppress(g, diags, byID, settings)...)
	sort.SliceStable(diags, func(i, j int) bool { return rules.Less(&diags[i], &diags[j]) })
	res := &Result{Diagnostics: dedupe(diags), Rules: enabled, graph: g}
	res.Summary = summarize(g, res)
	if opts.Context != nil {
		res.Err = opts.Context.Err()
	}
	for _, err := range liveErrs {
		if err != nil {
			res.LiveErr = err
			break
		}
	}
	return res
}

// serialObjects is the largest graph whose rules run one after another on
// the caller's goroutine when Options.Parallelism is 0: on a pre-commit
// bundle each rule is done in microseconds, and a goroutine per rule (about
// a hundred, each growing its stack anew) cost more than the rules
// (11 objects: 1.3-2 ms of a 25-30 ms lint's CPU; 110 objects: 1.8 ms). Live
// rules ask running systems and stay concurrent.
const serialObjects = 128

// runStage runs the enabled rules that belong to a stage, at most
// opts.Parallelism at once, and stores each rule's diagnostics (and a live
// rule's unreachable system) at its index. On a graph large enough to be
// sharded (shardCount), the stage's sharded rules run first, shard by
// shard (runSharded), then the others.
func runStage(g *graph.Graph, enabled []*rules.Rule, inStage func(*rules.Rule) bool, settings map[string]config.Setting, opts Options, perRule [][]rules.Diagnostic, liveErrs []error) {
	par := opts.Parallelism
	if par <= 0 {
		par = max(len(enabled), 1)
		if len(g.Resources) <= serialObjects && opts.Live == nil {
			par = 1
		}
	}
	if n := shardCount(len(g.Resources), opts.ShardSize); n > 1 {
		var sharded []int
		for i, r := range enabled {
			if inStage(r) && shardable(r) {
				sharded = append(sharded, i)
			}
		}
		if len(sharded) > 0 {
			runSharded(g, enabled, sharded, n, par, settings, opts, perRule)
			isSharded := make(map[*rules.Rule]bool, len(sharded))
			for _, i := range sharded {
				isSharded[enabled[i]] = true
			}
			outer := inStage
			inStage = func(r *rules.Rule) bool { return outer(r) && !isSharded[r] }
		}
	}
	if par == 1 {
		// One at a time (the webhook, whose reviews are the parallelism):
		// on this goroutine, sparing a goroutine, a wake-up and a
		// semaphore round trip per rule.
		for i, r := range enabled {
			if !inStage(r) {
				continue
			}
			if opts.Context != nil && opts.Context.Err() != nil {
				break // abandoned: Run reports the context's error
			}
			perRule[i], liveErrs[i] = runRule(g, r, settings[r.ID], opts)
		}
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	for i, r := range enabled {
		if !inStage(r) {
			continue
		}
		sem <- struct{}{}
		if opts.Context != nil && opts.Context.Err() != nil {
			<-sem
			break // abandoned: Run reports the context's error
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			perRule[i], liveErrs[i] = runRule(g, r, settings[r.ID], opts)
		}()
	}
	wg.Wait()
}

// runRule runs one rule. A rule's error or panic becomes an RL0009 finding,
// except a live rule's unreachable system, which is returned.
func runRule(g *graph.Graph, r *rules.Rule, s config.Setting, opts Options) (out []rules.Diagnostic, liveErr error) {
	out, liveErr, _ = runPass(g, r, s, opts, rules.Shard{})
	return out, liveErr
}

// runPass runs one rule over a shard of the graph (the zero Shard: all of
// it). failed is set when the rule broke: its last diagnostic is then the
// RL0009 finding.
func runPass(g *graph.Graph, r *rules.Rule, s config.Setting, opts Options, shard rules.Shard) (out []rules.Diagnostic, liveErr error, failed bool) {
	report := func(d rules.Diagnostic) {
		if s.Severity != 0 {
			d.Severity = s.Severity
		}
		out = append(out, d)
	}
	pass := rules.NewPass(g, r, s.Options, opts.Mode, opts.Globals, report).WithShard(shard)
	if opts.Context != nil {
		pass.WithContext(opts.Context)
	}
	if r.Source == rules.SourceLive {
		pass.Live = opts.Live
	}
	defer func() {
		if p := recover(); p != nil {
			out = append(out, internalError(g, r, fmt.Sprintf("panic: %v", p), "Its findings are missing. "+firstFrames(debug.Stack())))
			failed = true
		}
	}()
	if err := r.Run(pass); err != nil {
		if opts.Context != nil && opts.Context.Err() != nil {
			return nil, nil, false // stopped because the lint was abandoned, not broken
		}
		if r.Source == rules.SourceLive && errors.Is(err, rules.ErrUnreachable) {
			return out, err, false
		}
		out = append(out, internalError(g, r, err.Error(), ""))
		return out, nil, true
	}
	return out, nil, false
}

// internalError reports a rule that broke — at the user policy's definition,
// or for a built-in rule at the start of the first file — so that the other
// rules' findings still stand and the failure is visible.
func internalError(g *graph.Graph, r *rules.Rule, msg, detail string) rules.Diagnostic {
	if detail == "" {
		detail = "Its findings are missing; the other rules' findings stand."
	}
	pos := r.Defined
	if !pos.IsValid() { // a built-in rule: no user file to point at
		pos = graph.Position{File: "<bundle>", Line: 1, Column: 1, EndLine: 1, EndColumn: 1}
		if len(g.Files) > 0 {
			pos.File = g.Files[0].Path
		}
	}
	return rules.Diagnostic{RuleID: RuleInternal, Name: "internal-error", Severity: rules.Error, Pos: pos,
		Message: fmt.Sprintf("rule %s (%s) failed: %s", r.ID, r.Name, msg), Detail: detail}
}

func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	if len(lines) > 12 {
		lines = lines[:12]
	}
	return strings.Join(lines, "\n")
}

// dedupe drops exact duplicates (same rule, position, message and detail), which
// arise when two references lead a rule to the same field.
func dedupe(ds []rules.Diagnostic) []rules.Diagnostic {
	out := ds[:0]
	for i, d := range ds {
		if i > 0 {
			p := out[len(out)-1]
			if p.RuleID == d.RuleID && p.Pos == d.Pos && p.Message == d.Message && p.Detail == d.Detail {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

func summarize(g *graph.Graph, res *Result) Summary {
	return Summary{Files: g.UserFiles(), Objects: len(g.Resources), Rules: len(res.Rules)}.Recount(res.Diagnostics)
}

// Only returns a copy of the result restricted to diagnostics that involve
// files (compared after key): their own file is in files, or one of their
// related locations is (a VirtualService changed alone can break the Rollout
// that names its route; that finding must not be hidden because it sits in
// the unchanged Rollout). The summary is recomputed.
func (r *Result) Only(files map[string]bool, key func(string) string) *Result {
	out := &Result{Rules: r.Rules, Summary: Summary{Files: len(files), Objects: r.Summary.Objects, Rules: r.Summary.Rules}}
	involves := func(d *rules.Diagnostic) bool {
		if files[key(d.Pos.File)] {
			return true
		}
		for _, rel := range d.Related {
			if files[key(rel.File)] {
				return true
			}
		}
		return false
	}
	for i := range r.Diagnostics {
		if involves(&r.Diagnostics[i]) {
			out.Diagnostics = append(out.Diagnostics, r.Diagnostics[i])
		}
	}
	out.Summary = out.Summary.Recount(out.Diagnostics)
	return out
}

// Recount returns s with the counts by severity (and of suppressed
// findings) taken from ds, its other fields unchanged.
func (s Summary) Recount(ds []rules.Diagnostic) Summary {
	s.Errors, s.Warnings, s.Infos, s.Suppressed = 0, 0, 0, 0
	for _, d := range ds {
		switch {
		case d.Suppressed != nil:
			s.Suppressed++
		case d.Severity == rules.Error:
			s.Errors++
		case d.Severity == rules.Warning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	return s
}

// Add appends findings produced outside the rules (for example live
// Prometheus checks), keeping the order and the summary right.
func (r *Result) Add(ds ...rules.Diagnostic) {
	for _, d := range ds {
		for i := range d.Related {
			d.Related[i].Resolve()
		}
	}
	if r.graph != nil {
		mapToUserFiles(r.graph, ds)
	}
	r.Diagnostics = append(r.Diagnostics, ds...)
	sort.SliceStable(r.Diagnostics, func(i, j int) bool { return rules.Less(&r.Diagnostics[i], &r.Diagnostics[j]) })
	r.Summary = r.Summary.Recount(r.Diagnostics)
}
