package promcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/analysisrun"
	"github.com/rolloutlint/rolloutlint/semantics/condition"
)

// RuleID and RuleName label the live findings. They are not a registered
// rule: nothing is checked unless --prometheus-url is given.
const (
	RuleID   = "RL4090"
	RuleName = "prometheus-dry-run"
)

// Stats counts what a check did.
type Stats struct {
	Queries int // distinct queries sent
	Skipped int // queries not sent: a value known only at run time or unresolved
	NoData  int
	Errors  int
	Shape   int // results the condition cannot evaluate
}

// Check sends every fully resolved Prometheus query of the bundle once and
// returns a warning for each one the analysis could not use. It stops at the
// first transport failure (ErrUnreachable) rather than fail every query alike.
func Check(ctx context.Context, g *graph.Graph, c *Client) ([]rules.Diagnostic, Stats, error) {
	var st Stats
	answers := map[string]answer{}
	var out []rules.Diagnostic
	seen := map[string]int{} // finding key -> index in out
	for _, q := range analysisrun.Of(g).Queries {
		if !q.Parsed() { // a parse error: RL4011 reports it
			continue
		}
		if !sendable(q) {
			st.Skipped++
			continue
		}
		a, ok := answers[q.Sub.Query]
		if !ok {
			st.Queries++
			res, err := c.Query(ctx, q.Sub.Query)
			if errors.Is(err, ErrUnreachable) {
				return out, st, fmt.Errorf("%w (%d queries answered before)", err, st.Queries-1)
			}
			a = answer{res, err}
			answers[q.Sub.Query] = a
		}
		msg, kind := judge(q, a)
		if msg == "" {
			continue
		}
		var rel []rules.Related
		if q.Run != nil {
			rel = []rules.Related{rules.RelatedAt(q.Run.Refs.Rollout, q.Run.TriggerPath(), q.Run.Describe()+" runs this query")}
		}
		key := q.Template.File + "\x00" + q.Path + "\x00" + msg
		if i, dup := seen[key]; dup { // the same query from another step of the Rollout
			out[i].Related = append(out[i].Related, rel...)
			continue
		}
		seen[key] = len(out)
		switch kind {
		case "nodata":
			st.NoData++
		case "error":
			st.Errors++
		case "shape":
			st.Shape++
		}
		d := rules.Diagnostic{
			RuleID: RuleID, Name: RuleName, Severity: rules.Warning, Resource: q.Template, Path: q.Path,
			Object: q.Template.Ref(), Message: msg,
			Pos:     g.PosInScalar(q.Template, q.Path, firstText(q.Sub.Original), lineEnd(q.Sub.Original)),
			Related: rel,
		}
		out = append(out, d)
	}
	return out, st, nil
}

type answer struct {
	res *Result
	err error
}

// sendable reports whether every placeholder of the query has a value known now.
func sendable(q *analysisrun.Query) bool {
	if len(q.Sub.Unresolved) > 0 {
		return false
	}
	for _, v := range q.Sub.Values {
		if v.Runtime {
			return false
		}
	}
	return true
}

// judge turns an answer into a finding message ("" when the analysis can use it).
func judge(q *analysisrun.Query, a answer) (msg, kind string) {
	who := "metric " + q.Metric.Name
	if q.Run != nil {
		who += " (Rollout " + q.Run.Refs.Rollout.Name + ")"
	}
	if a.err != nil {
		return fmt.Sprintf("%s: Prometheus rejected the query %s: %v; every measurement would error", who, quote(q.Sub.Query), a.err), "error"
	}
	r := a.res
	value, ok := argoValue(r)
	if !ok {
		return fmt.Sprintf("%s: the query returns a %s, which the Argo Rollouts Prometheus provider does not support (\"Prometheus metric type not supported\")", who, r.Type), "shape"
	}
	if r.Type == "vector" && r.Series == 0 {
		return fmt.Sprintf("%s: analysis would see no data: %s returned no series from Prometheus", who, quote(q.Sub.Query)), "nodata"
	}
	for _, cond := range []struct{ field, expr string }{{"successCondition", q.Metric.SuccessCondition}, {"failureCondition", q.Metric.FailureCondition}} {
		if strings.TrimSpace(cond.expr) == "" {
			continue
		}
		if err := condition.Eval(cond.expr, value); err != nil {
			return fmt.Sprintf("%s: %s %q cannot evaluate the %s result %v: %s", who, cond.field, cond.expr, r.Type, value, firstLine(err.Error())), "shape"
		}
	}
	return "", ""
}

func quote(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 160 {
		q = q[:157] + "..."
	}
	return "`" + q + "`"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// firstText and lineEnd span the first non-blank line of the query.
func firstText(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t\r\n"))
}

func lineEnd(s string) int {
	start := firstText(s)
	if i := strings.IndexByte(s[start:], '\n'); i >= 0 {
		return start + i
	}
	return len(s)
}
