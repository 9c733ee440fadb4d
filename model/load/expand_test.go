package load_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.yaml", "a.yml", "c.json", "notes.txt", ".rolloutlint.yaml", ".git/x.yaml", "sub/d.YAML", "skip/e.yaml"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("a: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exclude := func(p string) bool { return strings.Contains(filepath.ToSlash(p), "/skip/") }
	in, err := load.Expand([]string{dir, filepath.Join(dir, "b.yaml"), filepath.Join(dir, ".rolloutlint.yaml"), "-"},
		load.Options{Exclude: exclude, Stdin: strings.NewReader("kind: x\n")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range in {
		rel, _ := filepath.Rel(dir, i.Path)
		if i.Path == load.StdinName {
			rel = i.Path
		}
		got = append(got, filepath.ToSlash(rel))
	}
	want := "a.yml b.yaml c.json sub/d.YAML .rolloutlint.yaml <stdin>"
	if strings.Join(got, " ") != want {
		t.Errorf("Expand = %v, want %s (sorted walk, hidden and excluded skipped, explicit files kept, duplicates dropped)", got, want)
	}
	if _, err := load.Expand([]string{filepath.Join(dir, "missing.yaml")}, load.Options{}); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing path: err = %v", err)
	}
}
