package analysis

import (
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// queryPos is the position of a byte range of a query as written.
func queryPos(g *graph.Graph, q *analysisrun.Query, start, end int) graph.Position {
	return g.PosInScalar(q.Template, q.Path(), start, end)
}

// parsedPos maps a byte range of the substituted query to the query as written.
func parsedPos(g *graph.Graph, q *analysisrun.Query, start, end int) graph.Position {
	s, e := q.Sub.OriginalOffset(start), q.Sub.OriginalOffset(end)
	if end > start && end > 0 {
		e = q.Sub.OriginalOffset(end-1) + 1
	}
	return queryPos(g, q, s, e)
}

// forEachMatcher calls fn for every label matcher of every query the pass
// scans (scannedQueries) that parses.
func forEachMatcher(p *rules.Pass, fn func(q *analysisrun.Query, m promql.Matcher)) {
	for _, q := range scannedQueries(p) {
		if !q.Parsed() {
			continue
		}
		for _, m := range q.Matchers {
			fn(q, m)
		}
	}
}

// related returns the trigger of a query's run, if it has one.
func related(q *analysisrun.Query, what string) []rules.Related {
	if q.Run == nil {
		return nil
	}
	return []rules.Related{trigger(q.Run, what)}
}
