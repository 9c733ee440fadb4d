package render

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/version"
	"github.com/rolloutlint/rolloutlint/model/render/helmengine"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
	"github.com/rolloutlint/rolloutlint/model/render/helmtest"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// renderAll renders units at once, as a lint does, and closes the renderer.
func renderAll(t *testing.T, r *Renderer, us []*units.Unit) []*Result {
	t.Helper()
	out := make([]*Result, len(us))
	var wg sync.WaitGroup
	for i, u := range us {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = r.Render(u)
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompanionOfAnotherRelease: a companion of another release that
// speaks the protocol renders the charts as usual, and a note on stderr
// says so once, naming both versions, both binaries and the command that
// installs the matching companion.
func TestCompanionOfAnotherRelease(t *testing.T) {
	helmtest.Release(t, "v0.2.0")
	defer func(v string) { version.Version = v }(version.Version)
	version.Version = "v0.3.0"
	var stderr syncBuffer
	us := chartUnits(t)
	got := renderAll(t, New(Options{Stderr: &stderr}), us)
	inProcess := New(Options{Helm: helmengine.InProcess{}})
	for i, u := range us {
		if s, want := summary(got[i]), summary(inProcess.Render(u)); s != want {
			t.Errorf("%s rendered by a companion of another release:\n%s\nin process:\n%s", u.Dir, s, want)
		}
	}
	note := stderr.String()
	self, _ := os.Executable()
	for _, want := range []string{"rolloutlint: warning: " + os.Getenv(helmrpc.EnvPath) + " is v0.2.0, and this rolloutlint (" + self + ") is v0.3.0",
		"charts are rendered with the Helm library of rolloutlint-helm v0.2.0",
		"install the matching one with `go install github.com/rolloutlint/rolloutlint/cmd/rolloutlint-helm@v0.3.0`\n"} {
		if !strings.Contains(note, want) {
			t.Errorf("stderr %q lacks %q", note, want)
		}
	}
	if n := strings.Count(note, "rolloutlint: warning:"); n != 1 {
		t.Errorf("the note is on stderr %d times, want once", n)
	}
}

// TestCompanionOfADevelopmentBuild: development builds (the test binary
// is "dev", its companion "test") are not compared: nothing on stderr.
func TestCompanionOfADevelopmentBuild(t *testing.T) {
	var stderr syncBuffer
	renderAll(t, New(Options{Stderr: &stderr}), chartUnits(t))
	if s := stderr.String(); s != "" {
		t.Errorf("stderr %q, want nothing", s)
	}
}

// TestCompanionCrashShownOnce: a companion that crashes writing megabytes
// to its standard error gives one RL0010 carrying the start and the end
// of it, a few kilobytes, and nothing on stderr.
func TestCompanionCrashShownOnce(t *testing.T) {
	helmtest.Crash(t)
	var stderr syncBuffer
	u := chartUnits(t)[0]
	res := renderAll(t, New(Options{Stderr: &stderr}), []*units.Unit{u})[0]
	if len(res.Problems) != 1 {
		t.Fatalf("problems %v, want one", res.Problems)
	}
	msg := res.Problems[0].Message
	for _, want := range []string{"chart " + u.Dir + " was not rendered", "exited while rendering (exit status 2)",
		"its standard error:\nfatal error: helmtest crashes\n", " bytes left out …]\n", "\nthe end of the crash"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q", want)
		}
	}
	if len(msg) > 5000 {
		t.Errorf("the message is %d bytes, want a few kilobytes", len(msg))
	}
	if s := stderr.String(); s != "" {
		t.Errorf("the crash reached stderr too: %q", s[:min(len(s), 300)])
	}
}

// TestCompanionWarningsReachStderr: what Helm logs (its warnings) reaches
// stderr as it did with Helm in process, once, without the companion's
// tag, and the charts render as usual.
func TestCompanionWarningsReachStderr(t *testing.T) {
	helmtest.Warn(t)
	var stderr syncBuffer
	us := chartUnits(t)
	renderAll(t, New(Options{Stderr: &stderr}), us)
	s := stderr.String()
	if strings.ContainsRune(s, '\x1f') {
		t.Errorf("stderr holds the companion's log tag: %q", s)
	}
	for _, u := range us {
		// Charts with a missing dependency or a bad value file are not rendered.
		if n := strings.Count(s, " warning: helmtest warns about "+lastElem(u.Dir)+"\n"); n > 1 {
			t.Errorf("the warning about %s is on stderr %d times", u.Dir, n)
		}
	}
	if n := strings.Count(s, " warning: helmtest warns about "); n < 5 {
		t.Errorf("%d warnings on stderr, want one a chart (5 or more): %q", n, s)
	}
}

func lastElem(dir string) string { return dir[strings.LastIndexAny(dir, `/\`)+1:] }

// TestContextStopsTheCompanion: a renderer whose context ends while the
// companion hangs fails the charts with the context's error, promptly,
// and the companion it started is gone.
func TestContextStopsTheCompanion(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("checks the process by signal 0")
	}
	pids := helmtest.Hang(t)
	us := chartUnits(t)
	var got []*Result
	started := helmtest.UnderDeadline(t, pids, func(ctx context.Context) { got = renderAll(t, New(Options{Context: ctx}), us) })
	for i, res := range got {
		if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "context deadline exceeded") {
			t.Errorf("%s: %v, want one problem with the context's error", us[i].Dir, res.Problems)
		}
	}
	if len(started) != 1 {
		t.Errorf("companions %v started, want one", started)
	}
	for _, pid := range started {
		if helmtest.Running(pid) {
			t.Errorf("companion %d still runs", pid)
		}
	}
}
