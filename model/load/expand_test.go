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

// With Options.Dir, relative paths are read from Dir but keep the names they
// were given, exactly as a process started in Dir would name them; absolute
// paths are read as they are.
func TestExpandDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"deploy/a.yaml", "deploy/sub/b.yaml", "deploy/skip/c.yaml", "top.yaml", "other/d.yaml"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("name: "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var excluded []string
	exclude := func(p string) bool {
		excluded = append(excluded, filepath.ToSlash(p))
		return strings.Contains(filepath.ToSlash(p), "/skip/")
	}
	abs := filepath.Join(dir, "other")
	in, err := load.Expand([]string{"./deploy", "top.yaml", "deploy/../top.yaml", abs},
		load.Options{Dir: filepath.Join(dir, "."), Exclude: exclude})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range in {
		name := filepath.ToSlash(i.Path)
		if rel, err := filepath.Rel(abs, i.Path); err == nil && filepath.IsAbs(i.Path) {
			name = "<abs>/" + filepath.ToSlash(rel)
		}
		got = append(got, name)
		if !strings.Contains(string(i.Data), filepath.Base(i.Path)) {
			t.Errorf("%s holds %q: read from the wrong file", i.Path, i.Data)
		}
	}
	want := "deploy/a.yaml deploy/sub/b.yaml top.yaml deploy/../top.yaml <abs>/d.yaml"
	if strings.Join(got, " ") != want {
		t.Errorf("Expand = %v, want %s", got, want)
	}
	wantExcl := "deploy/a.yaml deploy/skip/c.yaml deploy/sub/b.yaml " + filepath.ToSlash(filepath.Join(abs, "d.yaml"))
	if strings.Join(excluded, " ") != wantExcl {
		t.Errorf("Exclude saw %v, want the names as given: %s", excluded, wantExcl)
	}
	if _, err := load.Expand([]string{"missing.yaml"}, load.Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "reading missing.yaml") {
		t.Errorf("missing path: err = %v, want it named as given", err)
	}
}
