package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
	"github.com/rolloutlint/rolloutlint/model/render"
	"github.com/rolloutlint/rolloutlint/model/render/helmengine"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
)

func TestUsageAndVersion(t *testing.T) {
	var out, errw bytes.Buffer
	if code := run(nil, strings.NewReader(""), &out, &errw); code != 2 || !strings.Contains(errw.String(), "it is not run by hand") ||
		!strings.Contains(errw.String(), "rolloutlint-helm serve") || out.Len() != 0 {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr", code, out.String(), errw.String())
	}
	out.Reset()
	errw.Reset()
	if code := run([]string{"--version"}, strings.NewReader(""), &out, &errw); code != 0 ||
		!strings.HasPrefix(out.String(), "rolloutlint-helm dev (protocol 2, commit ") {
		t.Errorf("--version: exit %d, %q", code, out.String())
	}
	out.Reset()
	errw.Reset()
	if code := run([]string{"--nope"}, strings.NewReader(""), &out, &errw); code != 2 || !strings.Contains(errw.String(), `unknown argument "--nope"`) {
		t.Errorf("an unknown argument: exit %d, %q", code, errw.String())
	}
}

// TestServeSaysHelloAndEndsWithItsInput: serve speaks the protocol and
// exits 0 when its input ends.
func TestServeSaysHelloAndEndsWithItsInput(t *testing.T) {
	var out, errw bytes.Buffer
	if code := run([]string{"serve"}, strings.NewReader(""), &out, &errw); code != 0 || errw.Len() != 0 {
		t.Fatalf("serve with no input: exit %d, stderr %q", code, errw.String())
	}
	if p, _, ok := helmrpc.ParseHello(out.String()); !ok || p != helmrpc.ProtocolVersion {
		t.Errorf("serve wrote %q, want the hello line", out.String())
	}
}

// build builds rolloutlint and rolloutlint-helm as the release does into
// dir (the companion beside the command), once per test.
func build(t *testing.T, root, dir string, pkgs ...string) {
	t.Helper()
	args := append([]string{"build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-tags", "kustomize_disable_go_plugin_support", "-o", dir + string(filepath.Separator)}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// repoRoot is the repository's root, where the lints run.
var repoRoot string

type result struct {
	code     int
	out, err string
}

// runBinary runs a built rolloutlint at the repository root, with no
// $ROLLOUTLINT_HELM and PATH cleared of companions.
func runBinary(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = repoRoot
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helmrpc.EnvPath+"=") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "PATH="+t.TempDir()), env...)
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errw.String()}
}

// runInProcess runs the same command line in this process with Helm in
// process (what rolloutlint did before the companion).
func runInProcess(t *testing.T, args ...string) result {
	t.Helper()
	var out, errw bytes.Buffer
	code := cli.Main(args, strings.NewReader(""), &out, &errw)
	return result{code, out.String(), errw.String()}
}

// lints are the command lines compared: the repositories with charts and
// the RL0010 chart test data, as JSON with every rule and as text.
var lints = [][]string{
	{"lint", "--enable", "*", "-f", "json", "testdata/repos/mixed"},
	{"lint", "-f", "text", "-v", "testdata/repos/mixed"},
	{"lint", "--enable", "*", "-f", "json", "testdata/repos/argocd-example-apps"},
	{"lint", "-f", "sarif", "testdata/repos/argocd-example-apps"},
	{"lint", "--enable", "*", "-f", "json", "testdata/rules/RL0010/template-error"},
	{"lint", "--enable", "*", "-f", "json", "testdata/rules/RL0010/missing-dependency"},
	{"lint", "--enable", "*", "-f", "json", "--set", "reviews.weights={10,150}", "testdata/repos/mixed/charts/reviews"},
	{"lint", "-v", "testdata/rules/RL0010"},
}

// TestBuiltBinariesMatchInProcessHelm builds both binaries and lints the
// charts of the test data with them: stdout, stderr and the exit code are
// those of the same lint with Helm in process; without the companion each
// chart is an RL0010 that says how to install it, and the rest is linted.
func TestBuiltBinariesMatchInProcessHelm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	repoRoot = root
	dir := t.TempDir()
	build(t, root, dir, "./cmd/rolloutlint", "./cmd/rolloutlint-helm")
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	bin := filepath.Join(dir, "rolloutlint"+exe)

	render.DefaultHelm = helmengine.InProcess{}
	t.Cleanup(func() { render.DefaultHelm = nil })
	t.Chdir(root)
	for _, args := range lints {
		got := runBinary(t, bin, nil, args...)
		want := runInProcess(t, args...)
		if got != want {
			t.Errorf("rolloutlint %s:\nbuilt binaries: exit %d\n%s\nstderr: %s\nin process: exit %d\n%s\nstderr: %s",
				strings.Join(args, " "), got.code, got.out, got.err, want.code, want.out, want.err)
		}
		if strings.Contains(got.out, "was not rendered") {
			t.Errorf("rolloutlint %s did not find its companion:\n%s", strings.Join(args, " "), got.out)
		}
	}

	// A symbolic link to rolloutlint elsewhere still finds the companion
	// beside the real binary.
	if runtime.GOOS != "windows" {
		link := filepath.Join(t.TempDir(), "rolloutlint")
		if err := os.Symlink(bin, link); err != nil {
			t.Fatal(err)
		}
		if got, want := runBinary(t, link, nil, lints[0]...), runInProcess(t, lints[0]...); got != want {
			t.Errorf("through a symbolic link: exit %d\n%s\nwant exit %d\n%s", got.code, got.out, want.code, want.out)
		}
	}

	// Without the companion: the chart is an RL0010 at Chart.yaml:1 with
	// the install command; the other units are linted as before.
	if err := os.Remove(filepath.Join(dir, "rolloutlint-helm"+exe)); err != nil {
		t.Fatal(err)
	}
	got := runBinary(t, bin, nil, "lint", "testdata/repos/mixed")
	want := "testdata/repos/mixed/charts/reviews/Chart.yaml:1:1: error RL0010 chart testdata/repos/mixed/charts/reviews was not rendered: " +
		"rolloutlint-helm, the companion that renders Helm charts, is not installed (looked at " + filepath.Join(dir, "rolloutlint-helm"+exe) +
		", then on PATH): install it with `go install github.com/rolloutlint/rolloutlint/cmd/rolloutlint-helm@latest`\n"
	if got.code != 1 || !strings.HasPrefix(got.out, want) {
		t.Errorf("without the companion: exit %d\n%s\nwant exit 1, starting\n%s", got.code, got.out, want)
	}
	if !strings.Contains(got.out, "kustomize/checkout/overlays/prod/weights.yaml:7:10: error RL1001") {
		t.Errorf("without the companion the Kustomize units were not linted:\n%s", got.out)
	}

	// $ROLLOUTLINT_HELM naming a program of another protocol.
	if runtime.GOOS != "windows" {
		// A lint with no chart does not start the companion; one with a
		// chart starts the one $ROLLOUTLINT_HELM names.
		started := filepath.Join(t.TempDir(), "started")
		spy := filepath.Join(t.TempDir(), "spy-helm")
		if err := os.WriteFile(spy, []byte("#!/bin/sh\n: > "+started+"\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		got := runBinary(t, bin, []string{helmrpc.EnvPath + "=" + spy}, "lint", "testdata/repos/rollouts-demo")
		if _, err := os.Stat(started); err == nil || strings.Contains(got.out, "RL0010") {
			t.Errorf("a lint with no chart started the companion (exit %d):\n%s", got.code, got.out)
		}
		got = runBinary(t, bin, []string{helmrpc.EnvPath + "=" + spy}, "lint", "testdata/rules/RL0010/template-error")
		if _, err := os.Stat(started); err != nil || !strings.Contains(got.out, "exited before it said hello (exit status 1)") {
			t.Errorf("the spy companion was not started for a chart (exit %d):\n%s", got.code, got.out)
		}

		other := filepath.Join(t.TempDir(), "old-helm")
		if err := os.WriteFile(other, []byte("#!/bin/sh\necho 'rolloutlint-helm protocol 0 v0.0.1'\ncat >/dev/null\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		got = runBinary(t, bin, []string{helmrpc.EnvPath + "=" + other}, "lint", "testdata/rules/RL0010/template-error")
		want := "testdata/rules/RL0010/template-error/Chart.yaml:1:1: error RL0010 chart testdata/rules/RL0010/template-error was not rendered: " +
			other + " is of another release (v0.0.1, protocol 0; this rolloutlint, dev, speaks protocol 2): install the matching one with"
		if got.code != 1 || !strings.HasPrefix(got.out, want) {
			t.Errorf("a companion of another protocol: exit %d\n%s\nwant exit 1, starting\n%s", got.code, got.out, want)
		}
	}
}
