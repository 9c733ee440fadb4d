package policies

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DefaultTimeout bounds one policy's evaluation over one bundle. A policy
// that runs longer (a runaway iteration) is stopped and reported as RL0009;
// the other rules still report. The rule option `timeout` (a Go duration such
// as "500ms") overrides it per rule.
const DefaultTimeout = 10 * time.Second

// run evaluates the policy over the pass's graph and reports its violations,
// unless the bundle fails the policy's requirement (custom.requires), which
// means the policy cannot report anything on it.
func (p *policy) run(pass *rules.Pass) error {
	if !p.requires.met(pass.Graph, pass.Globals) {
		return nil
	}
	return p.evaluate(pass)
}

// evaluate evaluates the policy whatever its requirement says; a built-in
// policy is compiled first if it is not yet, with the others the bundle needs.
func (p *policy) evaluate(pass *rules.Pass) error {
	if p.lazy && !p.ready.Load() {
		err := compileBuiltinSet(func(q *policy) bool { return q == p || q.requires.met(pass.Graph, pass.Globals) })
		if err != nil {
			return err
		}
	}
	timeout := DefaultTimeout
	if s := pass.Options.String("timeout", ""); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("policy %s: option timeout %q is not a positive duration", p.pkg, s)
		}
		timeout = d
	}
	bound := uint64(DefaultMemory)
	if s := pass.Options.String("memory", ""); s != "" {
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() <= 0 {
			return fmt.Errorf("policy %s: option memory %q is not a positive quantity such as 512Mi", p.pkg, s)
		}
		bound = uint64(q.Value())
	}
	bi := inputFor(pass.Graph, p.input, p.fields, p.templates, p.parts)
	in := bi.value(pass.Globals, pass.Mode)
	// rolloutlint.resource builds the items of this input from its conversion.
	ctx := context.WithValue(pass.Context(), evalInputKey{}, &evalInput{root: in, bundle: bi.conv})
	ctx = context.WithValue(ctx, evalBoundKey{}, bound) // the size guards refuse a call past it (bounds.go)
	rs, err := p.eval(ctx, in, timeout, bound, false)
	if errors.Is(err, errOverMemory) {
		// Evaluations running beside it were stopped too, since the heap
		// cannot tell whose memory it is: run it again alone.
		rs, err = p.eval(ctx, in, timeout, bound, true)
	}
	if err != nil {
		return err
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil // violation is undefined: nothing to report
	}
	vs, ok := rs[0].Expressions[0].Value.([]any)
	if !ok {
		return fmt.Errorf("policy %s (%s): violation must be a set of objects, got %T", p.pkg, p.loc, rs[0].Expressions[0].Value)
	}
	for _, v := range vs {
		d, err := p.diagnostic(pass.Graph, v)
		if err != nil {
			return fmt.Errorf("policy %s (%s): %w", p.pkg, p.loc, err)
		}
		pass.ReportDiag(d)
	}
	return nil
}

// fixedTime is the evaluation time of every policy evaluation: the epoch.
var fixedTime = time.Unix(0, 0).UTC()

// noEntropy is the random source of every policy evaluation: zeros.
type noEntropy struct{}

func (noEntropy) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// errOverMemory marks an evaluation the heap watchdog stopped.
var errOverMemory = errors.New("over its memory bound")

// eval evaluates the policy's query under the time limit and the heap
// watchdog; alone, it waits until no other evaluation runs and keeps the
// others waiting (see soloEval).
func (p *policy) eval(parent context.Context, in ast.Value, timeout time.Duration, bound uint64, alone bool) (rego.ResultSet, error) {
	if alone {
		soloEval.Lock()
		defer soloEval.Unlock()
	} else {
		soloEval.RLock()
		defer soloEval.RUnlock()
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	c := topdown.NewCancel()
	defer context.AfterFunc(ctx, c.Cancel)()
	if alone {
		collect() // the heap it starts from, without the stopped evaluations' garbage
	}
	r := readHeap()
	w := &evalWatch{name: fmt.Sprintf("policy %s (%s)", p.pkg, p.loc), base: r.objects, cycles: r.cycles, bound: bound, next: r.objects + bound, cancel: c}
	watch.add(w)
	// A fixed clock and no entropy: the built-ins that would read either
	// are left out or guarded (sandbox.go), and should one slip through, it
	// reads the same time and the same bytes on every run.
	rs, err := p.query.Eval(ctx, rego.EvalParsedInput(in), rego.EvalExternalCancel(c), rego.EvalTime(fixedTime), rego.EvalSeed(noEntropy{}))
	watch.remove(w)
	switch {
	case err != nil && parent.Err() != nil:
		return nil, fmt.Errorf("policy %s: lint abandoned: %w", p.pkg, parent.Err())
	case w.over.Load() && err != nil && (alone || w.sole.Load()):
		return nil, fmt.Errorf("policy %s (%s) was stopped: its evaluation grew the heap by more than %s, the memory bound (a policy building a huge value?; the rule option memory, e.g. memory: 1Gi, raises it)", p.pkg, p.loc, formatBytes(bound))
	case w.over.Load() && err != nil:
		return nil, errOverMemory
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("policy %s (%s) was stopped after %s: its evaluation does not finish (a runaway iteration?)", p.pkg, p.loc, timeout)
	case err != nil:
		return nil, fmt.Errorf("policy %s (%s): %w", p.pkg, p.loc, err)
	}
	return rs, nil
}

// diagnostic maps one violation object to a diagnostic.
func (p *policy) diagnostic(g *graph.Graph, v any) (rules.Diagnostic, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return rules.Diagnostic{}, fmt.Errorf("a violation must be an object {msg, ref, path}, got %v", v)
	}
	var d rules.Diagnostic
	for k := range m {
		switch k {
		case "msg", "detail", "ref", "path", "related", "fix", "severity":
		default:
			return d, fmt.Errorf("violation has unknown field %q (known: msg, detail, ref, path, related, fix, severity)", k)
		}
	}
	msg, _ := m["msg"].(string)
	if strings.TrimSpace(msg) == "" {
		return d, fmt.Errorf("violation without msg: %v", m)
	}
	res, err := p.resolveRef(g, m["ref"])
	if err != nil {
		return d, fmt.Errorf("violation %q: %w", msg, err)
	}
	path, ok := m["path"].(string)
	if !ok && m["path"] != nil {
		return d, fmt.Errorf("violation %q: path must be a string such as spec.http[0].route[1].weight", msg)
	}
	detail, ok := m["detail"].(string)
	if !ok && m["detail"] != nil {
		return d, fmt.Errorf("violation %q: detail must be a string (what follows from the finding and how to fix it)", msg)
	}
	d = rules.Diagnostic{Resource: res, Path: path, Message: msg, Detail: strings.TrimSpace(detail)}
	if rel, ok := m["related"]; ok {
		list, ok := rel.([]any)
		if !ok {
			return d, fmt.Errorf("violation %q: related must be a list of {ref, path, msg}", msg)
		}
		for _, x := range list {
			rm, _ := x.(map[string]any)
			rr, err := p.resolveRef(g, rm["ref"])
			if err != nil {
				return d, fmt.Errorf("violation %q: related: %w", msg, err)
			}
			rp, _ := rm["path"].(string)
			rmsg, _ := rm["msg"].(string)
			d.Related = append(d.Related, rules.RelatedAt(rr, rp, rmsg))
		}
	}
	if fix, ok := m["fix"].(string); ok && fix != "" {
		d.Fix = &rules.Fix{Description: fix}
	}
	if s, ok := m["severity"].(string); ok {
		sev, err := rules.ParseSeverity(s)
		if err != nil {
			return d, fmt.Errorf("violation %q: %w", msg, err)
		}
		d.Severity = sev
	}
	return d, nil
}

// resolveRef resolves a violation's ref and checks that the policy's input
// holds the object's kind: a built-in policy's input holds only its declared
// kinds' objects, so a finding on another kind shows the declaration is
// incomplete (and that the policy may be missing findings) instead of
// passing silently.
func (p *policy) resolveRef(g *graph.Graph, v any) (*graph.Resource, error) {
	r, err := resolveRef(g, v)
	if err != nil {
		return nil, err
	}
	if !p.input.has(r.Kind) {
		return nil, fmt.Errorf("it names %s %s/%s, but custom.kinds declares only %s: add %s (or %q for every kind) to custom.kinds, since only the declared kinds' objects are in the policy's input",
			r.Kind, r.Namespace, r.Name, p.kinds, r.Kind, AllKinds)
	}
	return r, nil
}

// resolveRef finds the object a violation names: by load-order index when the
// ref carries one (exact even for duplicates), else by kind, namespace and name.
func resolveRef(g *graph.Graph, v any) (*graph.Resource, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("ref must be an object {kind, namespace, name} (use an item's .ref)")
	}
	kind, _ := m["kind"].(string)
	name, _ := m["name"].(string)
	ns, hasNS := m["namespace"].(string)
	if kind == "" || name == "" {
		return nil, fmt.Errorf("ref %v needs kind and name", m)
	}
	if idx, ok := asInt(m["index"]); ok && idx >= 0 && idx < len(g.Resources) {
		if r := g.Resources[idx]; r.Kind == kind && r.Name == name && (!hasNS || r.Namespace == ns) {
			return r, nil
		}
	}
	if !hasNS {
		ns = g.DefaultNamespace
	}
	if r := g.Get(kind, ns, name); r != nil {
		return r, nil
	}
	return nil, fmt.Errorf("ref %s %s/%s names no object of the bundle", kind, ns, name)
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	case interface{ Int64() (int64, error) }:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}
