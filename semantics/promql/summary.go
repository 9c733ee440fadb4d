package promql

import (
	"errors"

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
