package cli_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lint that exits 1 (it has findings) still writes both profiles, each a
// gzip-compressed pprof protobuf with content.
func TestProfileFlags(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"rollout.yaml": acceptance})
	cpu, mem := filepath.Join(t.TempDir(), "cpu.out"), filepath.Join(t.TempDir(), "mem.out")
	r := run(t, dir, "", "lint", "--cpuprofile", cpu, "--memprofile", mem, "rollout.yaml")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (findings); stderr: %s", r.code, r.err)
	}
	for _, p := range []string{cpu, mem} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: not a pprof profile: %v", filepath.Base(p), err)
		}
		body, err := io.ReadAll(zr)
		_ = f.Close()
		if err != nil || len(body) < 16 {
			t.Fatalf("%s: %d bytes, %v", filepath.Base(p), len(body), err)
		}
	}
}

func TestProfileFlagBadPath(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{"rollout.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n"})
	r := run(t, dir, "", "lint", "--cpuprofile", filepath.Join(dir, "missing", "cpu.out"), "rollout.yaml")
	if r.code != 2 || !strings.Contains(r.err, "--cpuprofile") {
		t.Fatalf("exit %d, stderr %q: want 2 and the flag named", r.code, r.err)
	}
}
