package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

func TestQueueServesInArrivalOrder(t *testing.T) {
	q := newQueue(1, 100, NewMetrics(nil))
	if err := q.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := q.acquire(context.Background()); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			q.release()
		}()
		// wait until this one is queued before the next arrives
		for value(t, q.m.queued) != float64(i+1) {
			time.Sleep(time.Millisecond)
		}
	}
	q.release()
	wg.Wait()
	for i, got := range order {
		if got != i {
			t.Fatalf("served out of arrival order: %v", order)
		}
	}
}

func TestQueueTimeoutAndFull(t *testing.T) {
	q := newQueue(1, 1, NewMetrics(nil))
	if err := q.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- q.acquire(ctx) }()
	for value(t, q.m.queued) != 1 {
		time.Sleep(time.Millisecond)
	}
	if err := q.acquire(context.Background()); !errors.Is(err, errQueueFull) {
		t.Errorf("a second waiter past the bound of 1: %v", err)
	}
	if err := <-errc; !errors.Is(err, errQueueTimeout) {
		t.Errorf("waiter past its deadline: %v", err)
	}
	if n := value(t, q.m.queued); n != 0 {
		t.Errorf("%v reviews still counted as queued", n)
	}
}

// blockingRule holds every lint until release is closed, and counts the lints
// that have started.
type blockingRule struct {
	started chan struct{}
	release chan struct{}
}

func (b *blockingRule) rule() *rules.Rule {
	return &rules.Rule{ID: "RL0997", Name: "blocks", Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Error, Source: rules.SourceGo,
		Run: func(*rules.Pass) error { b.started <- struct{}{}; <-b.release; return nil }}
}

// TestBurstIsBoundedAndAbandonedLintsKeepTheirSlot checks that no more lints
// run than the slots, that a review whose deadline passes while queued or
// linting is answered by the failure mode, counted and logged, and that a
// lint abandoned at its deadline holds its slot until it has really ended.
func TestBurstIsBoundedAndAbandonedLintsKeepTheirSlot(t *testing.T) {
	b := &blockingRule{started: make(chan struct{}, 100), release: make(chan struct{})}
	var logs strings.Builder
	var logMu sync.Mutex
	h := newTestHandler(Options{Concurrency: 2, Timeout: 100 * time.Millisecond, Failure: FailClosed,
		Linter: &Linter{Rules: append(all.Rules(), b.rule())}, Log: newLockedLogger(&logs, &logMu)})
	var wg sync.WaitGroup
	results := make([]bool, 6)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, resp := post(t, h, reviewJSON(t, fmt.Sprintf("b%d", i), "CREATE", goodRollout, false))
			results[i] = resp != nil && resp.Allowed
		}()
	}
	wg.Wait() // every review answered (denied: fail-closed) while the lints are still blocked
	for i, allowed := range results {
		if allowed {
			t.Errorf("review %d allowed unchecked in fail-closed mode", i)
		}
	}
	if n := len(b.started); n != 2 {
		t.Errorf("%d lints started, want the 2 slots", n)
	}
	m := h.opts.Metrics
	if got := value(t, m.inFlight); got != 2 {
		t.Errorf("in flight after the answers: %v, want the 2 abandoned lints", got)
	}
	if q, l := value(t, m.timeouts.WithLabelValues("queue")), value(t, m.timeouts.WithLabelValues("lint")); q != 4 || l != 2 {
		t.Errorf("timeouts: queue %v lint %v, want 4 and 2", q, l)
	}
	if got := value(t, m.failures.WithLabelValues(reasonQueueTimeout, decDenied)); got != 4 {
		t.Errorf("queue failures answered denied: %v", got)
	}
	close(b.release)
	for value(t, m.inFlight) != 0 {
		time.Sleep(time.Millisecond)
	}
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	if strings.Count(out, "admission review not linted") != 6 || !strings.Contains(out, "name=checkout") || !strings.Contains(out, "reason=queue_timeout") {
		t.Errorf("failures not logged with the object:\n%s", out)
	}
}

func TestBudgetFollowsTheAPIServersTimeout(t *testing.T) {
	h := newTestHandler(Options{Timeout: 4 * time.Second})
	for url, want := range map[string]time.Duration{
		ValidatePath:                  4 * time.Second,
		ValidatePath + "?timeout=2s":  1600 * time.Millisecond,
		ValidatePath + "?timeout=30s": 4 * time.Second,
		ValidatePath + "?timeout=bad": 4 * time.Second,
	} {
		if got := h.budget(httptest.NewRequest(http.MethodPost, url, nil)); got != want {
			t.Errorf("%s: budget %s, want %s", url, got, want)
		}
	}
}

func TestDrainWithdrawsReadiness(t *testing.T) {
	h := newTestHandler(Options{})
	code := func() int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	if code() != http.StatusOK {
		t.Fatal("not ready before drain")
	}
	h.Drain()
	if code() != http.StatusServiceUnavailable {
		t.Fatal("still ready after drain")
	}
	if _, resp := post(t, h, reviewJSON(t, "d", "CREATE", badRollout, false)); resp == nil || resp.Allowed {
		t.Fatalf("a draining handler stopped reviewing: %+v", resp)
	}
}

// lockedWriter serialises writes of concurrent reviews to one builder.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func newLockedLogger(b *strings.Builder, mu *sync.Mutex) *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{mu, b}, nil))
}

// value reads a gauge or counter.
func value(t testing.TB, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	t.Fatalf("not a gauge or counter: %v", c.Desc())
	return 0
}

// TestLintIsCancelledAtTheDeadline: a rule that runs until its pass's context
// ends is stopped when the review's deadline passes, so its slot comes back.
func TestLintIsCancelledAtTheDeadline(t *testing.T) {
	stopped := make(chan error, 1)
	waits := &rules.Rule{ID: "RL0996", Name: "waits", Summary: "s", Doc: rules.Doc{Why: "d"}, Severity: rules.Error, Source: rules.SourceGo,
		Run: func(p *rules.Pass) error {
			<-p.Context().Done()
			stopped <- p.Context().Err()
			return p.Context().Err()
		}}
	h := newTestHandler(Options{Concurrency: 1, Timeout: 50 * time.Millisecond, Linter: &Linter{Rules: append(all.Rules(), waits)}})
	_, resp := post(t, h, reviewJSON(t, "c", "CREATE", goodRollout, false))
	if resp == nil || !resp.Allowed || !strings.Contains(strings.Join(resp.Warnings, " "), "did not check") {
		t.Fatalf("timed-out review: %+v", resp)
	}
	if err := <-stopped; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the rule saw %v", err)
	}
	for value(t, h.opts.Metrics.inFlight) != 0 { // the slot comes back
		time.Sleep(time.Millisecond)
	}
}
