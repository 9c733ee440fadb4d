package webhook

import (
	"testing"
	"time"
)

// A worker runs lints one after the other, and a lint that finds every
// worker busy gets a new one instead of waiting for it.
func TestWorkersReuseAndNeverWait(t *testing.T) {
	w := workers{jobs: make(chan func())}
	for range 50 {
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done
		// Time for the worker to get back to waiting for the next lint
		// (a busy machine may not give it that every time).
		time.Sleep(2 * time.Millisecond)
	}
	if n := w.started.Load(); n >= 25 {
		t.Fatalf("50 lints one after the other started %d workers", n)
	}

	release := make(chan struct{})
	blocked := make(chan struct{})
	w.run(func() { close(blocked); <-release })
	<-blocked
	second := make(chan struct{})
	w.run(func() { close(second) })
	select {
	case <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("a lint waited for a busy worker")
	}
	close(release)
}
