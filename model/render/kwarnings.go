package render

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// deprecatedKustomizeFields are the kustomization fields krusty warns about
// (types.Kustomization.CheckDeprecatedFields), with what replaces each.
var deprecatedKustomizeFields = map[string]string{
	"bases":                 "resources",
	"commonLabels":          "labels",
	"imageTags":             "images",
	"patchesJson6902":       "patches",
	"patchesStrategicMerge": "patches",
	"vars":                  "replacements",
}

// krustyStderr captures os.Stderr while kustomize builds run: krusty prints
// its deprecation warnings there, naming neither the file nor the line,
// once for every build that reads the file. deprecationNotes reports them at
// their lines instead. Builds run in parallel, so the first one in starts
// the capture and the last one out ends it; what else reaches the capture
// is passed on to the real standard error line by line as it comes.
var krustyStderr struct {
	sync.Mutex
	builds int
	saved  *os.File      // the standard error before the capture
	pw     *os.File      // the capture's write end, os.Stderr meanwhile
	done   chan struct{} // closed when the capture has passed on everything
}

// withKrustyStderr runs build with os.Stderr captured. If no pipe can be
// made, build runs as it is and its warnings reach the terminal.
func withKrustyStderr(build func() error) error {
	c := &krustyStderr
	c.Lock()
	if c.builds == 0 {
		pr, pw, err := os.Pipe()
		if err != nil {
			c.Unlock()
			return build()
		}
		c.saved, c.pw, c.done = os.Stderr, pw, make(chan struct{})
		go passOn(pr, c.saved, c.done)
		os.Stderr = pw
	}
	c.builds++
	c.Unlock()
	defer func() {
		c.Lock()
		defer c.Unlock()
		if c.builds--; c.builds == 0 {
			os.Stderr = c.saved
			_ = c.pw.Close()
			<-c.done
			c.saved, c.pw = nil, nil
		}
	}()
	return build()
}

// realStderr is the process's standard error, not the capture: what the
// renderer logs itself (the Helm companion's log) goes there.
func realStderr() *os.File {
	c := &krustyStderr
	c.Lock()
	defer c.Unlock()
	if c.saved != nil {
		return c.saved
	}
	return os.Stderr
}

// passOn copies the capture to w but for krusty's "# Warning: 'F' is
// deprecated" lines.
func passOn(pr *os.File, w io.Writer, done chan<- struct{}) {
	defer close(done)
	defer func() { _ = pr.Close() }()
	br := bufio.NewReader(pr)
	for {
		line, err := br.ReadString('\n')
		if line != "" && !isDeprecationWarning(line) {
			_, _ = io.WriteString(w, line)
		}
		if err != nil {
			return
		}
	}
}

func isDeprecationWarning(line string) bool {
	return strings.HasPrefix(line, "# Warning: '") && strings.Contains(line, "' is deprecated.")
}

// deprecationNotes are info findings at each deprecated field of the
// kustomization files a build read (user paths), in file order.
func (r *Renderer) deprecationNotes(files []string) []graph.Problem {
	var out []graph.Problem
	for _, f := range files {
		if !isKustomizationName(filepath.Base(f)) {
			continue
		}
		src := r.source(f)
		if src == nil || len(src.docs) == 0 || src.docs[0].Kind != yaml.MappingNode {
			continue
		}
		m := src.docs[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			key := m.Content[i]
			repl, ok := deprecatedKustomizeFields[key.Value]
			if !ok {
				continue
			}
			out = append(out, graph.Problem{RuleID: RuleRender, Info: true,
				Pos:     graph.Position{File: f, Line: key.Line, Column: key.Column},
				Message: fmt.Sprintf("kustomize: '%s' is deprecated, use '%s'", key.Value, repl),
				Detail: "kustomize still builds it, and rolloutlint lints what it builds; `kustomize edit fix` rewrites " +
					"the deprecated fields."})
		}
	}
	return out
}

func isKustomizationName(base string) bool {
	for _, n := range units.KustomizationNames {
		if base == n {
			return true
		}
	}
	return false
}
