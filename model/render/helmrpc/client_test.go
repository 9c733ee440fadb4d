package helmrpc

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEnv selects what the test binary does when a client starts it as
// the companion (see fakeCompanion).
const fakeEnv = "HELMRPC_TEST_FAKE"

// fakeVersionEnv is the version a working fake companion says it is.
const fakeVersionEnv = "HELMRPC_TEST_VERSION"

// fakePIDEnv names the file the mute fake companion writes its PID to.
const fakePIDEnv = "HELMRPC_TEST_PIDFILE"

// TestMain makes the test binary a companion when it is run as
// `BINARY serve`: the behaviour named by $HELMRPC_TEST_FAKE.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == ServeCommand {
		os.Exit(fakeCompanion(os.Getenv(fakeEnv)))
	}
	os.Exit(m.Run())
}

// fakeCompanion behaves as a companion, good or broken.
func fakeCompanion(mode string) int {
	switch mode {
	case "protocol":
		fmt.Print(helloPrefix + "99 v9.9.9\n")
		_, _ = os.Stdin.Read(make([]byte, 1))
		return 0
	case "not-hello":
		fmt.Println("Usage: something else entirely")
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "cannot start: no configuration")
		return 4
	case "mute": // says nothing, and records its PID
		if err := os.WriteFile(os.Getenv(fakePIDEnv), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		time.Sleep(time.Minute)
		return 0
	}
	LogTo(os.Stderr)
	log.SetFlags(0)
	version := os.Getenv(fakeVersionEnv)
	if version == "" {
		version = "test"
	}
	// A working companion whose requests can break it: ChartDir "crash"
	// exits, "garbage" writes what is not the protocol, "panic" panics, "slow"
	// sleeps; every response names the process (ChartName) and echoes the
	// values (Files).
	var out sync.Mutex
	err := Serve(os.Stdin, os.Stdout, func(req *Request) *Response {
		switch req.ChartDir {
		case "crash":
			fmt.Fprintln(os.Stderr, "fatal: the chart broke me")
			os.Exit(3)
		case "garbage":
			out.Lock()
			_, _ = os.Stdout.Write([]byte("\x07garbage that is not the protocol at all"))
			time.Sleep(time.Minute)
		case "panic":
			panic("a bug")
		case "slow":
			time.Sleep(300 * time.Millisecond)
		case "hang":
			time.Sleep(time.Minute)
		case "log":
			log.Printf("warning: skipped value for %s", req.ChartDir)
			fmt.Fprint(os.Stderr, "a stray line of its own\n")
		case "bigcrash":
			fmt.Fprintln(os.Stderr, "fatal error: the start of the crash")
			for range 10000 {
				fmt.Fprintln(os.Stderr, strings.Repeat("stack ", 20))
			}
			fmt.Fprintln(os.Stderr, "the end of the crash")
			os.Exit(3)
		}
		return &Response{ChartName: strconv.Itoa(os.Getpid()), Files: []File{{Name: req.ChartDir, Text: fmt.Sprintf("%#v", req.Values)}},
			KubeVersion: req.KubeVersion}
	}, ServeOptions{Version: version})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// newTestClient is a client whose companion is this test binary in mode.
func newTestClient(t *testing.T, ctx context.Context, mode string) *Client {
	t.Helper()
	return newTestClientWith(t, mode, ClientOptions{Context: ctx, Stderr: &syncBuilder{}})
}

// newTestClientWith is newTestClient with options (Locate is set).
func newTestClientWith(t *testing.T, mode string, opts ClientOptions) *Client {
	t.Helper()
	t.Setenv(fakeEnv, mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Locate = func() (string, error) { return exe, nil }
	c := NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// syncBuilder is a strings.Builder safe for concurrent writes.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestClientOneProcessForEveryRequest: the companion starts at the first
// request and answers every request of the run, concurrent or not, each
// with its own values.
func TestClientOneProcessForEveryRequest(t *testing.T) {
	c := newTestClient(t, nil, "")
	if c.proc != nil {
		t.Fatal("the companion started before the first request")
	}
	var wg sync.WaitGroup
	pids := make([]string, 40)
	errs := make([]error, 40)
	for i := range pids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := fmt.Sprint("chart", i)
			resp, err := c.Render(&Request{ChartDir: dir, Values: map[string]any{"i": i}, KubeVersion: "1.30"})
			if err != nil {
				errs[i] = err
				return
			}
			if len(resp.Files) != 1 || resp.Files[0].Name != dir || resp.Files[0].Text != fmt.Sprintf("map[string]interface {}{\"i\":%d}", i) {
				errs[i] = fmt.Errorf("request %d got the answer %+v", i, resp)
			}
			pids[i] = resp.ChartName
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	for i, pid := range pids {
		if pid != pids[0] {
			t.Fatalf("request %d was answered by process %s, request 0 by %s: want one companion", i, pid, pids[0])
		}
	}
	p := c.proc
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	default:
		t.Error("the companion still runs after Close")
	}
	if _, err := c.Render(&Request{ChartDir: "late"}); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("a request after Close: %v, want an error saying the companion was stopped", err)
	}
}

// TestClientCrashFailsOnlyItsChart: a chart that makes the companion exit
// fails with the exit status and the end of its standard error; the
// requests in flight with it are sent again to a new companion and render.
func TestClientCrashFailsOnlyItsChart(t *testing.T) {
	c := newTestClient(t, nil, "")
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := "slow"
			if i == 5 {
				dir = "crash"
			}
			_, errs[i] = c.Render(&Request{ChartDir: dir})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if i == 5 {
			var f *FailedError
			if !errors.As(err, &f) || !strings.Contains(f.Reason, "exit status 3") || f.Stderr != "fatal: the chart broke me" {
				t.Errorf("the crashing chart: %v, want a FailedError with exit status 3 and its stderr", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("request %d, in flight when the companion crashed: %v", i, err)
		}
	}
	if _, err := c.Render(&Request{ChartDir: "after"}); err != nil {
		t.Errorf("a request after the crash: %v", err)
	}
}

// TestClientGarbageAndPanic: a companion that writes what is not the
// protocol is an error, not a hang; a panic in the handler answers its
// request and the companion goes on.
func TestClientGarbageAndPanic(t *testing.T) {
	c := newTestClient(t, nil, "")
	resp, err := c.Render(&Request{ChartDir: "panic"})
	if err != nil || resp.Stage != StagePanic || resp.Error != "a bug" {
		t.Errorf("a panic: %+v, %v; want a StagePanic response with its value", resp, err)
	}
	if _, err := c.Render(&Request{ChartDir: "after the panic"}); err != nil {
		t.Errorf("a request after the panic: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Render(&Request{ChartDir: "garbage"})
		done <- err
	}()
	select {
	case err := <-done:
		var f *FailedError
		if !errors.As(err, &f) || !strings.Contains(f.Reason, "wrote a response that is not the protocol") {
			t.Errorf("garbage: %v, want a FailedError saying the response is not the protocol", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a companion writing garbage made Render hang")
	}
}

// TestClientBrokenCompanions: companions that never get to serving.
func TestClientBrokenCompanions(t *testing.T) {
	cases := []struct {
		mode  string
		check func(error) bool
		want  string
	}{
		{"protocol", func(err error) bool {
			var p *ProtocolError
			return errors.As(err, &p) && p.Protocol == 99 && p.Version == "v9.9.9"
		}, "a ProtocolError for protocol 99, v9.9.9"},
		{"not-hello", func(err error) bool {
			var f *FailedError
			return errors.As(err, &f) && strings.Contains(f.Reason, `is not rolloutlint-helm: its first line is "Usage: something else entirely\n"`)
		}, "a FailedError quoting the first line"},
		{"exit", func(err error) bool {
			var f *FailedError
			return errors.As(err, &f) && strings.Contains(f.Reason, "exited before it said hello (exit status 4)") && f.Stderr == "cannot start: no configuration"
		}, "a FailedError with the exit status and stderr"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			c := newTestClient(t, nil, tc.mode)
			for i := range 2 { // the second request fails the same way without a new start
				_, err := c.Render(&Request{ChartDir: "x"})
				if !tc.check(err) {
					t.Errorf("request %d: %v, want %s", i, err, tc.want)
				}
			}
			if c.spawns != 1 {
				t.Errorf("started %d times, want once", c.spawns)
			}
		})
	}
}

// TestClientContextCancelStopsTheCompanion: cancelling the context kills
// the companion and ends the requests in flight.
func TestClientContextCancelStopsTheCompanion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newTestClient(t, ctx, "")
	if _, err := c.Render(&Request{ChartDir: "warm"}); err != nil {
		t.Fatal(err)
	}
	p := c.proc
	done := make(chan error, 1)
	go func() {
		_, err := c.Render(&Request{ChartDir: "hang"})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the request in flight: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancelling did not end the request")
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Error("the companion still runs after the context was cancelled")
	}
}

// TestLocate: $ROLLOUTLINT_HELM wins (and is not looked past when it names
// nothing), then the executable's directory, then PATH.
func TestLocate(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, Name+exeSuffix())
	if err := os.WriteFile(onPath, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv(EnvPath, "")
	if p, err := Locate(); err != nil || p != onPath {
		t.Errorf("on PATH: %q, %v; want %s", p, err, onPath)
	}
	t.Setenv(EnvPath, onPath)
	if p, err := Locate(); err != nil || p != onPath {
		t.Errorf("$%s: %q, %v; want %s", EnvPath, p, err, onPath)
	}
	missing := filepath.Join(dir, "nope")
	t.Setenv(EnvPath, missing)
	var nf *NotFoundError
	if _, err := Locate(); !errors.As(err, &nf) || !strings.Contains(err.Error(), missing) {
		t.Errorf("$%s naming nothing: %v, want a NotFoundError naming it", EnvPath, err)
	}
	t.Setenv(EnvPath, "")
	t.Setenv("PATH", t.TempDir())
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	beside := filepath.Join(filepath.Dir(exe), Name+exeSuffix())
	if _, err := Locate(); !errors.As(err, &nf) || !strings.Contains(err.Error(), beside) || !strings.Contains(err.Error(), "on PATH") {
		t.Errorf("nowhere: %v, want a NotFoundError naming %s and PATH", err, beside)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Remove(beside) }()
	if p, err := Locate(); err != nil || p != beside {
		t.Errorf("beside the executable: %q, %v; want %s", p, err, beside)
	}
}

func TestHello(t *testing.T) {
	p, v, ok := ParseHello(Hello("v1.2.3"))
	if !ok || p != ProtocolVersion || v != "v1.2.3" {
		t.Errorf("ParseHello(Hello) = %d, %q, %v", p, v, ok)
	}
	for _, s := range []string{"", "rolloutlint-helm protocol x v1\n", "helm protocol 1 v1\n"} {
		if _, _, ok := ParseHello(s); ok {
			t.Errorf("ParseHello(%q) accepted it", s)
		}
	}
}

// TestClientStartAhead: Start starts the companion in the background, and
// the requests after it use that process.
func TestClientStartAhead(t *testing.T) {
	c := newTestClient(t, nil, "")
	c.Start()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.mu.Lock()
		started := c.proc != nil
		c.mu.Unlock()
		if started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Start did not start the companion")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.Start() // a second Start starts nothing
	for range 3 {
		if _, err := c.Render(&Request{ChartDir: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spawns != 1 {
		t.Errorf("started %d times, want once", c.spawns)
	}
}
