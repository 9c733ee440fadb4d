package planreport_test

import (
	"bytes"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/report/planreport"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// streamBundle is a generated bundle of many Rollouts, some with mistakes
// (rejected ones among them), and the rejections of every fifth plan.
func streamBundle(t *testing.T) (m *xds.Model, sc *xds.Scoper, n int, at func(int, *plan.Planner) *plan.Plan, rejected map[plan.Object][]planreport.Rejection) {
	t.Helper()
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 300, MistakeRate: 0.2, Seed: 7}), load.Options{})
	m, err := xds.ForVersion(xds.DefaultVersion)
	if err != nil {
		t.Fatal(err)
	}
	n, each := plan.EachIn(g) // in the writers' Planners: the plans must not outlive their use
	if n < 300 {
		t.Fatalf("%d Rollouts in the bundle, want at least 300", n)
	}
	rejected = map[plan.Object][]planreport.Rejection{}
	for i := 0; i < n; i += 5 {
		if p := each(i, nil); p != nil {
			rejected[p.Rollout] = []planreport.Rejection{{RuleID: "RL1001", Message: "refused", File: "f.yaml", Line: i + 1, Column: 3}}
		}
	}
	// Every seventh Rollout has no plan: what Write leaves out must not
	// change the separators around it.
	at = func(i int, pl *plan.Planner) *plan.Plan {
		if i%7 == 3 {
			return nil
		}
		return each(i, pl)
	}
	return m, xds.NewScoper(g), n, at, rejected
}

// withProcs runs f with GOMAXPROCS set to n.
func withProcs(n int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	f()
}

// Write plans and formats Rollouts on several goroutines and writes them in
// input order: its bytes on a bundle of hundreds of Rollouts must be those
// of the serial Write (one CPU) and of the format's Writer on Build's
// document, run after run.
func TestWriteParallelMatchesSerial(t *testing.T) {
	m, sc, n, at, rejected := streamBundle(t)
	var plans []*plan.Plan
	for i := range n {
		if p := at(i, nil); p != nil {
			plans = append(plans, p)
		}
	}
	for _, format := range []string{"text", "json"} {
		var want bytes.Buffer
		if err := planreport.Formats[format](&want, planreport.Build(m, sc, plans, rejected)); err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{1, 2, 4} {
			for run := range 2 {
				var got bytes.Buffer
				var err error
				withProcs(procs, func() { err = planreport.Write(&got, format, m, sc, n, at, rejected) })
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%s, GOMAXPROCS %d, run %d: Write's %d bytes differ from the document's %d", format, procs, run, got.Len(), want.Len())
				}
			}
		}
	}
}

// failWriter accepts limit bytes, then fails every write.
type failWriter struct {
	limit, n int
}

var errClosed = errors.New("closed pipe")

func (w *failWriter) Write(b []byte) (int, error) {
	if w.n+len(b) > w.limit {
		return 0, errClosed
	}
	w.n += len(b)
	return len(b), nil
}

// A write error in the middle of the stream is Write's error, and it stops
// the planning: the Rollouts after the window in flight are not planned.
func TestWriteStopsAtWriteError(t *testing.T) {
	m, sc, n, at, rejected := streamBundle(t)
	for _, format := range []string{"text", "json"} {
		for _, procs := range []int{1, 2, 4} {
			var calls atomic.Int64
			counted := func(i int, pl *plan.Planner) *plan.Plan {
				calls.Add(1)
				return at(i, pl)
			}
			before := runtime.NumGoroutine()
			var err error
			withProcs(procs, func() {
				err = planreport.Write(&failWriter{limit: 200 << 10}, format, m, sc, n, counted, rejected)
			})
			if !errors.Is(err, errClosed) {
				t.Fatalf("%s, GOMAXPROCS %d: Write returned %v, want the writer's error", format, procs, err)
			}
			if c := calls.Load(); c >= int64(n)/2 {
				t.Errorf("%s, GOMAXPROCS %d: %d of %d Rollouts planned after the write failed early", format, procs, c, n)
			}
			if after := runtime.NumGoroutine(); after > before {
				t.Errorf("%s, GOMAXPROCS %d: %d goroutines left running", format, procs, after-before)
			}
		}
	}
}

// WriteBundles over a bundle split in parts (one empty, each with its unit
// and the rejections of its own) writes what Write writes of the whole with
// the units added: the bytes of the format's Writer on BuildBundles'
// document, whatever the goroutines.
func TestWriteBundlesMatchesDocument(t *testing.T) {
	m, sc, n, at, rejected := streamBundle(t)
	part := func(from, to int, u *planreport.Unit) planreport.Bundle {
		return planreport.Bundle{N: to - from, Scoper: sc, Rejected: rejected,
			At:     func(i int, pl *plan.Planner) *plan.Plan { return at(from+i, pl) },
			Origin: func(*plan.Plan) (*planreport.Unit, string, int) { return u, "", 0 }}
	}
	bundles := []planreport.Bundle{
		part(0, 40, &planreport.Unit{Kind: "kustomize", Dir: "overlays/dev"}),
		part(40, 40, nil),
		part(40, n, &planreport.Unit{Kind: "helm", Dir: "charts/app", Application: "argocd/app"}),
	}
	for _, format := range []string{"text", "json", "markdown"} {
		var want bytes.Buffer
		if err := planreport.Formats[format](&want, planreport.BuildBundles(m, bundles)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(want.Bytes(), []byte("charts/app")) || !bytes.Contains(want.Bytes(), []byte("overlays/dev")) {
			t.Fatalf("%s: the document names no unit", format)
		}
		var whole bytes.Buffer
		if err := planreport.Write(&whole, format, m, sc, n, at, rejected); err != nil {
			t.Fatal(err)
		}
		if whole.Len() >= want.Len() {
			t.Errorf("%s: with units %d bytes, without %d: the units add nothing", format, want.Len(), whole.Len())
		}
		for _, procs := range []int{1, 2, 4} {
			var got bytes.Buffer
			var err error
			withProcs(procs, func() { err = planreport.WriteBundles(&got, format, m, bundles) })
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s, GOMAXPROCS %d: WriteBundles' %d bytes differ from the document's %d", format, procs, got.Len(), want.Len())
			}
		}
	}
}
