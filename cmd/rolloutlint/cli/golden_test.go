package cli_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// The number of rules run in the summary is masked ("N rules" in text, 0 in
// JSON, which stays valid) so that adding a rule that stays silent on a
// bundle does not touch its golden.
var (
	textRuleCount = regexp.MustCompile(`(\d+ objects, )\d+( rules)`)
	jsonRuleCount = regexp.MustCompile(`("rules": )\d+`)
)

func maskRuleCount(b []byte) []byte {
	b = textRuleCount.ReplaceAll(b, []byte("${1}N${2}"))
	return jsonRuleCount.ReplaceAll(b, []byte("${1}0"))
}

// TestGoldenBundles lints every bundle of testdata/bundles with the real
// command line, from inside the bundle so paths are relative, and compares
// text and JSON output with testdata/golden/<bundle>.{txt,json}. Run with
// -update after an intended change and review the diff.
func TestGoldenBundles(t *testing.T) {
	root, err := filepath.Abs("../../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join(root, "bundles"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no bundles")
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		for _, format := range []string{"text", "json"} {
			t.Run(d.Name()+"/"+format, func(t *testing.T) {
				t.Chdir(filepath.Join(root, "bundles", d.Name()))
				var out, errw bytes.Buffer
				code := cli.Main([]string{"lint", "--format", format, "--color", "never", "."}, strings.NewReader(""), &out, &errw)
				if code == cli.ExitFailure {
					t.Fatalf("exit 2: %s", errw.String())
				}
				got := maskRuleCount(out.Bytes())
				ext := map[string]string{"text": ".txt", "json": ".json"}[format]
				golden := filepath.Join(root, "golden", d.Name()+ext)
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./cmd/rolloutlint/cli -run TestGoldenBundles -update)", err)
				}
				if string(got) != string(want) {
					t.Errorf("output differs from %s (rerun with -update and review the diff):\n--- got\n%s\n--- want\n%s", golden, got, want)
				}
			})
		}
	}
}

// TestSeedBundlesHaveNoErrorOrWarning guards the golden files themselves: the
// seeds' official configurations must stay free of errors and warnings.
func TestSeedBundlesHaveNoErrorOrWarning(t *testing.T) {
	for _, b := range []string{"seed-host-level", "seed-subset-level"} {
		r := run(t, filepath.Join("..", "..", "..", "testdata", "bundles", b), "", "lint", "--fail-level", "warning", "-f", "json", ".")
		if r.code != cli.ExitOK {
			t.Errorf("%s: exit %d\n%s%s", b, r.code, r.out, r.err)
		}
	}
}
