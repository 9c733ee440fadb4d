package cli_test

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's example output from the real command")

// The README's example output block is the first text fence after the
// sentence that introduces it, and ends at the next fence.
const (
	readmeExampleIntro = "Output on the example"
	textFence          = "```text\n"
)

// TestReadmeExampleCurrent runs the README's first command (lint of the
// bundled example) and fails when the output the README shows differs from
// it, so a newcomer's first run looks like what they were promised.
// `go test ./cmd/rolloutlint/cli -run TestReadmeExampleCurrent -update-readme`
// rewrites the block.
func TestReadmeExampleCurrent(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	readmePath := filepath.Join(root, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	intro := bytes.Index(readme, []byte(readmeExampleIntro))
	fence := bytes.Index(readme[max(intro, 0):], []byte(textFence))
	if intro < 0 || fence < 0 {
		t.Fatalf("README.md has no %q block after %q", textFence, readmeExampleIntro)
	}
	start := intro + fence + len(textFence)
	length := bytes.Index(readme[start:], []byte("```\n"))
	if length < 0 {
		t.Fatal("README.md's example output block is not closed")
	}
	// The repository's own .rolloutlint.yaml applies, as for a newcomer
	// running the command at the root of a clone.
	res := run(t, root, "", "lint", "examples/checkout")
	if res.code != 1 {
		t.Fatalf("lint examples/checkout exited %d, want 1 (the example has errors); stderr:\n%s", res.code, res.err)
	}
	got := readme[start : start+length]
	if string(got) == res.out {
		return
	}
	if *updateReadme {
		var b bytes.Buffer
		b.Write(readme[:start])
		b.WriteString(res.out)
		b.Write(readme[start+length:])
		if err := os.WriteFile(readmePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's example output is stale: run `go test ./cmd/rolloutlint/cli -run TestReadmeExampleCurrent -update-readme`\nREADME shows:\n%s\nthe command prints:\n%s", got, res.out)
}

// TestMakeFuzzRunsEveryTarget: the README says `make fuzz` runs every fuzz
// target (CI runs it); FuzzDecodeTape, FuzzValidText and FuzzDecodeValues
// were written and never run there. Every `func FuzzX(` of the module must
// have its `-fuzz '^FuzzX$$' ... ./its/package/` line in the Makefile.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w*)\(`)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "dist") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, m := range fuzzFunc.FindAllSubmatch(src, -1) {
			line := fmt.Sprintf("-fuzz '^%s$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./%s/", m[1], filepath.ToSlash(rel))
			if !bytes.Contains(makefile, []byte(line)) {
				t.Errorf("%s: %s is not run by make fuzz: the Makefile has no %q", filepath.ToSlash(rel), m[1], line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
