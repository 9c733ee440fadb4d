//go:build unix

package load_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/internal/fifo"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// expandWithin runs Expand and fails the test when it does not return in
// time (a named pipe used to block it forever).
func expandWithin(t *testing.T, paths []string, opts load.Options) ([]load.Input, error) {
	t.Helper()
	type result struct {
		in  []load.Input
		err error
	}
	done := make(chan result, 1)
	go func() {
		in, err := load.Expand(paths, opts)
		done <- result{in, err}
	}()
	select {
	case r := <-done:
		return r.in, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("Expand(%v) hangs", paths)
		return nil, nil
	}
}

func summary(ins []load.Input) []string {
	var out []string
	for _, in := range ins {
		s := filepath.Base(in.Path)
		if in.Skipped != "" {
			s += " skipped: " + in.Skipped
			if in.SkippedDetail != "" {
				s += ". " + in.SkippedDetail
			}
		} else {
			s += " read " + strings.TrimSpace(string(in.Data))
		}
		out = append(out, s)
	}
	return out
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWalkSkipsSpecialFilesAndEscapingSymlinks builds a directory with a
// named pipe, a socket, symlinks inside and out of it, a dangling one and a
// symlink cycle, and checks what a walk reads and skips, with and without
// FollowSymlinks.
func TestWalkSkipsSpecialFilesAndEscapingSymlinks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "deploy")
	writeFile(t, filepath.Join(dir, "a.yaml"), "a")
	writeFile(t, filepath.Join(base, "secret", "token.yaml"), "TOKEN")
	writeFile(t, filepath.Join(base, "other", "b.yaml"), "b")
	if err := fifo.Make(filepath.Join(dir, "pipe.yaml"), 0o644); errors.Is(err, fifo.ErrUnsupported) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	if err := fifo.Make(filepath.Join(dir, "pipe-not-a-manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.yaml")
	if l, err := net.Listen("unix", sock); err == nil {
		defer func() { _ = l.Close() }()
	} else {
		t.Logf("no unix socket: %v", err)
	}
	for link, target := range map[string]string{
		"inside.yaml":   "a.yaml",
		"escape.yaml":   "../secret/token.yaml",
		"dangling.yaml": "missing.yaml",
		"otherdir":      "../other",
		"loop":          ".",
		"topipe.yaml":   "pipe.yaml",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	ins, err := expandWithin(t, []string{dir}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a.yaml read a",
		"dangling.yaml skipped: a symlink whose target cannot be read (no such file or directory)",
		"escape.yaml skipped: a symlink to a file outside the linted directory. It is not followed and its content is not read; --follow-symlinks follows it.",
		"inside.yaml read a",
		"otherdir skipped: a symlink to a directory outside the linted directory. It is not followed; --follow-symlinks follows it.",
		"pipe.yaml skipped: named pipe. Only regular files are read from a directory; name it on the command line to read it.",
		"s.yaml skipped: socket. Only regular files are read from a directory; name it on the command line to read it.",
		"topipe.yaml skipped: a symlink to a named pipe. Only regular files are read from a directory.",
	}
	if got := summary(ins); !reflect.DeepEqual(got, want) {
		t.Errorf("walk:\n got %q\nwant %q", got, want)
	}
	g := load.Inputs(ins, load.Options{})
	for _, p := range g.Problems {
		if strings.Contains(p.Message, "TOKEN") {
			t.Errorf("a finding quotes the symlinked file: %s", p.Message)
		}
	}

	ins, err = expandWithin(t, []string{dir}, load.Options{FollowSymlinks: true})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"a.yaml read a",
		"dangling.yaml skipped: a symlink whose target cannot be read (no such file or directory)",
		"escape.yaml read TOKEN",
		"inside.yaml read a",
		"b.yaml read b", // deploy/otherdir/b.yaml, through the followed directory
		"pipe.yaml skipped: named pipe. Only regular files are read from a directory; name it on the command line to read it.",
		"s.yaml skipped: socket. Only regular files are read from a directory; name it on the command line to read it.",
		"topipe.yaml skipped: a symlink to a named pipe. Only regular files are read from a directory.",
	}
	if got := summary(ins); !reflect.DeepEqual(got, want) {
		t.Errorf("--follow-symlinks:\n got %q\nwant %q", got, want)
	}
	if p := ins[4].Path; p != filepath.Join(dir, "otherdir", "b.yaml") {
		t.Errorf("a followed directory's file is named %s", p)
	}
}

// TestNamedPipeOnTheCommandLine reads a named pipe given explicitly: with
// no writer it reads as empty instead of waiting for one, and with a writer
// it reads what is written.
func TestNamedPipeOnTheCommandLine(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "p.yaml")
	if err := fifo.Make(pipe, 0o644); errors.Is(err, fifo.ErrUnsupported) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	ins, err := expandWithin(t, []string{pipe}, load.Options{})
	if err != nil || len(ins) != 1 || len(ins[0].Data) != 0 || ins[0].Skipped != "" {
		t.Fatalf("no writer: %q, %v", summary(ins), err)
	}

	const doc = "apiVersion: v1\nkind: Service\nmetadata: {name: from-pipe}\n"
	go func() {
		f, err := os.OpenFile(pipe, os.O_WRONLY, 0) // blocks until the reader opens
		if err != nil {
			return
		}
		defer func() { _ = f.Close() }()
		time.Sleep(50 * time.Millisecond) // the reader waits for data, not for EOF
		_, _ = f.WriteString(doc)
	}()
	// The writer must be there when the reader opens: retry until it is.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ins, err = expandWithin(t, []string{pipe}, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ins[0].Data) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := string(ins[0].Data); got != doc {
		t.Errorf("read %q from the pipe, want %q", got, doc)
	}
}
