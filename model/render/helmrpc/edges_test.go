package helmrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClientStderrShownOnce: the companion's log lines reach the
// client's stderr as they come, untagged; a crash's output is in the
// error only, its start and end kept and the middle left out; what a
// companion that ends well wrote besides its log reaches stderr when it
// exits.
func TestClientStderrShownOnce(t *testing.T) {
	stderr := &syncBuilder{}
	c := newTestClientWith(t, "", ClientOptions{Stderr: stderr})
	if _, err := c.Render(&Request{ChartDir: "log"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Render(&Request{ChartDir: "bigcrash"})
	var f *FailedError
	if !errors.As(err, &f) {
		t.Fatalf("a crash: %v, want a FailedError", err)
	}
	if !strings.HasPrefix(f.Stderr, "fatal error: the start of the crash\n") || !strings.HasSuffix(f.Stderr, "\nthe end of the crash") ||
		!strings.Contains(f.Stderr, " bytes left out …]") || len(f.Stderr) > stderrHead+stderrTail+100 {
		t.Errorf("a crash's standard error in the error (%d bytes): %q..., want its start, a note and its end, at most %d bytes",
			len(f.Stderr), f.Stderr[:min(200, len(f.Stderr))], stderrHead+stderrTail+100)
	}
	if got := stderr.String(); strings.Contains(got, "crash") {
		t.Errorf("the crash's output reached stderr too: %q", got[:min(200, len(got))])
	}
	if _, err := c.Render(&Request{ChartDir: "log"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := "warning: skipped value for log\nwarning: skipped value for log\na stray line of its own\n"
	if got := stderr.String(); got != want {
		t.Errorf("stderr at the end: %q, want %q (the stray line of the companion that ended well, once)", got, want)
	}
}

// TestClientReleaseMismatch: a companion of another release renders, and
// is reported once; development builds on either side are not compared.
func TestClientReleaseMismatch(t *testing.T) {
	cases := []struct {
		companion, client string
		report            bool
	}{
		{"v0.2.0", "v0.3.0", true},
		{"v0.3.0-rc.1", "v0.3.0", true},
		{"v0.3.0", "v0.3.0", false},
		{"test", "v0.3.0", false},
		{"v0.2.0", "dev", false},
		{"v0.3.1-0.20261202150405-0123456789ab", "v0.3.0", false},
		{"v0.3.0", "v0.2.1-0.20261202150405-0123456789ab+dirty", false},
	}
	for _, tc := range cases {
		t.Run(tc.companion+" "+tc.client, func(t *testing.T) {
			t.Setenv(fakeVersionEnv, tc.companion)
			var got []Mismatch
			c := newTestClientWith(t, "", ClientOptions{Version: tc.client, Stderr: &syncBuilder{},
				OnMismatch: func(m Mismatch) { got = append(got, m) }})
			for range 3 {
				if _, err := c.Render(&Request{ChartDir: "x"}); err != nil {
					t.Fatal(err)
				}
			}
			exe, _ := os.Executable()
			switch {
			case !tc.report && len(got) > 0:
				t.Errorf("reported %+v", got)
			case tc.report && (len(got) != 1 || got[0] != Mismatch{Path: exe, Version: tc.companion, Want: tc.client}):
				t.Errorf("reported %+v, want once, naming the companion, its version and the client's", got)
			}
		})
	}
}

func TestIsRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.1.0": true, "v1.22.333": true, "v0.2.0-rc.1": true, "v1.0.0-beta": true,
		"dev": false, "": false, "test": false, "(devel)": false, "0.1.0": false, "v0.1": false, "v01.2.3": false,
		"v0.0.0-20261202150405-0123456789ab":        false,
		"v0.3.1-0.20261202150405-0123456789ab":      false,
		"v0.3.0-rc.1.0.20261202150405-0123456789ab": false,
		"v0.3.0+dirty": false,
		"v0.3.1-0.20261202150405-0123456789ab+dirty": false,
	} {
		if got := IsRelease(v); got != want {
			t.Errorf("IsRelease(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestClientContextEndsTheStart: a companion that never says hello is
// killed when the context ends, and the error is the context's.
func TestClientContextEndsTheStart(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("checks the process by signal 0")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv(fakePIDEnv, pidFile)
	var c *Client
	// A longer deadline again when the companion had not started by it
	// (a race build on a busy machine).
	for _, d := range []time.Duration{300 * time.Millisecond, 2 * time.Second, 8 * time.Second} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		c = newTestClient(t, ctx, "mute")
		_, err := c.Render(&Request{ChartDir: "x"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a companion that never says hello, past the deadline: %v, want context.DeadlineExceeded", err)
		}
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
	}
	b, rerr := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(string(b))
	if rerr != nil || pid == 0 {
		t.Fatalf("the companion's PID: %q, %v", b, rerr)
	}
	if proc, err := os.FindProcess(pid); err == nil && proc.Signal(syscall.Signal(0)) == nil {
		t.Errorf("companion %d still runs after the deadline", pid)
	}
	if _, err := c.Render(&Request{ChartDir: "y"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a request after the deadline: %v, want context.DeadlineExceeded", err)
	}
}

// TestServeEndsWithItsInput: Serve returns at the end of its input while
// requests still render (more than it renders at once), answering none
// of them.
func TestServeEndsWithItsInput(t *testing.T) {
	var in bytes.Buffer
	bw := bufio.NewWriter(&in)
	for i := range 3 {
		if err := writeFrame(bw, (&wireRequest{ID: uint64(i + 1), Protocol: ProtocolVersion, ChartDir: "x"}).marshal()); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 3)
	var out syncBuilder
	done := make(chan error, 1)
	go func() {
		done <- Serve(&in, &out, func(*Request) *Response {
			started <- struct{}{}
			<-release
			return &Response{}
		}, ServeOptions{Version: "test", Parallel: 2})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return at the end of its input")
	}
	<-started // one is rendering, or was
	if got := out.String(); got != Hello("test") {
		t.Errorf("Serve wrote %q, want the hello line alone", got)
	}
}

// TestStderrSink: tagged lines are passed on untagged, however the
// writes cut them; the rest is kept.
func TestStderrSink(t *testing.T) {
	var logged bytes.Buffer
	tw := &taggedWriter{w: &logged}
	for _, entry := range []string{"2026/12/02 10:00:00 warning: one\n", "two lines\nin one entry\n", "no newline", " then the rest\n"} {
		if _, err := tw.Write([]byte(entry)); err != nil {
			t.Fatal(err)
		}
	}
	stream := logged.String() + "fatal error: boom\n" + logTag + "late log\n" + "goroutine 1 [running]:\nno end"
	var pass bytes.Buffer
	s := &stderrSink{pass: &pass}
	for i := range len(stream) { // a byte at a time
		if _, err := s.Write([]byte{stream[i]}); err != nil {
			t.Fatal(err)
		}
	}
	kept := s.close()
	if want := "2026/12/02 10:00:00 warning: one\ntwo lines\nin one entry\nno newline then the rest\nlate log\n"; pass.String() != want {
		t.Errorf("passed %q, want %q", pass.String(), want)
	}
	if want := "fatal error: boom\ngoroutine 1 [running]:\nno end"; kept != want {
		t.Errorf("kept %q, want %q", kept, want)
	}
	// A log line longer than maxLine is passed whole.
	pass.Reset()
	s = &stderrSink{pass: &pass}
	long := logTag + strings.Repeat("y", 3*maxLine) + "\n"
	for len(long) > 0 {
		n := min(1000, len(long))
		_, _ = s.Write([]byte(long[:n]))
		long = long[n:]
	}
	if kept := s.close(); kept != "" || pass.Len() != 3*maxLine+1 {
		t.Errorf("a long log line: %d bytes passed, %d kept; want all passed", pass.Len(), len(kept))
	}
}

func TestHeadTail(t *testing.T) {
	var h headTail
	_, _ = h.Write([]byte("short\n"))
	if got := h.String(); got != "short" {
		t.Errorf("%q", got)
	}
	h = headTail{}
	for i := range 1000 {
		_, _ = h.Write([]byte("line " + strconv.Itoa(i) + "\n"))
	}
	got := h.String()
	if !strings.HasPrefix(got, "line 0\nline 1\n") || !strings.HasSuffix(got, "\nline 999") || len(got) > stderrHead+stderrTail+40 {
		t.Errorf("1000 lines kept as %d bytes: %q...%q", len(got), got[:30], got[len(got)-30:])
	}
	head, rest, _ := strings.Cut(got, "[… ")
	n, tail, _ := strings.Cut(rest, " bytes left out …]\n")
	left, _ := strconv.Atoi(n)
	if int64(len(head)+len(tail)+left+1) != h.total || !strings.HasSuffix(head, "\n") || !strings.HasPrefix(tail, "line ") {
		t.Errorf("kept %d + %d bytes, %s left out, of %d: the note does not add up or a line was cut", len(head), len(tail), n, h.total)
	}
}
