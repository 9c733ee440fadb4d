package render

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/units"
)

// TestKustomizeDeprecationsAtTheirLines: krusty's deprecation warnings,
// which it prints to stderr without a file, do not reach stderr from
// builds running in parallel; each deprecated field of every kustomization
// a build read is an info finding at its line, and stderr is the process's
// own again afterwards.
func TestKustomizeDeprecationsAtTheirLines(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"base/kustomization.yaml": "resources:\n- svc.yaml\nimageTags:\n- name: web\n  newTag: \"2\"\n",
		"base/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
		"prod/kustomization.yaml": "namespace: prod\nbases:\n- ../base\ncommonLabels:\n  env: prod\n",
		"qa/kustomization.yaml":   "resources:\n- ../base\nvars: []\n",
		"new/kustomization.yaml":  "resources:\n- svc.yaml\nlabels:\n- pairs: {env: new}\n",
		"new/svc.yaml":            "apiVersion: v1\nkind: Service\nmetadata:\n  name: new\nspec:\n  ports:\n  - port: 80\n",
	})
	log, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = log
	defer func() { os.Stderr = saved }()

	r := New(Options{})
	want := map[string][]string{
		"prod": {"base/kustomization.yaml:3:1 'imageTags' is deprecated, use 'images'",
			"prod/kustomization.yaml:2:1 'bases' is deprecated, use 'resources'",
			"prod/kustomization.yaml:4:1 'commonLabels' is deprecated, use 'labels'"},
		"qa": {"base/kustomization.yaml:3:1 'imageTags' is deprecated, use 'images'",
			"qa/kustomization.yaml:3:1 'vars' is deprecated, use 'replacements'"},
		"new": nil,
	}
	var mu sync.Mutex
	got := map[string][]string{}
	var wg sync.WaitGroup
	for round := 0; round < 5; round++ {
		for name := range want {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := r.Render(&units.Unit{Kind: units.Kustomize, Dir: filepath.Join(dir, name)})
				var notes []string
				for _, p := range res.Problems {
					if !p.Info {
						t.Errorf("%s: %s", name, p.Message)
						continue
					}
					notes = append(notes, short(dir, p.Pos)+" "+strings.TrimPrefix(p.Message, "kustomize: "))
				}
				sort.Strings(notes)
				mu.Lock()
				got[name] = notes
				mu.Unlock()
			}()
		}
		wg.Wait()
		for name, w := range want {
			if strings.Join(got[name], "\n") != strings.Join(w, "\n") {
				t.Errorf("round %d, %s: notes\n%s\nwant\n%s", round, name, strings.Join(got[name], "\n"), strings.Join(w, "\n"))
			}
		}
	}
	if os.Stderr != log {
		t.Fatal("os.Stderr is not restored after the builds")
	}
	written, err := os.ReadFile(log.Name())
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 0 {
		t.Errorf("stderr got %q", written)
	}
}

// TestPassOnKeepsOtherOutput: what reaches the capture other than the
// deprecation warnings is passed on whole, the last line even without a
// line end.
func TestPassOnKeepsOtherOutput(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	done := make(chan struct{})
	go passOn(pr, &out, done)
	for _, s := range []string{
		"# Warning: 'bases' is deprecated. Please use 'resources' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n",
		"a warning of another kind\n",
		"# Warning: 'vars' is deprecated. Please use 'replacements' instead. [EXPERIMENTAL] Run 'kustomize edit fix' to update your Kustomization automatically.\n",
		"no line end",
	} {
		if _, err := pw.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	_ = pw.Close()
	<-done
	if got, want := out.String(), "a warning of another kind\nno line end"; got != want {
		t.Errorf("passed on %q, want %q", got, want)
	}
}
