package promql

import (
	"bytes"
	"errors"
	"slices"
	"unsafe"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/rolloutlint/rolloutlint/internal/recent"
)

// Summary is what a lint keeps of a parsed query: its value type and label
// matchers, or the parse error. It is a function of the query text alone, so
// Summarize shares one Summary between every caller that parses the same
// text; nobody may modify it (or its Matchers).
type Summary struct {
	// Type is the value type of the query (vector, scalar, …), "" when it
	// does not parse.
	Type parser.ValueType
	// Err is the parse error, offsets in the text; nil when it parses.
	Err *Error
	// Matchers are the label matchers of the query (see Matchers).
	Matchers []Matcher
}

// summarize parses q without the cache.
func summarize(q string) *Summary {
	expr, err := Parse(q)
	var perr *Error
	if errors.As(err, &perr) {
		return &Summary{Err: perr}
	}
	return &Summary{Type: expr.Type(), Matchers: Matchers(expr, q)}
}

// SummaryCacheSize bounds the texts Summarize remembers. A webhook reviews
// the same few templates again and again (the cluster's AnalysisTemplates,
// with their Rollouts' arguments); a lint sees a template's query once per
// Rollout that runs it, the same text when they pass the same arguments.
const SummaryCacheSize = 4096

// summaries remembers recent Summaries by query text. The key is the whole
// text the parser saw, so an entry is never stale: a changed template or
// argument is a different text.
var summaries = recent.New[string, *Summary](SummaryCacheSize)

// Summarize parses q (Parse, then Matchers) and returns the result, from a
// bounded cache shared by every goroutine when the same text was parsed
// recently. The result is shared: read it, never modify it.
func Summarize(q string) *Summary {
	return summaries.Get(q, func() *Summary { return summarize(q) })
}

// SummarizeSubstitution returns Summarize(s.Query), sharing the parse
// between queries that differ only in the values of their string-quoted
// arguments. A Rollout's analysis sends its templates' queries with its own
// service name or hash inside label matchers, so a lint sees as many
// distinct texts as Rollouts but only a few shapes.
//
// Each such value is replaced by as many 'x's, which keeps every offset, and
// that text is parsed (and cached) instead. The two texts parse alike when
// every replaced value lies inside the quoted value of a `=` or `!=` matcher
// (not __name__) written without escapes, and consists of printable ASCII
// other than quotes and backslashes: the lexer reads the same tokens, such a
// matcher cannot fail, and it matches the empty string the same way for
// every non-empty value. The type is then the same and the matchers differ
// only in the replaced values. Anything else is parsed as written.
//
// The Summary is returned by value (its Matchers may be shared: read only),
// so a caller that copies its fields out allocates nothing for it.
func SummarizeSubstitution(s *Substitution) Summary {
	var shape []byte
	for _, sg := range s.segs {
		if !sg.literal || sg.newLen == 0 {
			continue
		}
		if !plainValue(s.Query[sg.newStart : sg.newStart+sg.newLen]) {
			return *Summarize(s.Query)
		}
		if shape == nil {
			shape = []byte(s.Query)
		}
		for i := sg.newStart; i < sg.newStart+sg.newLen; i++ {
			shape[i] = 'x'
		}
	}
	if shape == nil {
		return *Summarize(s.Query)
	}
	// shape is not written to from here on: the cache may keep it as its key.
	sum := Summarize(unsafe.String(unsafe.SliceData(shape), len(shape)))
	if sum.Err != nil {
		return *Summarize(s.Query)
	}
	out := Summary{Type: sum.Type, Matchers: slices.Clone(sum.Matchers)}
	for _, sg := range s.segs {
		if !sg.literal || sg.newLen == 0 {
			continue
		}
		start, end := sg.newStart, sg.newStart+sg.newLen
		k := slices.IndexFunc(out.Matchers, func(m Matcher) bool { return m.ValueStart < start && end < m.ValueEnd })
		if k < 0 {
			return *Summarize(s.Query)
		}
		m := &out.Matchers[k]
		raw := s.Query[m.ValueStart+1 : m.ValueEnd-1]
		if m.Type != labels.MatchEqual && m.Type != labels.MatchNotEqual || m.Name == metricNameLabel ||
			bytes.IndexByte(shape[m.ValueStart+1:m.ValueEnd-1], '\\') >= 0 {
			return *Summarize(s.Query)
		}
		m.Value = raw
	}
	return out
}

// metricNameLabel is the label a metric name is stored under.
const metricNameLabel = "__name__"

// plainValue reports whether v is printable ASCII without quotes or
// backslashes: text that cannot end or escape out of a quoted string.
func plainValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\'' || c == '`' || c == '\\' {
			return false
		}
	}
	return true
}
