// Package render turns a deployable unit into the manifests its tool would
// apply — in process, with the tools' own libraries: Kustomize through
// sigs.k8s.io/kustomize/api (krusty) and Helm through helm.sh/helm/v4's
// chart loader and template engine, client-only. Helm runs in the
// rolloutlint-helm companion (see helmrpc, helmengine), started only when
// a lint holds a chart, so that Helm's package initialisers do not run on
// every start; the values are merged, and the output mapped, here. Nothing
// is fetched and nothing is executed: remote bases, exec and container
// plugins and charts that are not vendored are refused with a finding.
//
// The rendered documents are loader inputs marked as rendered; the Mapper
// moves every position in them into the file the user wrote (the
// resource's source, the patch or transformer that set a field, the Helm
// template), so findings never point at renderer output.
package render

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// RuleRender is the tool rule of render failures (defined in rules/tool).
const RuleRender = "RL0010"

// Options control rendering.
type Options struct {
	// HelmValueFiles and HelmSet are `--values` and `--set` for charts
	// not deployed by an Application (an Application's own helm source
	// options are used for the charts it deploys).
	HelmValueFiles []string
	HelmSet        []string
	// Limits bound the files read.
	Limits load.Limits
	// Helm renders the charts (nil: DefaultHelm, else the rolloutlint-helm
	// companion, started at the first chart and stopped by Close).
	Helm HelmEngine
	// Context, when done, kills the companion and fails the charts not
	// yet rendered with its error (nil: never).
	Context context.Context
	// Stderr receives the companion's log (Helm's warnings) and the note
	// about a companion of another release (nil: os.Stderr).
	Stderr io.Writer
}

// Result is one rendered unit.
type Result struct {
	Unit *units.Unit
	// Inputs are the rendered documents (load.RoleRendered), then the
	// user files the render read (load.RoleSource) and, for plain
	// directories, the manifests themselves.
	Inputs []load.Input
	// Problems are render failures, at the user's file and line.
	Problems []graph.Problem
	// Files are the user files the unit was rendered from.
	Files []string
	// Mapper maps positions in the rendered inputs into the user's files.
	Mapper *Mapper
}

// Renderer renders units. It caches the user files it parses for
// positions, which overlays of one base share; it is safe for concurrent use.
type Renderer struct {
	opts    Options
	mu      sync.Mutex
	sources map[string]*sourceFile

	engineOnce sync.Once
	engine     HelmEngine
	client     *helmrpc.Client // the companion the renderer started, if any
}

// New returns a renderer; Close stops the Helm companion it may start.
func New(opts Options) *Renderer {
	return &Renderer{opts: opts, sources: map[string]*sourceFile{}}
}

// Render renders one unit. It never fails: what goes wrong is a problem
// in the result, at the file and line that caused it.
func (r *Renderer) Render(u *units.Unit) *Result {
	res := &Result{Unit: u, Mapper: &Mapper{r: r, files: map[string]*renderedFile{}}}
	switch u.Kind {
	case units.Kustomize:
		r.kustomize(u, res)
	case units.Helm:
		r.helm(u, res)
	default:
		notRendered(u, res)
		for _, f := range u.Files {
			if e, ok := u.Skipped[f]; ok {
				res.Inputs = append(res.Inputs, load.Input{Path: f, Skipped: e.Skipped, SkippedDetail: e.SkippedDetail})
				continue
			}
			res.Files = append(res.Files, f)
			if in, ok := u.Inputs[f]; ok { // read by discovery, with these limits
				res.Inputs = append(res.Inputs, in)
				continue
			}
			in, err := load.ReadFile(f, load.Options{Limits: r.opts.Limits})
			if err != nil {
				res.fail(graph.Position{File: f, Line: 1, Column: 1, EndLine: 1, EndColumn: 2}, "%v", err)
				continue
			}
			res.Inputs = append(res.Inputs, in)
		}
	}
	if u.App != nil {
		res.Files = appendFile(res.Files, u.App.File)
	}
	// The user files, for their suppression comments and text.
	have := map[string]bool{}
	for _, in := range res.Inputs {
		have[in.Path] = true
	}
	sort.Strings(res.Files)
	for _, f := range res.Files {
		if have[f] {
			continue
		}
		if src := r.source(f); src != nil {
			res.Inputs = append(res.Inputs, load.Input{Path: f, Data: src.data, Role: load.RoleSource})
		}
	}
	return res
}

// notRendered notes what a directory unit holds that rolloutlint does not
// render, as info findings: a Config Management Plugin source, at the
// Application's plugin field, and Jsonnet, once a directory, at its first
// *.jsonnet file.
func notRendered(u *units.Unit, res *Result) {
	if u.Plugin && u.App != nil {
		what := "a Config Management Plugin"
		if n := u.App.Source.Plugin.Name; n != "" {
			what = fmt.Sprintf("Config Management Plugin %q", n)
		}
		res.Problems = append(res.Problems, graph.Problem{RuleID: RuleRender, Info: true, Pos: u.App.Pos(u.App.SourcePath + ".plugin"),
			Message: fmt.Sprintf("Application %s is rendered by %s, which rolloutlint does not run", u.App.Name, what),
			Detail: "rolloutlint renders Kustomize, Helm and plain manifests in process and runs no plugin, so nothing this " +
				"Application deploys is linted. Run the plugin's generate command and pipe its output: `... | rolloutlint lint -`."})
	}
	byDir := map[string][]string{}
	var dirs []string
	for _, f := range u.Jsonnet {
		d := filepath.Dir(f)
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], f)
	}
	for _, d := range dirs {
		fs := byDir[d]
		what := filepath.Base(fs[0])
		if len(fs) > 1 {
			what = fmt.Sprintf("%s and %d other Jsonnet file(s)", what, len(fs)-1)
		}
		res.Problems = append(res.Problems, graph.Problem{RuleID: RuleRender, Info: true, Pos: lineStart(fs[0], 1),
			Message: fmt.Sprintf("%s in %s: Jsonnet is not rendered, so what it makes is not linted", what, filepath.ToSlash(d)),
			Detail: "Argo CD evaluates the *.jsonnet files of a directory source; rolloutlint reads YAML and JSON manifests " +
				"only. Render them and pipe the output: `jsonnet -y FILE.jsonnet | rolloutlint lint -`."})
	}
}

func appendFile(files []string, f string) []string {
	for _, x := range files {
		if x == f {
			return files
		}
	}
	return append(files, f)
}

func (res *Result) fail(pos graph.Position, format string, args ...any) {
	res.Problems = append(res.Problems, graph.Problem{RuleID: RuleRender, Pos: pos, Message: fmt.Sprintf(format, args...)})
}

// failDetail is fail with a detail: what follows and how to fix it (see
// graph.Problem).
func (res *Result) failDetail(pos graph.Position, detail, format string, args ...any) {
	res.Problems = append(res.Problems, graph.Problem{RuleID: RuleRender, Pos: pos, Message: fmt.Sprintf(format, args...), Detail: detail})
}

// sourceFile is a user file parsed once for positions.
type sourceFile struct {
	path  string
	data  []byte
	lines []string
	docs  []*yaml.Node // top-level nodes of its YAML documents (nil when it is not YAML)
}

// source reads and parses a user file (nil if it cannot be read).
func (r *Renderer) source(path string) *sourceFile {
	path = filepath.Clean(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.sources[path]; ok {
		return s
	}
	// A named pipe would block the read until something writes to it (a
	// kustomization naming one hung the lint); the build reports it.
	if st, err := os.Stat(path); err != nil || load.SpecialFile(st.Mode()) != "" {
		r.sources[path] = nil
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		r.sources[path] = nil
		return nil
	}
	s := &sourceFile{path: path, data: data, lines: strings.Split(string(data), "\n")}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			break
		}
		body := &n
		if body.Kind == yaml.DocumentNode && len(body.Content) > 0 {
			body = body.Content[0]
		}
		s.docs = append(s.docs, body)
	}
	r.sources[path] = s
	return s
}

// lineStart is the position of a whole line's start.
func lineStart(file string, line int) graph.Position {
	if line < 1 {
		line = 1
	}
	return graph.Position{File: file, Line: line, Column: 1, EndLine: line, EndColumn: 2}
}

// userPath turns a path the renderer reported (absolute, or relative to
// the unit's directory) into the path as the user named the tree.
func userPath(unitDir, absDir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(absDir, p)
	}
	rel, err := filepath.Rel(absDir, p)
	if err != nil {
		return p
	}
	return filepath.Clean(filepath.Join(unitDir, rel))
}
