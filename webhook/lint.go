package webhook

import (
	"context"
	"fmt"
	"sync"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/live/clusterview"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

// incomingFile is the file name the incoming object is loaded under; findings
// are kept when they land on it or point at it.
const incomingFile = "<admission>"

// Linter lints one incoming object together with the cluster objects it is
// related to, with the same rules, configuration and suppressions as the CLI.
type Linter struct {
	// Rules is the registry (rules/all.Rules() plus user policies).
	Rules  []*rules.Rule
	Config *config.Config
	// Globals are the run-wide rule settings derived from the config.
	Globals rules.Globals
	// View supplies the related cluster objects; nil lints the object alone.
	View *clusterview.View
	// FullDecode loads every object with the full yaml.v3 path, never the
	// fast decoder (load.Options.FullDecode; ROLLOUTLINT_FAST_DECODE=off).
	FullDecode bool

	mu sync.RWMutex // guards Rules, Config, Globals and the selection against Reconfigure
	// sel is the rule selection for selRules and selConfig (the Rules and
	// Config it was made for): made once, not in every review.
	sel       *analyzer.Selection
	selRules  []*rules.Rule
	selConfig *config.Config

	// reload loads every related object from its JSON and selects the rules
	// in every review, as before: the reference the tests compare with.
	reload bool
}

// Reconfigure swaps the rules and configuration used by later reviews (for
// example after the mounted .rolloutlint.yaml changed); reviews in flight
// finish with the previous ones.
func (l *Linter) Reconfigure(rs []*rules.Rule, cfg *config.Config, globals rules.Globals) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.Rules, l.Config, l.Globals = rs, cfg, globals
}

// options are the analyzer's options for a review, with the rule selection
// made once per Rules and Config.
func (l *Linter) options(ctx context.Context) analyzer.Options {
	l.mu.RLock()
	opts := analyzer.Options{Rules: l.Rules, Config: l.Config, Mode: rules.ModeWebhook, Globals: l.Globals, Parallelism: 1, Context: ctx}
	if l.reload { // the reference: selected in Run, as before
		l.mu.RUnlock()
		return opts
	}
	sel := l.sel
	if sel != nil && (l.selConfig != l.Config || !sameRules(l.selRules, l.Rules)) {
		sel = nil
	}
	l.mu.RUnlock()
	if sel == nil {
		sel = analyzer.Prepare(opts)
		l.mu.Lock()
		if l.Config == opts.Config && sameRules(l.Rules, opts.Rules) {
			l.sel, l.selRules, l.selConfig = sel, opts.Rules, opts.Config
		}
		l.mu.Unlock()
	}
	opts.Selection = sel
	return opts
}

// sameRules reports whether a and b are the same slice.
func sameRules(a, b []*rules.Rule) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Prepare loads a cluster object for the reviews it will take part in; set
// it as the view's Prepare (clusterview.View.Prepare) so that an object is
// loaded once per version, on the informer's goroutine, not in every review.
// Objects the view held before are loaded by the first review that needs
// them, and kept.
func (l *Linter) Prepare(o clusterview.Object) any {
	return load.Load(relatedInput(o), load.Options{FullDecode: l.FullDecode})
}

func relatedInput(o clusterview.Object) load.Input {
	return load.Input{Path: o.Key.File(), Data: o.JSON}
}

// Finding is one diagnostic that involves the incoming object.
type Finding struct {
	RuleID   string
	Severity rules.Severity
	// Object is where the finding lands; it is the incoming object unless
	// OnOther is set (a finding on a related object that points back at the
	// incoming one, such as the other Rollout of a shared route).
	Object  clusterview.Key
	OnOther bool
	// Path is the field path on Object.
	Path    string
	Message string
}

// Result is the outcome of linting one object.
type Result struct {
	Findings []Finding
	// Related is how many cluster objects were loaded with the incoming one.
	Related int
}

// Lint lints raw (the object of an AdmissionReview, JSON) of the given
// identity. ns is the request's namespace, used when the object sets none.
// It stops early with ctx's error once ctx is done.
func (l *Linter) Lint(ctx context.Context, self clusterview.Key, ns string, raw []byte, obj map[string]any) (*Result, error) {
	inputs := []load.Input{{Path: incomingFile, Data: raw}}
	var related []clusterview.Object
	if l.View != nil {
		related = l.View.Related(self, obj)
	}
	lopts := load.Options{Namespace: ns, FullDecode: l.FullDecode}
	// The related objects are loaded once per version (the view keeps them
	// loaded) and joined into every review they take part in.
	loaded := make([]*load.Loaded, 0, len(related))
	for _, o := range related {
		if l.reload {
			break
		}
		lo, _ := o.Derived.Load().(*load.Loaded)
		if lo == nil || !lo.Fits(lopts) {
			lo = load.Load(relatedInput(o), lopts)
			o.Derived.Store(lo)
		}
		loaded = append(loaded, lo)
	}
	opts := l.options(ctx)
	var g *graph.Graph
	if l.reload {
		for _, o := range related {
			inputs = append(inputs, relatedInput(o))
		}
		g = load.Inputs(inputs, lopts)
	} else {
		g = load.Join(inputs, loaded, lopts)
	}
	if len(g.Resources) == 0 && len(g.Problems) == 0 {
		return nil, fmt.Errorf("the object of %s could not be loaded", self)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := analyzer.Run(g, opts)
	if res.Err != nil {
		return nil, res.Err
	}
	out := &Result{Related: len(related)}
	for _, d := range res.Active() {
		onSelf := d.Pos.File == incomingFile
		pointsAtSelf := false
		for _, r := range d.Related {
			if r.File == incomingFile {
				pointsAtSelf = true
				break
			}
		}
		if !onSelf && !pointsAtSelf {
			continue
		}
		f := Finding{RuleID: d.RuleID, Severity: d.Severity, Path: d.Path, Message: d.Message, Object: self}
		if !onSelf {
			f.OnOther = true
			f.Object = clusterview.Key{Kind: d.Object.Kind, Namespace: d.Object.Namespace, Name: d.Object.Name}
		}
		out.Findings = append(out.Findings, f)
	}
	return out, nil
}
