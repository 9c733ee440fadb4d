package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	r := run(t, dir, "", "lint", "--max-file-size", "100", "r.yaml")
	if r.code != 1 || !strings.Contains(r.out, "r.yaml:1:1: error RL0005 file is larger than the limit of 100 bytes; it was not read (raise it with --max-file-size)") {
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
	// Asked to follow it, the file is read, and still not quoted.
	r := run(t, base, "", "lint", "--follow-symlinks", "deploy")
	if r.code != 1 || strings.Contains(r.out, "SECRET") || !strings.Contains(r.out, "deploy/token.yaml:1:1: error RL0002 document is a plain value (25 characters on line 1)") {
		t.Errorf("--follow-symlinks: exit %d\n%s%s", r.code, r.out, r.err)
	}
}
