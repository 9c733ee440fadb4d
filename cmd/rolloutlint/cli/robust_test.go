package cli_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	namedpipe "github.com/rolloutlint/rolloutlint/internal/fifo"
)

// TestLimitFlagsMustBePositive: the loader reads 0 as "the default", so a 0
// or negative limit on the command line is a usage error, not a silent
// default.
func TestLimitFlagsMustBePositive(t *testing.T) {
	dir := write(t, map[string]string{"r.yaml": clean})
	for _, c := range []struct{ flag, value, want string }{
		{"--max-file-size", "0", "--max-file-size 0: the limit must be a positive number of bytes"},
		{"--max-file-size", "-5", "--max-file-size -5: the limit must be a positive number of bytes"},
		{"--max-documents", "0", "--max-documents 0: the limit must be a positive number of documents"},
		{"--max-documents", "-1", "--max-documents -1: the limit must be a positive number of documents"},
	} {
		r := run(t, dir, "", "lint", c.flag+"="+c.value, "r.yaml")
		if r.code != 2 || !strings.Contains(r.err, c.want) {
			t.Errorf("%s=%s: exit %d, stderr %q", c.flag, c.value, r.code, r.err)
		}
	}
}

// TestFileSizeLimitIsPrintedInBytes: the flag takes bytes, and the finding
// names the limit in bytes (it said "0 MiB" for a limit under a MiB).
func TestFileSizeLimitIsPrintedInBytes(t *testing.T) {
	dir := write(t, map[string]string{"r.yaml": clean})
	r := run(t, dir, "", "lint", "--verbose", "--max-file-size", "100", "r.yaml")
	if r.code != 1 || !strings.Contains(r.out, "r.yaml:1:1: error RL0005 file is larger than the limit of 100 bytes\n    It was not read; raise the limit with --max-file-size.\n") {
		t.Errorf("exit %d, out %q", r.code, r.out)
	}
	dir = write(t, map[string]string{"big.yaml": strings.Repeat("# padding\n", 300)})
	r = run(t, dir, "", "lint", "--max-file-size", "2048", "big.yaml")
	if r.code != 1 || !strings.Contains(r.out, "the limit of 2048 bytes (2 KiB)") {
		t.Errorf("exit %d, out %q", r.code, r.out)
	}
}

// TestSymlinkedTokenIsNeitherReadNorQuoted reproduces the probe: a token
// file symlinked into a linted directory was printed into text and SARIF.
func TestSymlinkedTokenIsNeitherReadNorQuoted(t *testing.T) {
	base := t.TempDir()
	secretDir := filepath.Join(base, "home")
	if err := os.MkdirAll(secretDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secretDir, "token.txt"), []byte("ghp_SECRETTOKEN1234567890\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "deploy")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "r.yaml"), []byte(clean), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(secretDir, "token.txt"), filepath.Join(dir, "token.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "sarif", "github"} {
		r := run(t, base, "", "lint", "--format", format, "deploy")
		if r.code != 0 || strings.Contains(r.out+r.err, "SECRET") || !strings.Contains(r.out, "RL0011") {
			t.Errorf("%s: exit %d\n%s%s", format, r.code, r.out, r.err)
		}
	}
	// Asked to follow it, the file is read, and still not quoted: YAML that
	// is not a Kubernetes object draws no finding of its own (issue 16), so
	// the lint passes with both files read.
	r := run(t, base, "", "lint", "--follow-symlinks", "deploy")
	if r.code != 0 || strings.Contains(r.out+r.err, "SECRET") || !strings.Contains(r.out, "in 2 files") {
		t.Errorf("--follow-symlinks: exit %d\n%s%s", r.code, r.out, r.err)
	}
}

// TestOutputIsNeverAnInput: --output naming a linted file (directly, through
// another spelling, a hard link or a symlink) is refused before anything is
// written, and the manifest is left as it was.
func TestOutputIsNeverAnInput(t *testing.T) {
	dir := write(t, map[string]string{"deploy/r.yaml": acceptance})
	if err := os.Link(filepath.Join(dir, "deploy/r.yaml"), filepath.Join(dir, "hard.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("deploy/r.yaml", filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"deploy/r.yaml", "./deploy/../deploy/r.yaml", "hard.yaml", "link.yaml"} {
		r := run(t, dir, "", "lint", "--output", out, "deploy")
		if r.code != 2 || !strings.Contains(r.err, "is one of the files being linted") {
			t.Errorf("--output %s: exit %d, stderr %q", out, r.code, r.err)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "deploy/r.yaml")); string(data) != acceptance {
			t.Fatalf("--output %s changed the manifest", out)
		}
	}
}

// TestOutputIsNeverAFileTheLintReads: the config, a policy, a --values
// file and the Prometheus token are read by the lint as much as the
// manifests; an --output naming one (also through another spelling or a
// hard link) replaced it with the report. Refused before anything is
// written, with and without rendering.
func TestOutputIsNeverAFileTheLintReads(t *testing.T) {
	files := map[string]string{
		"deploy/r.yaml":          acceptance,
		"cfg.yaml":               "failLevel: error\n",
		"policies/p.rego":        "# METADATA\n# title: t\n# description: d\n# custom:\n#   id: RL9001\n#   severity: warning\n#   kinds: [Rollout]\npackage acme.p\n\nviolation contains v if {\n\tfalse\n\tv := {}\n}\n",
		"policies/lib/data.json": "{}\n",
		"values.yaml":            "a: 1\n",
		"token":                  "s3cret\n",
	}
	dir := write(t, files)
	if err := os.Link(filepath.Join(dir, "cfg.yaml"), filepath.Join(dir, "cfg-link.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		file string
	}{
		{[]string{"--config", "cfg.yaml", "-o", "cfg.yaml"}, "cfg.yaml"},
		{[]string{"--config", "cfg.yaml", "-o", "cfg-link.yaml"}, "cfg.yaml"},
		{[]string{"--render=false", "--config", "cfg.yaml", "-o", "./cfg.yaml"}, "cfg.yaml"},
		{[]string{"--policy", "policies", "-o", "policies/p.rego"}, "policies/p.rego"},
		{[]string{"--policy", "policies", "-o", "policies/lib/data.json"}, "policies/lib/data.json"},
		{[]string{"--values", "values.yaml", "-o", "values.yaml"}, "values.yaml"},
		{[]string{"--prometheus-url", "http://127.0.0.1:1", "--prometheus-bearer-token-file", "token", "-o", "token"}, "token"},
	} {
		args := append(append([]string{"lint"}, c.args...), "deploy/r.yaml")
		r := run(t, dir, "", args...)
		if r.code != 2 || !strings.Contains(r.err, "which the lint reads: the report would replace it") {
			t.Errorf("%v: exit %d, stderr %q", c.args, r.code, r.err)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, c.file)); string(data) != files[c.file] {
			t.Fatalf("%v replaced %s", c.args, c.file)
		}
	}
}

// TestOutputIntoAPipeOrDevice: a named pipe, and a symlink to one (as
// /dev/stdout is), receive the report; neither is replaced by a regular file
// (as root, renaming over /dev/null replaced the device for the whole
// machine; devices take the same path as the pipe, and /dev/null is not
// risked here).
func TestOutputIntoAPipeOrDevice(t *testing.T) {
	dir := write(t, map[string]string{"r.yaml": acceptance})
	fifo := filepath.Join(dir, "report.fifo")
	if err := namedpipe.Make(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("report.fifo", filepath.Join(dir, "stdout")); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"report.fifo", "stdout"} {
		got := make(chan string, 1)
		go func() {
			data, err := os.ReadFile(fifo) // blocks until the lint opens the pipe, then reads to its close
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- string(data)
		}()
		r := run(t, dir, "", "lint", "--format", "json", "--output", out, "r.yaml")
		if r.code != 1 {
			t.Fatalf("--output %s: exit %d: %s", out, r.code, r.err)
		}
		select {
		case data := <-got:
			if !strings.Contains(data, `"ruleId": "RL1001"`) {
				t.Errorf("--output %s: the pipe read %.200q", out, data)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("--output %s: nothing reached the pipe", out)
		}
		st, err := os.Lstat(fifo)
		if err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("--output %s replaced the pipe: %v, %v", out, st, err)
		}
	}
	if st, err := os.Lstat(filepath.Join(dir, "stdout")); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink to the pipe was replaced: %v, %v", st, err)
	}
}

// TestOutputIsWrittenAtomicallyWithoutFollowingASymlink: the report replaces
// a symlink at the output path instead of writing through it, and leaves no
// temporary file behind.
func TestOutputIsWrittenAtomicallyWithoutFollowingASymlink(t *testing.T) {
	dir := write(t, map[string]string{"r.yaml": acceptance, "elsewhere/keep.txt": "precious\n"})
	if err := os.Symlink("elsewhere/keep.txt", filepath.Join(dir, "report.sarif")); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir, "", "lint", "--format", "sarif", "--output", "report.sarif", "r.yaml")
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "elsewhere/keep.txt")); string(data) != "precious\n" {
		t.Errorf("the report was written through the symlink: %q", data)
	}
	st, err := os.Lstat(filepath.Join(dir, "report.sarif"))
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o644 {
		t.Fatalf("report.sarif: %v, %v", st, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "report.sarif"))
	if !strings.Contains(string(data), `"ruleId": "RL1001"`) {
		t.Errorf("report: %.200s", data)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	// A report replacing a file keeps its permissions: a report made private
	// was replaced by a world-readable one.
	if err := os.Chmod(filepath.Join(dir, "report.sarif"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r = run(t, dir, "", "lint", "--format", "sarif", "--output", "report.sarif", "r.yaml"); r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if st, err := os.Lstat(filepath.Join(dir, "report.sarif")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("a 0600 report.sarif replaced by %v (%v)", st.Mode(), err)
	}
	// A directory that cannot take the report is an error, not a half-written file.
	r = run(t, dir, "", "lint", "--output", "missing/dir/report.txt", "r.yaml")
	if r.code != 2 || !strings.Contains(r.err, "directory missing/dir does not exist") {
		t.Errorf("missing directory: exit %d, stderr %q", r.code, r.err)
	}
}
