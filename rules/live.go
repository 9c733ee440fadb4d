package rules

import (
	"context"
	"errors"

	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// SourceLive marks a rule that asks a running system (RL4090 asks a live
// Prometheus). It is implemented in Go, runs with the Go rules, and only in
// a run that was given the live systems (Pass.Live non-nil: lint
// --prometheus-url); in any other run it is not enabled, so it reports
// nothing and its suppressions are not "unused". Config severities and
// suppressions apply to it like to any rule.
const SourceLive Source = "live"

// Live is what a run gives the live rules: the running systems they may ask
// and where they tell the user what they did. Their queries run under the
// pass's context (Pass.Context).
type Live struct {
	// Prometheus answers PromQL instant queries; nil when the run was not
	// given one.
	Prometheus Prometheus
	// Notef takes one line a live rule writes about what it did (queries
	// sent, skipped); the lint command prints it on standard error. Nil
	// drops it.
	Notef func(format string, args ...any)
}

// Note hands one line to Notef, when set.
func (l *Live) Note(format string, args ...any) {
	if l != nil && l.Notef != nil {
		l.Notef(format, args...)
	}
}

// Prometheus is a live Prometheus.
type Prometheus interface {
	// Query runs one instant query at the current time. An error that wraps
	// ErrUnreachable means Prometheus cannot be asked at all (a refused
	// connection, a TLS failure); any other error is Prometheus' answer to
	// this query (bad_data, a timeout).
	Query(ctx context.Context, query string) (*promql.Result, error)
}

// ErrUnreachable is wrapped by errors of a live system that cannot be asked
// at all. A live rule returns it (wrapped) from Run and stops; the driver
// then fails the run (analyzer.Result.LiveErr) instead of reporting a broken
// rule, since asking the same server again would fail alike.
var ErrUnreachable = errors.New("unreachable")
