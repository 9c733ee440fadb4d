package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const repo = "../../.."

func TestScaffoldRejects(t *testing.T) {
	for _, c := range []struct{ id, name, want string }{
		{"RL20", "x", "not RL followed by four digits"},
		{"RL2999", "Some_Name", "not a kebab-case slug"},
		{"RL5999", "gitops-thing", "Rego policies"},
		{"RL9001", "mine", "not built-in themes"},
		{"RL1001", "another-name", "RL1001 is already set-weight-range"},
		{"RL2999", "set-weight-range", "already RL1001's"},
	} {
		_, err := scaffold(repo, c.id, c.name, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("scaffold(%s, %s): error %v, want one containing %q", c.id, c.name, err, c.want)
		}
	}
}

// The registry line lands in the theme's section, in ID order.
func TestScaffoldRegistersInOrder(t *testing.T) {
	files, err := scaffold(repo, "RL1000", "first-rollout-rule", "v0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 || files[0].path != filepath.Join("rules", "rollout", "rl1000_first_rollout_rule.go") ||
		files[1].path != filepath.Join("testdata", "rules", "RL1000", "bad.yaml") || files[2].path != filepath.Join("testdata", "rules", "RL1000", "clean.yaml") {
		t.Fatalf("files: %v", paths(files))
	}
	if !bytes.Contains(files[0].data, []byte(`var FirstRolloutRule = &rules.Rule{`)) || !bytes.Contains(files[0].data, []byte(`Since: "v0.2.0"`)) {
		t.Errorf("rule file:\n%s", files[0].data)
	}
	if !bytes.Contains(files[3].data, []byte("\t// RL1xxx: the Rollout spec.\n\trollout.FirstRolloutRule,\n\trollout.SetWeightRange,\n")) {
		t.Errorf("RL1000 is not first in the RL1xxx section:\n%s", files[3].data)
	}
	files, err = scaffold(repo, "RL3999", "last-istio-rule", "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(files[3].data, []byte("\tistio.LastIstioRule,\n\n\t// RL4xxx")) {
		t.Errorf("RL3999 is not last in the RL3xxx section:\n%s", files[3].data)
	}
	if !bytes.Contains(files[0].data, []byte(`Since: "v0.1.0"`)) {
		t.Errorf("default Since is not the newest existing one:\n%s", files[0].data)
	}
}

// TestScaffoldedRuleBuildsAndRuns scaffolds a rule in a copy of the
// repository and checks that it builds and passes go test's vet checks, its
// own `# want` harness, the file-name and kinds checks, and that the
// metadata test refuses it until its documentation is written.
func TestScaffoldedRuleBuildsAndRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the rules in a copy of the repository")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git to list the repository's files")
	}
	dir := t.TempDir()
	ls := exec.Command("git", "ls-files", "-z")
	ls.Dir = repo
	out, err := ls.Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(repo, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := freeID(t, dir, 2017)
	files, err := scaffold(dir, id, "scaffolded-sample", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := write(dir, files); err != nil {
		t.Fatal(err)
	}
	if err := write(dir, files[:1]); err == nil {
		t.Error("writing the rule file twice did not fail")
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("test", "-count=1", "-run", "^TestRules$/^"+id+"$|^TestRuleFileNames$|^TestKindsDeclared$", "./rules/all"); err != nil {
		t.Fatalf("the scaffolded rule's tests fail: %v\n%s", err, out)
	}
	out2, err := run("test", "-count=1", "-run", "^TestRuleMetadata$", "./rules/all")
	if err == nil || !strings.Contains(out2, id+": its summary or Doc still says TODO") {
		t.Errorf("TestRuleMetadata accepted the scaffold's TODO documentation: %v\n%s", err, out2)
	}
}

// freeID returns the first unused RL2xxx ID from start on.
func freeID(t *testing.T, root string, start int) string {
	t.Helper()
	rs, err := ruleIDs(filepath.Join(root, "rules"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, r := range rs {
		used[r.id] = true
	}
	for n := start; n < 3000; n++ {
		if id := fmt.Sprintf("RL%04d", n); !used[id] {
			return id
		}
	}
	t.Fatal("no free RL2xxx ID")
	return ""
}

func paths(fs []file) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.path)
	}
	return out
}
