// Package promql prepares Argo Rollouts Prometheus queries for the real
// Prometheus parser: it finds the `{{...}}` template tags Argo resolves, puts
// the values a Rollout passes in their place (or stand-ins the parser accepts
// where no value is known), parses the result and lists its label matchers
// with offsets mapped back to the query as written.
package promql

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Placeholder is one `{{tag}}` in a query as written.
type Placeholder struct {
	Tag string // the trimmed tag, e.g. "args.service-name"
	// Arg is the argument name when the tag is args.<name>, else "".
	Arg        string
	Start, End int // byte offsets of `{{` and just past `}}`
	// InString is true when the tag sits inside a quoted PromQL string.
	InString bool
}

// Value is what a placeholder resolves to.
type Value struct {
	Text string
	// Runtime means the value exists only when the analysis runs (valueFrom:
	// a secret, a field of the Rollout, the pod template hash).
	Runtime bool
}

// Placeholders returns every `{{...}}` tag of q in order. Whitespace inside the
// braces is trimmed, as Argo does.
func Placeholders(q string) []Placeholder {
	var out []Placeholder
	if n := strings.Count(q, "{{"); n > 0 {
		out = make([]Placeholder, 0, n) // every tag opens with {{: no regrowth
	}
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c == '{' && i+1 < len(q) && q[i+1] == '{' {
			end := strings.Index(q[i+2:], "}}")
			if end < 0 {
				break
			}
			tag := strings.TrimSpace(q[i+2 : i+2+end])
			ph := Placeholder{Tag: tag, Start: i, End: i + 2 + end + 2, InString: quote != 0}
			if a, ok := strings.CutPrefix(tag, "args."); ok {
				ph.Arg = a
			}
			out = append(out, ph)
			i = ph.End - 1
			continue
		}
		switch {
		case quote != 0 && c == '\\' && quote != '`':
			i++ // an escaped character never closes the string
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\'' || c == '`'):
			quote = c
		case quote == 0 && c == '#': // a comment runs to the end of the line
			if nl := strings.IndexByte(q[i:], '\n'); nl >= 0 {
				i += nl
			} else {
				i = len(q)
			}
		}
	}
	if len(out) == 0 {
		return nil // "{{" without a closing "}}"
	}
	return out
}

// segment maps a run of the substituted query back to the original.
type segment struct {
	newStart, origStart, newLen, origLen int
	ph                                   *Placeholder // non-nil for a substituted tag
	// literal is set for a tag inside a quoted string replaced by the
	// value a lookup gave, verbatim (see SummarizeSubstitution).
	literal bool
}

// Substitution is a query with its placeholders replaced.
type Substitution struct {
	Original string
	Query    string // the text handed to the parser
	// Placeholders are every tag of the original, in order.
	Placeholders []Placeholder
	// Unresolved are the tags for which lookup had no value.
	Unresolved []Placeholder
	// Values holds, per placeholder index, the value used (zero when unresolved).
	Values []Value
	segs   []segment
}

// standInRuntime fills a string for a value only known at run time: any
// non-empty text behaves like it for parsing and matcher checks.
const standInRuntime = "runtime-value"

// Substitute replaces each placeholder of q with the value lookup gives for
// its tag. Inside quoted strings the value goes in verbatim, as Argo does (a
// tag with no value stays as written, so the matcher still parses and can be
// reported). Outside strings a known value goes in verbatim and an unknown one
// becomes a stand-in of the kind the context needs (a duration inside `[...]`
// or after `offset`, a number elsewhere) so that the rest of the query parses.
func Substitute(q string, lookup func(tag string) (Value, bool)) *Substitution {
	return SubstitutePlaceholders(q, Placeholders(q), lookup)
}

// SubstitutePlaceholders is Substitute with q's placeholders already found
// (phs is Placeholders(q)), for callers that substitute the same text many
// times: a lint sees every Rollout's copy of a template query. The result
// shares phs, which nobody may modify.
func SubstitutePlaceholders(q string, phs []Placeholder, lookup func(tag string) (Value, bool)) *Substitution {
	s := &Substitution{Original: q, Placeholders: phs}
	s.Values = make([]Value, len(s.Placeholders))
	// Every query of a bundle is kept until the lint ends, so the text and the
	// segments are sized exactly: the replacement texts first, then one pass
	// writes them.
	var buf [8]string // a query's few tags: no allocation
	texts := buf[:0]
	if len(s.Placeholders) > len(buf) {
		texts = make([]string, 0, len(s.Placeholders))
	}
	texts = texts[:len(s.Placeholders)]
	size := len(q)
	for i := range s.Placeholders {
		texts[i] = s.replacement(q, i, lookup)
		size += len(texts[i]) - (s.Placeholders[i].End - s.Placeholders[i].Start)
	}
	s.segs = make([]segment, 0, 2*len(s.Placeholders)+1)
	var b strings.Builder
	b.Grow(size)
	prev := 0
	for i := range s.Placeholders {
		ph := &s.Placeholders[i]
		if ph.Start > prev {
			s.segs = append(s.segs, segment{newStart: b.Len(), origStart: prev, newLen: ph.Start - prev, origLen: ph.Start - prev})
			b.WriteString(q[prev:ph.Start])
		}
		text := texts[i]
		literal := ph.InString && s.Values[i] != (Value{}) && !s.Values[i].Runtime
		s.segs = append(s.segs, segment{newStart: b.Len(), origStart: ph.Start, newLen: len(text), origLen: ph.End - ph.Start, ph: ph, literal: literal})
		b.WriteString(text)
		prev = ph.End
	}
	if prev < len(q) {
		s.segs = append(s.segs, segment{newStart: b.Len(), origStart: prev, newLen: len(q) - prev, origLen: len(q) - prev})
		b.WriteString(q[prev:])
	}
	s.Query = b.String()
	return s
}

// replacement returns the text that replaces placeholder i of q, recording
// its value (or that it has none).
func (s *Substitution) replacement(q string, i int, lookup func(tag string) (Value, bool)) string {
	ph := &s.Placeholders[i]
	v, ok := Value{}, false
	if lookup != nil {
		v, ok = lookup(ph.Tag)
	}
	switch {
	case !ok:
		s.Unresolved = append(s.Unresolved, *ph)
		if ph.InString {
			return q[ph.Start:ph.End]
		}
		return standIn(q, ph.Start, ph.End)
	case v.Runtime:
		s.Values[i] = v
		if ph.InString {
			return standInRuntime
		}
		return standIn(q, ph.Start, ph.End)
	default:
		s.Values[i] = v
		return v.Text
	}
}

var (
	offsetBefore   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\boffset\s*$`) })
	labelListParen = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(by|without|on|ignoring|group_left|group_right)\s*$`)
	})
)

// standIn returns a parseable replacement for the tag at q[at:end] outside
// strings, by context: part of a name when glued to name characters, a
// duration inside a range or subquery selector or after `offset`, a label
// name inside `{...}` or a by/without/on/ignoring/group_* list, a metric name
// before `{` or `[`, and a number anywhere else.
func standIn(q string, at, end int) string {
	const name = "rl_placeholder"
	if at > 0 && isNameByte(q[at-1]) || end < len(q) && isNameByte(q[end]) {
		return "x"
	}
	before := q[:at]
	if offsetBefore().MatchString(before) {
		return "1m"
	}
	switch open, prefix := innermostOpen(before); open {
	case '[':
		return "1m"
	case '{':
		return name
	case '(':
		if labelListParen().MatchString(prefix) {
			return name
		}
	}
	if next := strings.TrimLeft(q[end:], " \t\r\n"); next != "" && (next[0] == '{' || next[0] == '[') {
		return name
	}
	return "1"
}

func isNameByte(c byte) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// innermostOpen scans PromQL text (skipping strings, comments and template
// tags) and returns the innermost bracket still open at its end, with the
// text before that bracket; 0 when none is open.
func innermostOpen(s string) (byte, string) {
	type opener struct {
		c   byte
		pos int
	}
	var stack []opener
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			if e := strings.Index(s[i+2:], "}}"); e >= 0 {
				i += 2 + e + 1
			} else {
				i = len(s)
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '#':
			if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 {
				i += nl
			} else {
				i = len(s)
			}
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, opener{c, i})
		case c == ')' || c == ']' || c == '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) == 0 {
		return 0, ""
	}
	top := stack[len(stack)-1]
	return top.c, s[:top.pos]
}

// OriginalOffset maps a byte offset of Query back to the original text. An
// offset inside a substituted value maps to the start of its placeholder.
func (s *Substitution) OriginalOffset(off int) int {
	for _, sg := range s.segs {
		if off < sg.newStart || off >= sg.newStart+sg.newLen {
			continue
		}
		if sg.ph != nil {
			return sg.origStart
		}
		return sg.origStart + off - sg.newStart
	}
	return len(s.Original)
}

// PlaceholdersIn returns the placeholders whose substituted text overlaps the
// byte range [start, end) of Query.
func (s *Substitution) PlaceholdersIn(start, end int) []int {
	var out []int
	for _, sg := range s.segs {
		if sg.ph == nil {
			continue
		}
		a, b := sg.newStart, sg.newStart+sg.newLen
		if a < end && start < b || a == b && a >= start && a <= end {
			for i := range s.Placeholders {
				if s.Placeholders[i].Start == sg.ph.Start {
					out = append(out, i)
				}
			}
		}
	}
	return out
}

// Error is a parse failure at a byte offset of the parsed text.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// Parse parses q with the Prometheus parser. A failure is an *Error with the
// offset of the first problem.
func Parse(q string) (parser.Expr, error) {
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(q)
	if err == nil {
		return expr, nil
	}
	var perrs parser.ParseErrors
	if errors.As(err, &perrs) && len(perrs) > 0 {
		pe := perrs[0]
		msg := err.Error()
		if pe.Err != nil {
			msg = pe.Err.Error()
		}
		return nil, &Error{Offset: clamp(int(pe.PositionRange.Start), len(q)), Msg: msg}
	}
	return nil, &Error{Offset: 0, Msg: err.Error()}
}

func clamp(v, n int) int {
	if v < 0 {
		return 0
	}
	if v > n {
		return n
	}
	return v
}

// Matcher is one label matcher of a vector selector.
type Matcher struct {
	Metric string // the selector's metric name, or ""
	Name   string
	Type   labels.MatchType
	Value  string
	// Start and End span `name op "value"` in the parsed text; ValueStart
	// and ValueEnd span the quoted value (quotes included).
	Start, End           int
	ValueStart, ValueEnd int
}

// Op returns the matcher's operator as written in PromQL.
func (m Matcher) Op() string { return m.Type.String() }

// matcherAt matches one label matcher at the start of s, as the regular
// expression
//
//	^\s*([A-Za-z_][A-Za-z0-9_]*|"(?:[^"\\]|\\.)*")\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*,?
//
// would (its FindStringSubmatchIndex: the whole match, the name, the
// operator and the quoted value), or ok false. A scanner, because the
// regular expression's backtracking was a sixth of preparing a query.
func matcherAt(s string) (m [8]int, ok bool) {
	i := skipSpace(s, 0)
	m[2] = i
	switch {
	case i < len(s) && (s[i] == '_' || 'a' <= s[i] && s[i] <= 'z' || 'A' <= s[i] && s[i] <= 'Z'):
		i++
		for i < len(s) && (s[i] == '_' || 'a' <= s[i] && s[i] <= 'z' || 'A' <= s[i] && s[i] <= 'Z' || '0' <= s[i] && s[i] <= '9') {
			i++
		}
	case i < len(s) && s[i] == '"':
		if i = quotedEnd(s, i); i < 0 {
			return m, false
		}
	default:
		return m, false
	}
	m[3] = i
	i = skipSpace(s, i)
	m[4] = i
	switch {
	case strings.HasPrefix(s[i:], "=~"), strings.HasPrefix(s[i:], "!~"), strings.HasPrefix(s[i:], "!="):
		i += 2
	case strings.HasPrefix(s[i:], "="):
		i++
	default:
		return m, false
	}
	m[5] = i
	i = skipSpace(s, i)
	m[6] = i
	if i >= len(s) {
		return m, false
	}
	switch s[i] {
	case '"', '\'':
		i = quotedEnd(s, i)
	case '`':
		if e := strings.IndexByte(s[i+1:], '`'); e >= 0 {
			i += e + 2
		} else {
			i = -1
		}
	default:
		i = -1
	}
	if i < 0 {
		return m, false
	}
	m[7] = i
	i = skipSpace(s, i)
	if i < len(s) && s[i] == ',' {
		i++
	}
	m[0], m[1] = 0, i
	return m, true
}

// skipSpace returns the offset of the first byte at or after i that is not
// \s (space, \t, \n, \f, \r).
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	return i
}

// quotedEnd returns the offset just past the string quoted with s[at] that
// starts at at, or -1 when it does not close: a backslash escapes any byte
// but a newline, as (?:[^"\\]|\\.)* reads it.
func quotedEnd(s string, at int) int {
	q := s[at]
	for i := at + 1; i < len(s); i++ {
		switch s[i] {
		case q:
			return i + 1
		case '\\':
			if i+1 >= len(s) || s[i+1] == '\n' {
				return -1
			}
			i++
		}
	}
	return -1
}

// Matchers lists the explicit label matchers of every vector selector in expr
// (parsed from q), in query order. The implicit `__name__` matcher of a
// metric name is left out.
func Matchers(expr parser.Expr, q string) []Matcher {
	var out []Matcher
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		pr := vs.PositionRange()
		start, end := clamp(int(pr.Start), len(q)), clamp(int(pr.End), len(q))
		text := q[start:end]
		open := strings.IndexByte(text, '{')
		if open < 0 {
			return nil
		}
		off := start + open + 1
		for off < end {
			m, ok := matcherAt(q[off:end])
			if !ok {
				break
			}
			name := q[off+m[2] : off+m[3]]
			op := q[off+m[4] : off+m[5]]
			raw := q[off+m[6] : off+m[7]]
			mt := Matcher{Metric: vs.Name, Name: strings.Trim(name, `"`), Start: off + m[2], End: off + m[7],
				ValueStart: off + m[6], ValueEnd: off + m[7]}
			mt.Type, mt.Value = matcherFromAST(vs.LabelMatchers, mt.Name, op, raw)
			out = append(out, mt)
			off += m[1]
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	if cap(out) > len(out) {
		out = slices.Clone(out) // kept for the whole lint: drop append's spare capacity
	}
	return out
}

// matcherFromAST takes the unquoted value from the parser's own matcher so
// escapes are decoded the Prometheus way; the text is the fallback.
func matcherFromAST(ms []*labels.Matcher, name, op, raw string) (labels.MatchType, string) {
	want := map[string]labels.MatchType{"=": labels.MatchEqual, "!=": labels.MatchNotEqual, "=~": labels.MatchRegexp, "!~": labels.MatchNotRegexp}[op]
	unq := raw
	if len(raw) >= 2 {
		unq = raw[1 : len(raw)-1]
	}
	for _, m := range ms {
		if m.Name == name && m.Type == want && m.Value == unq {
			return m.Type, m.Value
		}
	}
	return want, unq
}

// MatchesEmpty reports whether the matcher is `=""` or `=~""`: it then
// selects only series that lack the label, which is almost never intended.
func (m Matcher) MatchesEmpty() bool {
	return (m.Type == labels.MatchEqual || m.Type == labels.MatchRegexp) && m.Value == ""
}

// AllPlaceholders returns every `{{...}}` tag of any text, ignoring PromQL
// syntax: Argo resolves tags in the whole metric, comments and non-query
// fields included. InString is always false.
func AllPlaceholders(s string) []Placeholder {
	var out []Placeholder
	for off := 0; ; {
		i := strings.Index(s[off:], "{{")
		if i < 0 {
			return out
		}
		start := off + i
		j := strings.Index(s[start+2:], "}}")
		if j < 0 {
			return out
		}
		end := start + 2 + j + 2
		ph := Placeholder{Tag: strings.TrimSpace(s[start+2 : end-2]), Start: start, End: end}
		ph.Arg, _ = strings.CutPrefix(ph.Tag, "args.")
		if !strings.HasPrefix(ph.Tag, "args.") {
			ph.Arg = ""
		}
		out = append(out, ph)
		off = end
	}
}
