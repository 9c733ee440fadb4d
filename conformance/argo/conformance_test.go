package argoconformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Recorded is the file testdata/conformance/argo/observed/<bundle>.json:
// what the controller did with one scenario bundle, as Views. The main
// module's semantics/plan test compares the planner with it, so `make test`
// catches a regression without the controller.
type Recorded struct {
	Controller string `json:"controller"`
	Bundle     string `json:"bundle"`
	Rollout    string `json:"rollout"`
	States     []View `json:"states"`
	// AbortFrom is the index in States the abort run left the forward path at.
	AbortFrom int    `json:"abortFrom"`
	Abort     []View `json:"abort"`

	wantAbort bool
}

func env(t *testing.T, name string) string {
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("%s is not set: run conformance/argo/run.sh (make conformance-argo), which builds and passes every component", name)
	}
	return v
}

// TestConformance runs every scenario bundle through the real controller and
// compares each state with `rolloutlint plan --format json`.
func TestConformance(t *testing.T) {
	etcd, apiserver, controller := env(t, "ETCD"), env(t, "KUBE_APISERVER"), env(t, "ROLLOUTS_CONTROLLER")
	rolloutlint, argoCRDs, istioCRDs, repo := env(t, "ROLLOUTLINT"), env(t, "ARGO_CRDS"), env(t, "ISTIO_CRDS"), env(t, "REPO")
	version := os.Getenv("ARGO_ROLLOUTS_VERSION")
	record := os.Getenv("RECORD") // a directory: write the observations there

	dir := os.Getenv("CONFORMANCE_DIR") // keep logs for debugging
	if dir == "" {
		dir = t.TempDir()
	}
	began := time.Now()
	cl, err := StartCluster(dir, etcd, apiserver)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e, err := NewEnv(cl)
	if err != nil {
		t.Fatal(err)
	}
	crdFiles, _ := filepath.Glob(filepath.Join(argoCRDs, "*-crd.yaml"))
	crds, err := InstallCRDs(ctx, e.Dyn, append(crdFiles, istioCRDs)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Rec.Start(ctx, e.Dyn); err != nil {
		t.Fatal(err)
	}
	player := &Player{Kube: e.Kube, ReadyAfter: 300 * time.Millisecond}
	go player.Run(ctx)
	if err := cl.StartController(controller); err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster up in %s: %d CRDs, controller %s", time.Since(began).Round(100*time.Millisecond), len(crds), version)
	e.Logf = t.Logf
	e.Rolloutlint, e.Kubeconfig = rolloutlint, cl.Kubeconfig

	bundles, err := Scenarios(filepath.Join(repo, "testdata", "plan"), filepath.Join(repo, "testdata", "conformance", "argo"))
	if err != nil {
		t.Fatal(err)
	}
	if f := os.Getenv("SCENARIOS"); f != "" {
		var keep []string
		for _, b := range bundles {
			if strings.Contains(","+f+",", ","+strings.TrimSuffix(filepath.Base(b), ".yaml")+",") {
				keep = append(keep, b)
			}
		}
		bundles = keep
	}
	if len(bundles) == 0 {
		t.Fatal("no scenario bundles")
	}

	type outcome struct {
		name                     string
		states, rows, live, diff int
		elapsed                  time.Duration
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		recs     []*Recorded
		id       int
	)
	sem := make(chan struct{}, 8)
	t.Run("scenarios", func(t *testing.T) {
		for _, bundle := range bundles {
			name := strings.TrimSuffix(filepath.Base(bundle), ".yaml")
			rel, _ := filepath.Rel(repo, bundle)
			doc, err := RunPlan(rolloutlint, bundle)
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Rollouts) != 1 {
				t.Fatalf("%s: plan has %d Rollouts; a scenario bundle holds one", rel, len(doc.Rollouts))
			}
			p := &doc.Rollouts[0]
			var planStates, planAbort []View
			for _, s := range p.States {
				planStates = append(planStates, PlanView(s))
			}
			for _, s := range p.Abort {
				planAbort = append(planAbort, PlanView(s))
			}
			rec := &Recorded{Controller: "argo-rollouts " + version, Bundle: filepath.ToSlash(rel), Rollout: p.Rollout.Namespace + "/" + p.Rollout.Name, AbortFrom: p.AbortFrom, wantAbort: len(p.Abort) > 0}
			var recMu sync.Mutex
			recs = append(recs, rec)
			for _, abort := range []bool{false, true} {
				if abort && len(p.Abort) == 0 {
					continue
				}
				mu.Lock()
				id++
				runID := id
				mu.Unlock()
				path := "forward"
				if abort {
					path = "abort"
				}
				t.Run(name+"/"+path, func(t *testing.T) {
					t.Parallel()
					sem <- struct{}{}
					defer func() { <-sem }()
					obs, err := e.Execute(ctx, Run{ID: runID, Bundle: bundle, Abort: abort, Plan: p})
					if errors.Is(err, ErrNoRest) {
						recMu.Lock()
						rec.wantAbort = false
						recMu.Unlock()
						t.Skip(err)
					}
					if err != nil {
						t.Fatal(err)
					}
					var rows []Row
					states := len(obs.States) + len(obs.Abort)
					if abort {
						cut := min(p.AbortFrom+1, len(planStates))
						rows = append(rows, Compare(planStates[:cut], obs.States)...)
						rows = append(rows, Compare(planAbort, obs.Abort)...)
						recMu.Lock()
						rec.Abort = obs.Abort
						recMu.Unlock()
					} else {
						rows = Compare(planStates, obs.States)
						recMu.Lock()
						rec.States = obs.States
						recMu.Unlock()
					}
					// plan --cluster at each pause the run promoted or aborted
					// at: the same controller as judge, from the live state.
					for _, lp := range obs.FromLive {
						rows = append(rows, CompareFromLive(lp, obs)...)
					}
					diff := 0
					for _, r := range rows {
						if r.Differs() {
							diff++
						}
					}
					mu.Lock()
					outcomes = append(outcomes, outcome{name: name + "/" + path, states: states, rows: len(rows), live: len(obs.FromLive), diff: diff, elapsed: obs.Elapsed})
					mu.Unlock()
					if diff > 0 {
						t.Errorf("%s %s path: %d of %d compared fields differ from the controller:\n%s\nall rows:\n%s", rel, path, diff, len(rows), Table(rows, false), Table(rows, true))
					} else {
						t.Logf("%s %s path: %d states, %d fields agree (%s)\n%s", rel, path, states, len(rows), obs.Elapsed.Round(100*time.Millisecond), Table(rows, true))
					}
				})
			}
		}
	})
	if record != "" {
		for _, rec := range recs {
			name := strings.TrimSuffix(filepath.Base(rec.Bundle), ".yaml")
			if err := writeRecorded(filepath.Join(record, name+".json"), rec); err != nil {
				t.Error(err)
			}
		}
	}
	for _, err := range append(player.Errors(), e.Rec.Errors()...) {
		t.Logf("note: %v", err)
	}
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].name < outcomes[j].name })
	var b strings.Builder
	fmt.Fprintf(&b, "%-32s %7s %7s %5s %6s %8s\n", "SCENARIO", "STATES", "FIELDS", "LIVE", "DIFFS", "TIME")
	tot := outcome{}
	for _, o := range outcomes {
		fmt.Fprintf(&b, "%-32s %7d %7d %5d %6d %7.1fs\n", o.name, o.states, o.rows, o.live, o.diff, o.elapsed.Seconds())
		tot.states, tot.rows, tot.live, tot.diff = tot.states+o.states, tot.rows+o.rows, tot.live+o.live, tot.diff+o.diff
	}
	fmt.Fprintf(&b, "%-32s %7d %7d %5d %6d %7.1fs\n", "total", tot.states, tot.rows, tot.live, tot.diff, time.Since(began).Seconds())
	t.Logf("summary:\n%s", b.String())
}

func writeRecorded(path string, rec *Recorded) error {
	if len(rec.States) == 0 || rec.wantAbort && len(rec.Abort) == 0 {
		return nil // a run failed: keep the old file
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
