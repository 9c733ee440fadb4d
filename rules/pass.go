package rules

import (
	"context"
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// Options are a rule's settings from .rolloutlint.yaml (`rules.RLxxxx.options`).
type Options map[string]any

// String returns a string option, or def.
func (o Options) String(key, def string) string {
	if v, ok := o[key].(string); ok {
		return v
	}
	return def
}

// Bool returns a boolean option, or def.
func (o Options) Bool(key string, def bool) bool {
	if v, ok := o[key].(bool); ok {
		return v
	}
	return def
}

// Strings returns a string-list option, or def.
func (o Options) Strings(key string, def []string) []string {
	if l, ok := o[key].([]string); ok { // a declared default
		return l
	}
	raw, ok := o[key].([]any)
	if !ok {
		return def
	}
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Globals are run-wide settings rules may read (from flags and config).
type Globals struct {
	// IstioVersion selects the xDS model ("1.28" default, "1.30", "1.31").
	IstioVersion string
	// ArgoCD is true when the config says the bundle is deployed by Argo CD
	// even though no Application is in it.
	ArgoCD bool
	// DuplicatesByDirectory is set for a bundle of directories applied one
	// at a time (a repository lint's plain directories, linted together for
	// their references): an object defined twice is a duplicate (RL0013)
	// only within one directory.
	DuplicatesByDirectory bool
}

// Pass is what a rule sees: the graph, its own options, and a way to report
// (go/analysis's Pass is the model). A rule never does I/O, never prints,
// never exits.
type Pass struct {
	// Graph is the loaded bundle: every object, indexed by kind and identity,
	// with cross-object references resolved. It is shared by the rules that
	// run concurrently and must not be modified; work several rules need can
	// be shared through graph.Memo.
	Graph *graph.Graph
	// Rule is the rule being run (its ID, name and default severity fill in
	// the diagnostics it reports).
	Rule *Rule
	// Options are the rule's settings from the config, checked against
	// Rule.Options when the config was read, with the declared defaults
	// filled in for keys the config leaves out. Never modify them.
	Options Options
	// Mode tells rules in which setting they run, so that a few can adapt
	// (for example "referenced object missing" is softer in the webhook,
	// where creation order is arbitrary).
	Mode Mode
	// Globals are the run-wide settings (Istio version, Argo CD deployment).
	Globals Globals
	// Live is the running systems the run was given (see SourceLive); the
	// driver sets it for live rules only, which run only when it is non-nil.
	Live *Live

	report func(Diagnostic)
	ctx    context.Context
	shard  Shard // the part of the graph a sharded rule scans (see WithShard)
}

// Mode is the setting a lint runs in.
type Mode string

// Modes.
const (
	ModeCLI     Mode = "cli"
	ModeWebhook Mode = "webhook"
)

// NewPass creates a pass that hands diagnostics to report. The analyzer and
// the test harness are its only callers. Options the config leaves out get
// the defaults the rule declares.
func NewPass(g *graph.Graph, r *Rule, opts Options, mode Mode, globals Globals, report func(Diagnostic)) *Pass {
	return &Pass{Graph: g, Rule: r, Options: WithDefaults(r, opts), Mode: mode, Globals: globals, report: report}
}

// WithDefaults returns opts with the defaults r declares for the options
// opts leaves out: opts itself when it sets them all (or r declares none),
// else a new map. Options completed once pass through NewPass unchanged.
func WithDefaults(r *Rule, opts Options) Options {
	for _, o := range r.Options {
		if _, set := opts[o.Name]; set || o.Default == nil {
			continue
		}
		merged := make(Options, len(opts)+len(r.Options))
		for k, v := range opts {
			merged[k] = v
		}
		for _, d := range r.Options {
			if _, set := merged[d.Name]; !set && d.Default != nil {
				merged[d.Name] = d.Default
			}
		}
		return merged
	}
	return opts
}

// Report files a diagnostic at a field of a resource, with the rule's default
// severity, and returns nothing: chaining options go through ReportDiag.
func (p *Pass) Report(res *graph.Resource, path, message string, related ...Related) {
	p.ReportDiag(Diagnostic{Resource: res, Path: path, Message: message, Related: related})
}

// ReportDetail is Report with a detail: message says what is wrong in one
// short sentence, detail what follows from it and how to fix it (see
// Diagnostic.Detail).
func (p *Pass) ReportDetail(res *graph.Resource, path, message, detail string, related ...Related) {
	p.ReportDiag(Diagnostic{Resource: res, Path: path, Message: message, Detail: detail, Related: related})
}

// Reportf is Report with formatting.
func (p *Pass) Reportf(res *graph.Resource, path, format string, args ...any) {
	p.Report(res, path, fmt.Sprintf(format, args...))
}

// ReportDiag files a fully specified diagnostic. Missing pieces are filled in:
// the rule ID and name, the default severity, the position from Resource+Path
// and the object reference.
func (p *Pass) ReportDiag(d Diagnostic) {
	d.RuleID, d.Name = p.Rule.ID, p.Rule.Name
	if d.Severity == 0 {
		d.Severity = p.Rule.Severity
	}
	if d.Resource != nil {
		if !d.Pos.IsValid() {
			d.Pos = d.Resource.Pos(d.Path)
		}
		d.Object = d.Resource.Ref()
	}
	if len(d.Related) > 0 {
		related := make([]Related, len(d.Related)) // callers may share the slice
		copy(related, d.Related)
		for i := range related {
			related[i].Resolve()
		}
		d.Related = related
	}
	p.report(d)
}
