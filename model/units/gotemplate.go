package units

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// Go templates of an ApplicationSet (goTemplate: true) are evaluated with
// the functions Argo CD's ApplicationSet controller gives them: all of
// Sprig's generic functions but env, expandenv and getHostByName (Argo CD
// removes them so that a template cannot read the controller's
// environment), plus its own normalize, slugify, toYaml, fromYaml and
// fromYamlArray.
//
// A lint must give the same output every run, so a template that calls a
// function whose result depends on the clock, the machine's time zone or
// randomness is not evaluated (nondeterministic), and every template runs
// under a budget (budget) so that a hostile one — a loop, recursion, a
// string that doubles — ends with a finding instead of hanging or
// exhausting memory.

// nondeterministic are the functions whose result is not a function of
// their arguments: the clock (now, ago; the date formatters read the clock
// for an argument that is not a time, and the local time zone), the
// machine's time zone (toDate parses in it), randomness (rand*, shuffle,
// uuidv4, keys and certificates, bcrypt's and encryptAES's salts).
var nondeterministic = map[string]bool{
	"now": true, "ago": true, "date": true, "dateInZone": true, "date_in_zone": true,
	"htmlDate": true, "htmlDateInZone": true, "toDate": true, "mustToDate": true,
	"randAlphaNum": true, "randAlpha": true, "randAscii": true, "randNumeric": true, "randBytes": true,
	"randInt": true, "shuffle": true, "uuidv4": true,
	"genPrivateKey": true, "genCA": true, "genCAWithKey": true, "genSelfSignedCert": true,
	"genSelfSignedCertWithKey": true, "genSignedCert": true, "genSignedCertWithKey": true,
	"encryptAES": true, "bcrypt": true, "htpasswd": true,
}

// Limits of one ApplicationSet's template evaluation. Real templates stay
// far below them (a name, a path, a templatePatch of a few KiB).
const (
	// maxValueBytes bounds a rendered string and every value a template
	// function takes or returns (strings' bytes, list and map entries).
	maxValueBytes = 1 << 20
	// maxWork bounds the steps of all the set's templates together: a
	// function call, a range iteration or a template call is one step, and
	// so is each entry of a value a function takes or returns.
	maxWork = 1_000_000
	// maxOutputBytes bounds what all the set's templates write.
	maxOutputBytes = 16 << 20
	// maxValueDepth bounds how deeply lists and maps nest (a map set into
	// itself never ends).
	maxValueDepth = 64
)

// errBudget is a template that went over a limit.
var errBudget = errors.New("over budget")

// budget is what an ApplicationSet's templates may still spend, and why
// the one that went over stopped.
type budget struct {
	work   int
	output int
	over   string // the limit that was hit, "" while within them
}

func newBudget() *budget { return &budget{work: maxWork, output: maxOutputBytes} }

// exceed records the limit hit and stops the template (a panic in a
// template function is an error of the call to it: text/template
// recovers it).
func (b *budget) exceed(format string, args ...any) {
	if b.over == "" {
		b.over = fmt.Sprintf(format, args...)
	}
	panic(errBudget)
}

// step spends n units of work.
func (b *budget) step(n int) {
	b.work -= n
	if b.work < 0 {
		b.exceed("it takes more than %d steps (a loop or a recursion that does not end soon)", maxWork)
	}
}

// checkValue walks a value a function takes or returns, spending a step
// an entry, and stops the template when it is larger than maxValueBytes or
// nests deeper than maxValueDepth.
func (b *budget) checkValue(fn string, v reflect.Value) {
	size := 0
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		if depth > maxValueDepth {
			b.exceed("%s makes a value nested deeper than %d levels", fn, maxValueDepth)
		}
		b.step(1)
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), depth)
			}
		case reflect.String:
			size += v.Len()
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				size += v.Len()
				break
			}
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), depth+1)
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Key(), depth+1)
				walk(it.Value(), depth+1)
			}
		default:
			size++
		}
		if size > maxValueBytes {
			b.exceed("%s makes a value of more than %d bytes", fn, maxValueBytes)
		}
	}
	walk(v, 0)
}

// limitedWriter is a template's output, bounded by maxValueBytes and the
// set's output budget.
type limitedWriter struct {
	b   *budget
	buf strings.Builder
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > maxValueBytes {
		w.b.over = fmt.Sprintf("it writes more than %d bytes", maxValueBytes)
		return 0, errBudget
	}
	if w.b.output -= len(p); w.b.output < 0 {
		w.b.over = fmt.Sprintf("its templates write more than %d bytes together", maxOutputBytes)
		return 0, errBudget
	}
	return w.buf.Write(p)
}

// argoFuncs are the template functions Argo CD's ApplicationSet
// controller adds to Sprig's.
var argoFuncs = template.FuncMap{
	"normalize":     normalize,
	"slugify":       slugify,
	"toYaml":        toYAML,
	"fromYaml":      fromYAML,
	"fromYamlArray": fromYAMLArray,
}

// removedFuncs are the Sprig functions Argo CD removes.
var removedFuncs = []string{"env", "expandenv", "getHostByName"}

// builtinOverrides are text/template's built-in functions that can make a
// large string; they are replaced by the same functions under the budget.
// (and, or, not, the comparisons, len, index, slice and call make nothing
// large, and and/or must stay built in to short-circuit.)
var builtinOverrides = template.FuncMap{
	"print":    fmt.Sprint,
	"printf":   fmt.Sprintf,
	"println":  fmt.Sprintln,
	"html":     template.HTMLEscaper,
	"js":       template.JSEscaper,
	"urlquery": template.URLQueryEscaper,
}

// tickFunc is the function the budget's steps are taken by in range
// bodies and defined templates (parseGoTemplate puts a call to it there).
const tickFunc = "rolloutlintStep"

// funcsFor is the function map of one ApplicationSet's templates: every
// function wrapped so that it spends the budget and takes and returns
// values within the limits.
func funcsFor(b *budget) template.FuncMap {
	fm := template.FuncMap{}
	add := func(name string, fn any) {
		fm[name] = guarded(b, name, fn)
	}
	for name, fn := range sprig.GenericFuncMap() {
		add(name, fn)
	}
	for _, n := range removedFuncs {
		delete(fm, n)
	}
	for name, fn := range argoFuncs {
		add(name, fn)
	}
	for name, fn := range builtinOverrides {
		add(name, fn)
	}
	return fm
}

// guarded wraps a template function: each call is a step; its arguments
// and its result are checked against the limits, and the few functions
// whose result can be far larger than their arguments (repeat, until,
// indent, replace, ...) are checked before they run.
func guarded(b *budget, name string, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		b.step(1)
		for _, a := range args {
			b.checkValue(name, a)
		}
		if n := resultBound(name, args); n > maxValueBytes {
			b.exceed("%s would make a value of about %d bytes, more than %d", name, n, maxValueBytes)
		}
		var out []reflect.Value
		if t.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		if len(out) > 0 {
			b.checkValue(name, out[0])
		}
		return out
	}).Interface()
}

// resultBound is an upper bound of the size of what the functions that
// multiply their input make, 0 for the others (their result is checked
// after the call).
func resultBound(name string, args []reflect.Value) int {
	intArg := func(i int) int {
		if i < len(args) && args[i].CanInt() {
			return abs(int(args[i].Int()))
		}
		return 0
	}
	strArg := func(i int) int {
		if i < len(args) && args[i].Kind() == reflect.String {
			return args[i].Len()
		}
		return 0
	}
	str := func(i int) string {
		if i < len(args) && args[i].Kind() == reflect.String {
			return args[i].String()
		}
		return ""
	}
	switch name {
	case "repeat": // repeat COUNT STRING
		return mulCap(intArg(0), strArg(1))
	case "until":
		return intArg(0)
	case "untilStep": // untilStep START STOP STEP
		if s := intArg(2); s != 0 {
			return abs(int(args[1].Int())-int(args[0].Int())) / s
		}
		return 0
	case "seq":
		n := 0
		for i := range args {
			n = max(n, intArg(i))
		}
		return mulCap(n, 2)
	case "indent", "nindent": // indent SPACES STRING
		return mulCap(intArg(0), strings.Count(str(1), "\n")+1) + strArg(1)
	case "replace": // replace OLD NEW SRC
		if strArg(0) == 0 {
			return mulCap(strArg(2)+1, strArg(1)) + strArg(2)
		}
		return mulCap(strings.Count(str(2), str(0)), strArg(1)) + strArg(2)
	case "regexReplaceAll", "mustRegexReplaceAll", "regexReplaceAllLiteral", "mustRegexReplaceAllLiteral": // REGEX S REPL
		return mulCap(strArg(1)+1, strArg(2)) + strArg(1)
	case "wrapWith": // wrapWith LENGTH SEP STRING
		return mulCap(strArg(2), strArg(1)+1)
	case "printf": // a verb's width or precision is at most 1e6 (fmt)
		n := strArg(0)
		for _, m := range verbWidths.FindAllStringSubmatch(str(0), -1) {
			for _, w := range m[1:] {
				switch {
				case w == "*":
					n += 1_000_000
				case len(w) > 6:
					n += 1_000_000
				case w != "":
					x, _ := strconv.Atoi(w)
					n += x
				}
			}
		}
		for _, a := range args[1:] {
			n += valueBytes(a)
		}
		return n
	}
	return 0
}

// verbWidths finds the width and precision of each printf verb.
var verbWidths = regexp.MustCompile(`%[-+# 0]*(\*|[0-9]*)(?:\.(\*|[0-9]*))?`)

// valueBytes is a rough size of a printf argument: its length for a
// string, else a number's width (printf's own output is checked after
// the call).
func valueBytes(v reflect.Value) int {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.String {
		return v.Len()
	}
	return 24
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// mulCap is a*b, or a value over every limit when that overflows.
func mulCap(a, b int) int {
	if a != 0 && b > (1<<40)/a {
		return 1 << 40
	}
	return a * b
}

// goTemplate is one parsed template string of an ApplicationSet.
type goTemplate struct {
	t *template.Template
	// calls is the first nondeterministic function it calls, "" if none.
	calls string
}

// parseGoTemplate parses a template string as Argo CD does (with the
// functions it provides, so that another function is a parse error), finds
// the nondeterministic functions it calls, and makes every range iteration
// and template call a step of the budget.
func parseGoTemplate(s string, fm template.FuncMap, b *budget, options []string) (_ *goTemplate, err error) {
	t, err := template.New("").Funcs(fm).Parse(s)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Option panics on an option text/template does not know (so does
		// Argo CD's controller, and it generates nothing).
		if r := recover(); r != nil {
			err = fmt.Errorf("goTemplateOptions: %v", r)
		}
	}()
	for _, o := range options {
		t = t.Option(o)
	}
	// The step function is added after parsing: a template that names it
	// does not parse, as in Argo CD.
	t.Funcs(template.FuncMap{tickFunc: func() string { b.step(1); return "" }})
	g := &goTemplate{t: t}
	tick, err := template.New("").Funcs(template.FuncMap{tickFunc: func() string { return "" }}).Parse("{{" + tickFunc + "}}")
	if err != nil {
		return nil, fmt.Errorf("internal: %w", err)
	}
	tickNode := tick.Root.Nodes[0]
	for _, d := range t.Templates() {
		if d.Tree == nil || d.Root == nil {
			continue
		}
		if g.calls == "" {
			g.calls = nondeterministicCall(d.Root)
		}
		insertSteps(d.Root, tickNode)
		if d.Name() != "" {
			// A defined template's call ({{template "x"}}) is a step.
			d.Root.Nodes = append([]parse.Node{tickNode}, d.Root.Nodes...)
		}
	}
	return g, nil
}

// insertSteps puts a step at the start of every range body under n.
func insertSteps(n parse.Node, tick parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			insertSteps(c, tick)
		}
	case *parse.RangeNode:
		insertSteps(n.List, tick)
		insertSteps(n.ElseList, tick)
		if n.List != nil {
			n.List.Nodes = append([]parse.Node{tick}, n.List.Nodes...)
		}
	case *parse.IfNode:
		insertSteps(n.List, tick)
		insertSteps(n.ElseList, tick)
	case *parse.WithNode:
		insertSteps(n.List, tick)
		insertSteps(n.ElseList, tick)
	}
}

// nondeterministicCall is the first nondeterministic function a template
// tree names, "" if none.
func nondeterministicCall(n parse.Node) string {
	found := ""
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		if found != "" || n == nil || reflect.ValueOf(n).IsNil() {
			return
		}
		switch n := n.(type) {
		case *parse.ListNode:
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, c := range n.Args {
				walk(c)
			}
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.IdentifierNode:
			if nondeterministic[n.Ident] {
				found = n.Ident
			}
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	walk(n)
	return found
}

// slugify is Argo CD's slugify: normalize, then a URL slug as
// gosimple/slug makes one from what normalize leaves (lower-case letters,
// digits, '-' and '.'): '.' becomes '-', runs of '-' one, and the result
// is cut to at most 50 characters (slugify N NAME: N; slugify N false NAME:
// cut exactly at N rather than at the last '-' before it).
func slugify(args ...any) (string, error) {
	maxLen, smart, name := 50, true, ""
	for i, a := range args {
		var ok bool
		switch i {
		case len(args) - 1:
			name, ok = a.(string)
		case 0:
			maxLen, ok = a.(int)
		case 1:
			smart, ok = a.(bool)
		default:
			ok = true // Argo CD logs and ignores a fourth argument and more
		}
		if !ok {
			return "", fmt.Errorf("slugify: argument %d is a %T", i+1, a)
		}
	}
	s := normalize(name)
	if !smart {
		if maxLen < 0 {
			return "", fmt.Errorf("slugify: length %d is negative", maxLen)
		}
		if len(s) >= maxLen {
			s = s[:maxLen]
		}
	}
	s = strings.ReplaceAll(s, ".", "-")
	for strings.Contains(s, "--") {
		s = strings.ReplaceAll(s, "--", "-")
	}
	s = strings.Trim(s, "-_")
	if smart && maxLen > 0 && len(s) > maxLen {
		cut := maxLen
		for i := maxLen; i >= 0; i-- {
			if s[i] == '-' {
				cut = i
				break
			}
		}
		s = s[:cut]
	}
	return s, nil
}

// toYAML is Argo CD's toYaml: YAML as sigs.k8s.io/yaml writes it, without
// the final newline.
func toYAML(v any) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toYaml: %w", err)
	}
	return strings.TrimSuffix(string(data), "\n"), nil
}

// fromYAML is Argo CD's fromYaml: a YAML mapping, with JSON's types.
func fromYAML(s string) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("fromYaml: %w", err)
	}
	return m, nil
}

// fromYAMLArray is Argo CD's fromYamlArray: a YAML list, with JSON's
// types.
func fromYAMLArray(s string) ([]any, error) {
	a := []any{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		return nil, fmt.Errorf("fromYamlArray: %w", err)
	}
	return a, nil
}
