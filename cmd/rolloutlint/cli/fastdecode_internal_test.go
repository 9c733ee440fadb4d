package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

// TestFastDecodeSwitch checks ROLLOUTLINT_FAST_DECODE=off on every bundle of
// testdata/bundles: no document is loaded by the fast decoder (the fast path
// takes most of them when the switch is on), and the reports are the same
// byte for byte in every format.
func TestFastDecodeSwitch(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob("../../../testdata/bundles/*")
	if err != nil {
		t.Fatal(err)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == FastDecodeEnv {
				return v
			}
			return ""
		}
	}
	bundles, fastOn, first := 0, 0, ""
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		bundles++
		if first == "" {
			first = dir
		}
		cfg := filepath.Join(dir, ".rolloutlint.yaml")
		if _, err := os.Stat(cfg); err != nil {
			cfg = os.DevNull
		}
		docs := map[string]int{}
		for _, mode := range []string{"on", "off"} {
			e := &Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: env(mode)}
			o := loadOptions{configPath: cfg, maxFileBytes: load.DefaultMaxFileBytes, maxDocuments: load.DefaultMaxDocuments}
			b, err := o.loadBundle(e, []string{dir})
			if err != nil {
				t.Fatalf("%s, %s=%s: %v", dir, FastDecodeEnv, mode, err)
			}
			docs[mode] = b.graph.FastDocuments
		}
		if docs["off"] != 0 {
			t.Errorf("%s: %d documents took the fast path with %s=off", dir, docs["off"], FastDecodeEnv)
		}
		fastOn += docs["on"]
		for _, format := range []string{"json", "text", "sarif", "github"} {
			args := []string{"lint", "--format", format, "--fail-level", "none", "--config", cfg, dir}
			var out [2]string
			for i, mode := range []string{"on", "off"} {
				var stdout, stderr bytes.Buffer
				e := &Env{In: strings.NewReader(""), Out: &stdout, Err: &stderr, Getenv: env(mode)}
				if code := e.Run(args); code != ExitOK {
					t.Fatalf("%s %s, %s=%s: exit %d: %s", dir, format, FastDecodeEnv, mode, code, stderr.String())
				}
				out[i] = stdout.String()
			}
			if out[0] != out[1] {
				t.Errorf("%s: the %s report differs with %s=off", dir, format, FastDecodeEnv)
			}
		}
	}
	if bundles < 10 || fastOn == 0 {
		t.Fatalf("the comparison is too weak: %d bundles, %d fast documents with the switch on", bundles, fastOn)
	}
	var stderr bytes.Buffer
	e := &Env{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &stderr, Getenv: env("maybe")}
	if code := e.Run([]string{"lint", "--config", os.DevNull, first}); code != ExitFailure || !strings.Contains(stderr.String(), `ROLLOUTLINT_FAST_DECODE="maybe": want on or off`) {
		t.Errorf("a bad value: exit %d, stderr %q; want 2 naming it", code, stderr.String())
	}
}
