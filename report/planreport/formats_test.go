package planreport_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/report/planreport"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// allFixtures is one document holding every fixture's Rollouts.
func allFixtures(t *testing.T) *planreport.Document {
	t.Helper()
	var paths []string
	for _, n := range fixtureNames {
		paths = append(paths, filepath.Join(fixtures, n+".yaml"))
	}
	g, err := load.Paths(paths, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := xds.ForVersion(xds.DefaultVersion)
	if err != nil {
		t.Fatal(err)
	}
	doc := planreport.Build(m, xds.NewScoper(g), plan.Build(g), nil)
	if len(doc.Rollouts) < 3 {
		t.Fatalf("the fixtures hold %d Rollouts, want several", len(doc.Rollouts))
	}
	return doc
}

// Code spans hold the text as it is: Markdown does not decode entities inside
// them, so an escaped "<canary-hash>" would show as "&lt;canary-hash&gt;".
func TestMarkdownCodeSpansAreLiteral(t *testing.T) {
	doc := allFixtures(t)
	var buf bytes.Buffer
	if err := planreport.Markdown(&buf, doc); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	spans := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(out, -1)
	if len(spans) == 0 {
		t.Fatal("no code span in the Markdown")
	}
	hashes := 0
	for _, s := range spans {
		if strings.Contains(s[1], "&lt;") || strings.Contains(s[1], "&gt;") || strings.Contains(s[1], "&amp;") {
			t.Errorf("HTML entity inside a code span: %s", s[0])
		}
		if strings.Contains(s[1], "<canary-hash>") {
			hashes++
		}
	}
	if hashes == 0 {
		t.Errorf("no write names <canary-hash> literally in a code span:\n%s", out)
	}
	// Every table row keeps its six cells: no unescaped pipe splits one.
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ") {
			if n := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1)); n != 7 {
				t.Errorf("row with %d cell borders, want 7: %s", n, line)
			}
		}
	}
}

// Several Rollouts are one diagram: one header, balanced blocks, a note per
// Rollout, and, where the Mermaid parser is installed, a diagram it parses.
func TestMermaidSeveralRollouts(t *testing.T) {
	doc := allFixtures(t)
	var buf bytes.Buffer
	if err := planreport.Mermaid(&buf, doc); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if n := strings.Count(out, "sequenceDiagram"); n != 1 {
		t.Errorf("%d sequenceDiagram headers, want 1", n)
	}
	opens := len(regexp.MustCompile(`(?m)^\s*(rect|opt) `).FindAllString(out, -1))
	ends := len(regexp.MustCompile(`(?m)^\s*end$`).FindAllString(out, -1))
	if opens != ends || opens < len(doc.Rollouts) {
		t.Errorf("%d blocks opened, %d ended, for %d Rollouts", opens, ends, len(doc.Rollouts))
	}
	for _, r := range doc.Rollouts {
		if !strings.Contains(out, "Note over A,P: Rollout "+r.Rollout.Namespace+"/"+r.Rollout.Name+" (") {
			t.Errorf("no heading note for %s/%s", r.Rollout.Namespace, r.Rollout.Name)
		}
	}
	parseMermaid(t, out)
}

// parseMermaid runs the real Mermaid parser (scripts/install-mermaid.sh; CI
// installs it) on text; without node or MERMAID_DIR it skips.
func parseMermaid(t *testing.T, text string) {
	t.Helper()
	dir := os.Getenv("MERMAID_DIR")
	if dir == "" {
		t.Skip("MERMAID_DIR unset: run scripts/install-mermaid.sh and export MERMAID_DIR to check with the Mermaid parser")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	cmd := exec.Command(node, "../../scripts/mermaid-parse.mjs")
	cmd.Stdin = strings.NewReader(text)
	cmd.Env = append(os.Environ(), "MERMAID_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok sequence") {
		t.Errorf("Mermaid does not parse the diagram (%v): %s\n%s", err, out, text)
	}
}
