package policies

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	tparse "text/template/parse"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// The evaluation's memory bound and timeout are kept between evaluation
// steps: the heap watchdog cancels, OPA looks at the cancellation between
// steps and inside a few long loops. A single built-in call that does work
// out of proportion to its operands is neither interrupted nor accounted
// while it runs, so one call can take minutes of CPU (a 100-million-bit
// number printed in decimal) or ask for a terabyte at once (a replace whose
// result is the square of its input), which no watchdog can stop: Go's
// runtime ends the process. The guards below refuse such a call before it
// starts, from a size computed from its operands, and the built-ins whose
// work is unbounded for a small input (templates, graph paths) are
// rolloutlint's own implementations that look at the cancellation as they
// go.

// evalBoundKey keys the evaluation's memory bound, in bytes, in its context.
type evalBoundKey struct{}

// memoryBound is the memory bound of the evaluation a built-in call runs
// in: the policy's, or the default in `policy test`.
func memoryBound(bctx topdown.BuiltinContext) uint64 {
	if bctx.Context != nil {
		if b, ok := bctx.Context.Value(evalBoundKey{}).(uint64); ok && b > 0 {
			return b
		}
	}
	return DefaultMemory
}

// maxNumberBits bounds the numbers a built-in may produce: OPA itself
// refuses a number literal, a to_number or a JSON number above 2^100000
// (about 30,000 decimal digits), since the cost of printing a number grows
// faster than its size; the built-ins that multiply or shift would go past
// it unchecked.
const maxNumberBits = 100000

// sizeGuard refuses a call whose result would be larger than the
// evaluation's memory bound; size returns the result's size in bytes (an
// upper bound), or -1 when it cannot tell (the built-in reports the bad
// operand itself).
func sizeGuard(size func(args []*ast.Term) int64) func(topdown.BuiltinContext, []*ast.Term) string {
	return func(bctx topdown.BuiltinContext, args []*ast.Term) string {
		n := size(args)
		if bound := memoryBound(bctx); n >= 0 && uint64(n) > bound {
			return fmt.Sprintf("the result would be %s, more than the policy's memory bound of %s; a single built-in call is not stopped while it runs", formatBytes(uint64(n)), formatBytes(bound))
		}
		return ""
	}
}

// bitsGuard refuses a call whose numeric result would be above
// maxNumberBits; bits returns the result's bits (an upper bound), or -1.
func bitsGuard(bits func(args []*ast.Term) int64) func(topdown.BuiltinContext, []*ast.Term) string {
	return func(_ topdown.BuiltinContext, args []*ast.Term) string {
		if n := bits(args); n > maxNumberBits {
			return fmt.Sprintf("the result would have about %d bits, more than the %d OPA allows a number (about 30,000 decimal digits); computing and printing it is not stopped while it runs", n, maxNumberBits)
		}
		return ""
	}
}

// numberBits is the binary exponent of a number: the bits of its integer
// part (0 for |n| < 1), or -1 when it is not a number.
func numberBits(v ast.Value) int64 {
	n, ok := v.(ast.Number)
	if !ok {
		return -1
	}
	if i, ok := n.Int64(); ok {
		return int64(new(big.Int).SetInt64(i).BitLen())
	}
	f, ok := new(big.Float).SetString(string(n))
	if !ok {
		return -1
	}
	return max(0, int64(f.MantExp(nil)))
}

// mulBits: a product has at most the sum of its factors' bits.
func mulBits(args []*ast.Term) int64 {
	a, b := numberBits(args[0].Value), numberBits(args[1].Value)
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

// productBits sums the bits of a collection's numbers.
func productBits(args []*ast.Term) int64 {
	var sum int64
	bad := false
	each(args[0].Value, func(t *ast.Term) {
		if b := numberBits(t.Value); b >= 0 {
			sum += b
		} else {
			bad = true
		}
	})
	if bad {
		return -1
	}
	return sum
}

// lshBits: a shift adds its count to the bits.
func lshBits(args []*ast.Term) int64 {
	a := numberBits(args[0].Value)
	n, ok := args[1].Value.(ast.Number)
	if a < 0 || !ok {
		return -1
	}
	s, ok := n.Int64()
	if !ok {
		if f, ok := new(big.Float).SetString(string(n)); ok && f.Sign() > 0 {
			return maxNumberBits + 1 // beyond int64
		}
		return -1
	}
	if s < 0 {
		return -1
	}
	return a + min(s, 1<<40) // no overflow
}

// unitExponent finds a number's decimal exponent in units.parse and
// units.parse_bytes text ("1e6", "2.5E+4Ki").
var unitExponent = regexp.MustCompile(`^\s*"?[+-]?([0-9]*)(?:\.[0-9]*)?[eE]\+?([0-9]+)`)

// unitsBits is the bits of the number a units string names, from its
// mantissa's integer digits and decimal exponent (the unit suffix adds at
// most 2^60, Ei).
func unitsBits(args []*ast.Term) int64 {
	s, ok := args[0].Value.(ast.String)
	if !ok {
		return -1
	}
	m := unitExponent.FindStringSubmatch(string(s))
	if m == nil {
		return 0 // no exponent: at most as many bits as the text has digits, and OPA checks those
	}
	exp, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return maxNumberBits + 1
	}
	// log2(10) < 3.33
	return (int64(len(m[1]))+exp)*333/100 + 60
}

// each calls f with every element of an array or a set.
func each(v ast.Value, f func(*ast.Term)) {
	switch c := v.(type) {
	case *ast.Array:
		c.Foreach(f)
	case ast.Set:
		c.Foreach(f)
	}
}

// concatSize: the delimiter between every two elements, and the elements.
func concatSize(args []*ast.Term) int64 {
	d, ok := args[0].Value.(ast.String)
	if !ok {
		return -1
	}
	var n, total int64
	each(args[1].Value, func(t *ast.Term) {
		if s, ok := t.Value.(ast.String); ok {
			total += int64(len(s))
		}
		n++
	})
	if n > 1 {
		total += (n - 1) * int64(len(d))
	}
	return total
}

// occurrences counts old in s as strings.Replace does: an empty old
// matches before every rune and at the end.
func occurrences(s, old string) int64 {
	if old == "" {
		return int64(utf8.RuneCountInString(s)) + 1
	}
	return int64(strings.Count(s, old))
}

// replaceSize is the length of replace(s, old, new).
func replaceSize(args []*ast.Term) int64 {
	s, ok1 := args[0].Value.(ast.String)
	old, ok2 := args[1].Value.(ast.String)
	nw, ok3 := args[2].Value.(ast.String)
	if !ok1 || !ok2 || !ok3 {
		return -1
	}
	return int64(len(s)) + occurrences(string(s), string(old))*max(0, int64(len(nw))-int64(len(old)))
}

// replaceNSize bounds strings.replace_n(patterns, s): every occurrence of
// every pattern replaced, as if none overlapped.
func replaceNSize(args []*ast.Term) int64 {
	pats, ok1 := args[0].Value.(ast.Object)
	s, ok2 := args[1].Value.(ast.String)
	if !ok1 || !ok2 {
		return -1
	}
	total := int64(len(s))
	pats.Foreach(func(k, v *ast.Term) {
		old, ok1 := k.Value.(ast.String)
		nw, ok2 := v.Value.(ast.String)
		if ok1 && ok2 && len(nw) > len(old) {
			total += occurrences(string(s), string(old)) * int64(len(nw)-len(old))
		}
	})
	return total
}

// regexReplaceSize bounds regex.replace(s, pattern, value): each match
// becomes the value with every `$` expanded to at most the match.
func regexReplaceSize(args []*ast.Term) int64 {
	s, ok1 := args[0].Value.(ast.String)
	p, ok2 := args[1].Value.(ast.String)
	v, ok3 := args[2].Value.(ast.String)
	if !ok1 || !ok2 || !ok3 {
		return -1
	}
	re, err := regexp.Compile(string(p))
	if err != nil {
		return -1
	}
	refs := int64(strings.Count(string(v), "$"))
	total := int64(len(s))
	for _, m := range re.FindAllStringIndex(string(s), -1) {
		total += int64(len(v)) + refs*int64(m[1]-m[0])
	}
	return total
}

// fmtWidth finds the width and precision of a fmt verb.
var fmtWidth = regexp.MustCompile(`%[-+# 0]*([0-9]*)(?:\.([0-9]*))?`)

// sprintfSize bounds the padding of sprintf's verbs: fmt pads a verb to
// its width or precision (up to a million each) whatever the operand, so a
// short format can ask for gigabytes. The operands' own text is in the
// evaluation's accounting already.
func sprintfSize(args []*ast.Term) int64 {
	f, ok := args[0].Value.(ast.String)
	if !ok {
		return -1
	}
	total := int64(len(f))
	for _, m := range fmtWidth.FindAllStringSubmatch(string(f), -1) {
		w, _ := strconv.ParseInt(m[1], 10, 64)
		p, _ := strconv.ParseInt(m[2], 10, 64)
		total += min(max(w, p), 1e6) // fmt treats more than 1e6 as a bad width
	}
	return total
}

// marshalIndentSize bounds json.marshal_with_options with pretty output:
// every value is on a line of its own, behind the prefix and one indent per
// level, which a long indent multiplies.
func marshalIndentSize(args []*ast.Term) int64 {
	opts, ok := args[1].Value.(ast.Object)
	if !ok {
		return -1
	}
	// OPA pretty-prints when told to, or else when given a prefix or an
	// indent; compact output is the size of the value.
	prettyTerm, prefixTerm, indentTerm := opts.Get(ast.InternedTerm("pretty")), opts.Get(ast.InternedTerm("prefix")), opts.Get(ast.InternedTerm("indent"))
	pretty := prefixTerm != nil || indentTerm != nil
	if prettyTerm != nil {
		b, ok := prettyTerm.Value.(ast.Boolean)
		pretty = ok && bool(b)
	}
	if !pretty {
		return -1
	}
	prefix, indent := int64(0), int64(1)
	if p := prefixTerm; p != nil {
		if s, ok := p.Value.(ast.String); ok {
			prefix = int64(len(s))
		}
	}
	if i := indentTerm; i != nil {
		if s, ok := i.Value.(ast.String); ok {
			indent = int64(len(s))
		}
	}
	var total int64
	var walk func(v ast.Value, depth int64)
	walk = func(v ast.Value, depth int64) {
		total += prefix + depth*indent + 2
		switch x := v.(type) {
		case ast.Object:
			x.Foreach(func(k, val *ast.Term) {
				if s, ok := k.Value.(ast.String); ok {
					total += int64(len(s)) + 4
				}
				walk(val.Value, depth+1)
			})
		case *ast.Array:
			x.Foreach(func(t *ast.Term) { walk(t.Value, depth+1) })
		case ast.Set:
			x.Foreach(func(t *ast.Term) { walk(t.Value, depth+1) })
		case ast.String:
			total += int64(len(x)) * 6 // \u00XX escapes at worst
		default:
			total += int64(len(x.String()))
		}
	}
	walk(args[0].Value, 0)
	return total
}

// stepsPerCancelCheck is how many steps the built-ins below take between
// two looks at the evaluation's cancellation.
const stepsPerCancelCheck = 1024

// stopper counts a built-in's steps and reports, every
// stepsPerCancelCheck of them, whether the evaluation was cancelled.
type stopper struct {
	cancel topdown.Cancel
	steps  int
}

func (s *stopper) stopped() bool {
	s.steps++
	return s.steps%stepsPerCancelCheck == 0 && s.cancel != nil && s.cancel.Cancelled()
}

// cancelled is the error a built-in stopped by the cancellation returns: a
// halt, so that the evaluation ends now with the reason the watchdog or the
// timeout gives.
func cancelled(bctx topdown.BuiltinContext, name string) error {
	return topdown.Halt{Err: &topdown.Error{Code: topdown.CancelErr, Message: name + ": stopped (timeout, memory bound or an abandoned lint)", Location: bctx.Location}}
}

// tickFunc is the template function renderTemplate calls at the start of
// every block; its name keeps it out of the way of templates' own names.
const tickFunc = "rolloutlint_sandbox_tick"

var errTemplateStopped = errors.New("stopped")

// renderTemplate is strings.render_template as OPA defines it (Go's
// text/template over the variables, a missing value shown as
// "<undefined>"), with the execution bounded: text/template has no
// cancellation, and a template of a few bytes (two nested ranges over
// 100000) runs for hours without writing anything. Every block of the
// parsed template starts with a call that looks at the cancellation, and
// the output may not pass the memory bound.
func renderTemplate(bctx topdown.BuiltinContext, args []*ast.Term, iter func(*ast.Term) error) error {
	text, ok := args[0].Value.(ast.String)
	if !ok {
		return fmt.Errorf("operand 1 must be string but got %s", ast.ValueName(args[0].Value))
	}
	obj, ok := args[1].Value.(ast.Object)
	if !ok {
		return fmt.Errorf("operand 2 must be object but got %s", ast.ValueName(args[1].Value))
	}
	var vars map[string]any
	if err := ast.As(obj, &vars); err != nil {
		return err
	}
	stop := &stopper{cancel: bctx.Cancel}
	wasCancelled := false
	tmpl, err := template.New("template").Funcs(template.FuncMap{tickFunc: func() (string, error) {
		if stop.stopped() {
			wasCancelled = true
			return "", errTemplateStopped
		}
		return "", nil
	}}).Parse(string(text))
	if err != nil {
		return err
	}
	for _, t := range tmpl.Templates() {
		if t.Tree != nil {
			tickEveryList(t.Root)
		}
	}
	// A quarter: the buffer doubles as it grows, and the result is a copy.
	out := &boundedBuffer{max: memoryBound(bctx) / 4, stop: stop}
	err = tmpl.Execute(out, vars)
	switch {
	case wasCancelled || out.cancelled:
		return cancelled(bctx, ast.RenderTemplate.Name)
	case out.over:
		return refuse(bctx, ast.RenderTemplate.Name, fmt.Sprintf("the output passed %s, which with the buffer's growth and the result's copy would pass the policy's memory bound of %s", formatBytes(out.max), formatBytes(memoryBound(bctx))))
	case err != nil:
		return err
	}
	return iter(ast.StringTerm(strings.ReplaceAll(out.String(), "<no value>", "<undefined>")))
}

// tickEveryList puts a call of tickFunc at the start of every list of
// nodes under n: the bodies of templates, ranges, ifs and withs, so that
// every iteration and every template call passes through one.
func tickEveryList(n tparse.Node) {
	switch x := n.(type) {
	case *tparse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			tickEveryList(c)
		}
		tick := &tparse.ActionNode{NodeType: tparse.NodeAction, Pos: x.Pos, Pipe: &tparse.PipeNode{
			NodeType: tparse.NodePipe, Pos: x.Pos,
			Cmds: []*tparse.CommandNode{{NodeType: tparse.NodeCommand, Pos: x.Pos, Args: []tparse.Node{tparse.NewIdentifier(tickFunc).SetPos(x.Pos)}}},
		}}
		x.Nodes = append([]tparse.Node{tick}, x.Nodes...)
	case *tparse.IfNode:
		tickEveryList(x.List)
		tickEveryList(x.ElseList)
	case *tparse.RangeNode:
		tickEveryList(x.List)
		tickEveryList(x.ElseList)
	case *tparse.WithNode:
		tickEveryList(x.List)
		tickEveryList(x.ElseList)
	}
}

// boundedBuffer is a buffer that refuses to grow past max bytes and stops
// when the evaluation is cancelled.
type boundedBuffer struct {
	bytes.Buffer
	max             uint64
	stop            *stopper
	over, cancelled bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if uint64(b.Len())+uint64(len(p)) > b.max {
		b.over = true
		return 0, errTemplateStopped
	}
	if b.stop.stopped() {
		b.cancelled = true
		return 0, errTemplateStopped
	}
	return b.Buffer.Write(p)
}

// graphOperands reads the graph and the starting vertices of the graph
// built-ins.
func graphOperands(args []*ast.Term) (ast.Object, []*ast.Term, error) {
	g, ok := args[0].Value.(ast.Object)
	if !ok {
		return nil, nil, fmt.Errorf("operand 1 must be object but got %s", ast.ValueName(args[0].Value))
	}
	var start []*ast.Term
	switch s := args[1].Value.(type) {
	case *ast.Array, ast.Set:
		each(s, func(t *ast.Term) { start = append(start, t) })
	default:
		return nil, nil, fmt.Errorf("operand 2 must be one of {array, set} but got %s", ast.ValueName(args[1].Value))
	}
	return g, start, nil
}

// reachable is graph.reachable: the vertices of the graph (keys of the
// object) reachable from the starting ones, edges being the arrays or sets
// the keys map to. OPA's own version queues a vertex again for every edge
// that reaches it before it is visited (cubic on a dense graph) and never
// looks at the cancellation; this one visits every vertex once.
func reachable(bctx topdown.BuiltinContext, args []*ast.Term, iter func(*ast.Term) error) error {
	g, queue, err := graphOperands(args)
	if err != nil {
		return err
	}
	stop := &stopper{cancel: bctx.Cancel}
	reached, queued := ast.NewSet(), ast.NewSet(queue...)
	for len(queue) > 0 {
		if stop.stopped() {
			return cancelled(bctx, ast.ReachableBuiltin.Name)
		}
		v := queue[0]
		queue = queue[1:]
		edges := g.Get(v)
		if edges == nil {
			continue
		}
		reached.Add(v)
		each(edges.Value, func(n *ast.Term) {
			if !queued.Contains(n) {
				queued.Add(n)
				queue = append(queue, n)
			}
		})
	}
	return iter(ast.NewTerm(reached))
}

// reachablePaths is graph.reachable_paths: from every starting vertex of
// the graph, every path that follows edges until it reaches a vertex
// without edges (which ends the path), a vertex that is not in the graph
// (which the path leaves out) or a vertex already on the path (as OPA
// does, a starting vertex's own edges are followed without that check).
// There can be exponentially many paths, so the walk looks at the
// cancellation as it goes.
func reachablePaths(bctx topdown.BuiltinContext, args []*ast.Term, iter func(*ast.Term) error) error {
	g, start, err := graphOperands(args)
	if err != nil {
		return err
	}
	stop := &stopper{cancel: bctx.Cancel}
	paths := ast.NewSet()
	var path []*ast.Term
	commit := func() { paths.Add(ast.ArrayTerm(append([]*ast.Term(nil), path...)...)) }
	halted := false
	var walk func(v *ast.Term)
	walk = func(v *ast.Term) {
		if halted || stop.stopped() {
			halted = true
			return
		}
		edges := g.Get(v)
		if edges == nil {
			commit()
			return
		}
		path = append(path, v)
		defer func() { path = path[:len(path)-1] }()
		if edgeCount(edges.Value) == 0 {
			commit()
			return
		}
		each(edges.Value, func(n *ast.Term) {
			if contains(path, n) {
				commit()
			} else {
				walk(n)
			}
		})
	}
	for _, v := range start {
		edges := g.Get(v) // a starting vertex outside the graph gives no path
		if edges == nil {
			continue
		}
		path = []*ast.Term{v}
		if edgeCount(edges.Value) == 0 {
			commit()
		}
		each(edges.Value, walk)
		if halted {
			return cancelled(bctx, ast.ReachablePathsBuiltin.Name)
		}
	}
	return iter(ast.NewTerm(paths))
}

// edgeCount is the number of edges in an array or a set, 0 otherwise.
func edgeCount(v ast.Value) int {
	switch c := v.(type) {
	case *ast.Array:
		return c.Len()
	case ast.Set:
		return c.Len()
	}
	return 0
}

func contains(path []*ast.Term, t *ast.Term) bool {
	for _, p := range path {
		if p.Equal(t) {
			return true
		}
	}
	return false
}

// maxGraphQLNames bounds the names of a GraphQL query the validating
// built-ins accept: gqlparser's overlapping-fields rule compares every pair
// of fields of a selection, so validation is quadratic in the fields and
// not interrupted (4,000 fields take 1.1 s, 400,000, a 2.4 MB string,
// hours). 2,000 names validate in about 0.2 s.
const maxGraphQLNames = 2000

var graphQLName = regexp.MustCompile(`[_A-Za-z][_0-9A-Za-z]*`)

// graphQLNames refuses a query (operand 1, text or a parsed AST object)
// with more than maxGraphQLNames names.
func graphQLNames(args []*ast.Term) string {
	var n int
	switch q := args[0].Value.(type) {
	case ast.String:
		n = len(graphQLName.FindAllStringIndex(string(q), maxGraphQLNames+1))
	case ast.Object:
		var walk func(v ast.Value)
		walk = func(v ast.Value) {
			switch x := v.(type) {
			case ast.Object:
				n++
				x.Foreach(func(_, val *ast.Term) { walk(val.Value) })
			case *ast.Array:
				x.Foreach(func(t *ast.Term) { walk(t.Value) })
			}
		}
		walk(q)
	}
	if n > maxGraphQLNames {
		return fmt.Sprintf("the query has more than %d names; validating it compares every pair of fields, which is not stopped while it runs", maxGraphQLNames)
	}
	return ""
}
