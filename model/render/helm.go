package render

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/strvals"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// osStat is os.Stat (a variable so kustomize.go and helm.go share one name).
var osStat = os.Stat

// valuesSource is one place values came from, in the order Helm merges
// them (later wins): the chart's values.yaml, value files, inline values,
// parameters.
type valuesSource struct {
	file string // user file holding them
	// node is the values mapping in that file; line/column offsets apply
	// to inline values of an Application (a block scalar).
	node *yaml.Node
	// param is set for a single --set / Application parameter.
	param      string
	paramValue graph.Position
	what       string // for related-location messages
}

// helm renders a chart as `helm template` does, client-only, through the
// Helm engine (the rolloutlint-helm companion; see helmengine for what it
// does): the values are merged here, with where each came from, and the
// engine's answer is turned into rendered files and findings at the
// user's file and line. Nothing is downloaded and no cluster is asked.
//
// The checks keep Helm's order: a chart that does not load, or lacks a
// dependency, is reported before a problem in its values, although the
// values are merged before the engine is asked.
func (r *Renderer) helm(u *units.Unit, res *Result) {
	chartFile := filepath.Join(u.Dir, "Chart.yaml")
	res.Files = appendFile(res.Files, chartFile)
	for _, f := range chartFiles(u.Dir) {
		res.Files = appendFile(res.Files, f)
	}
	// The values' files and problems count only once the chart loaded
	// with its dependencies.
	valRes := &Result{}
	vals, sources, ok := r.helmValues(u, valRes)
	release, ns := "release-name", u.Namespace
	req := &helmrpc.Request{ChartDir: u.Dir, CheckOnly: !ok, Values: vals}
	if u.App != nil {
		release = u.App.Name
		if h := u.App.Source.Helm; h != nil {
			if h.ReleaseName != "" {
				release = h.ReleaseName
			}
			if h.Namespace != "" {
				ns = h.Namespace
			}
			req.APIVersions, req.KubeVersion = h.APIVersions, h.KubeVersion
		}
	}
	if ns == "" {
		ns = "default"
	}
	req.ReleaseName, req.Namespace = release, ns
	resp, err := r.helmEngine().Render(req)
	if err != nil {
		r.engineFailed(u, chartFile, res, err)
		return
	}
	if resp.Stage == helmrpc.StageRequest {
		res.fail(lineStart(chartFile, 1), "rendering chart %s: %s could not take the request: %s", u.Dir, helmrpc.Name, cleanHelmError(resp.Error))
		return
	}
	if resp.Stage == helmrpc.StageLoad {
		res.fail(r.helmErrorPos(u.Dir, chartFile, resp.Error), "loading chart %s: %s", u.Dir, unquotedValues(cleanHelmError(resp.Error)))
		return
	}
	if len(resp.Missing) > 0 {
		for _, name := range resp.Missing {
			pos := lineStart(chartFile, 1)
			if src := r.source(chartFile); src != nil && len(src.docs) > 0 {
				if deps := mapValue(src.docs[0], "dependencies"); deps != nil {
					for _, d := range deps.Content {
						if n := mapValue(d, "name"); n != nil && n.Value == name {
							pos = graph.NodePos(chartFile, n)
						}
					}
				}
			}
			res.failDetail(pos, "rolloutlint renders vendored dependencies only and downloads nothing: run `helm dependency build` and commit charts/.",
				"chart dependency %q is not in %s", name, filepath.Join(u.Dir, "charts"))
		}
		return
	}
	for _, f := range valRes.Files {
		res.Files = appendFile(res.Files, f)
	}
	res.Problems = append(res.Problems, valRes.Problems...)
	if !ok {
		return
	}
	switch resp.Stage {
	case "":
	case helmrpc.StageDependencies:
		res.fail(lineStart(chartFile, 1), "processing the dependencies of chart %s: %s", u.Dir, cleanHelmError(resp.Error))
		return
	case helmrpc.StageKubeVersion:
		res.failDetail(r.chartFieldPos(chartFile, "kubeVersion"), fmt.Sprintf("rolloutlint renders with Helm's default Kubernetes version, %s.", resp.KubeVersion),
			"chart %s requires kubeVersion %s, which Kubernetes %s does not satisfy", u.Dir, resp.ChartKubeVersion, resp.KubeVersion)
		return
	case helmrpc.StageValues:
		pos := lineStart(chartFile, 1)
		if schema := filepath.Join(u.Dir, "values.schema.json"); fileExists(schema) && strings.Contains(resp.Error, "schema") {
			pos = lineStart(schema, 1)
			res.Files = appendFile(res.Files, schema)
		}
		res.fail(pos, "values of chart %s: %s", u.Dir, cleanHelmError(resp.Error))
		return
	case helmrpc.StageRender:
		res.fail(r.helmErrorPos(u.Dir, chartFile, resp.Error), "helm template of %s failed: %s", u.Dir, cleanHelmError(resp.Error))
		return
	case helmrpc.StagePanic:
		res.fail(lineStart(chartFile, 1), "helm template of %s failed: Helm panicked: %s", u.Dir, cleanHelmError(resp.Error))
		return
	default:
		res.fail(lineStart(chartFile, 1), "rendering chart %s: %s failed at %s: %s", u.Dir, helmrpc.Name, resp.Stage, cleanHelmError(resp.Error))
		return
	}
	for _, f := range resp.Files { // sorted by name
		name, text := f.Name, f.Text
		base := filepath.Base(name)
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(base, "_") || strings.TrimSpace(text) == "" {
			continue
		}
		tmpl, inDep := templatePath(u.Dir, resp.ChartName, name)
		rf := &renderedFile{kind: units.Helm, path: renderedName(u, "helm") + " " + name, unitRoot: chartFile,
			template: tmpl, values: sources, dependency: inDep, app: u.App}
		if inDep != "" {
			rf.template = ""
			// A file:// dependency rendered from its own directory.
			if local := r.localDependency(chartFile, inDep); local != "" {
				rel := strings.SplitN(strings.TrimPrefix(name, resp.ChartName+"/"), "/", 3)
				if p := filepath.Join(local, filepath.FromSlash(rel[len(rel)-1])); len(rel) == 3 && fileExists(p) {
					rf.template, rf.dependency, rf.subchart, rf.subchartDir = p, "", inDep, local
					res.Files = appendFile(res.Files, p)
				}
			}
		}
		rf.data = []byte(text)
		rf.splitHelmDocs(r)
		res.Mapper.files[rf.path] = rf
		res.Inputs = append(res.Inputs, load.Input{Path: rf.path, Data: rf.data, Role: load.RoleRendered})
	}
}

// localDependency is the directory of the chart a file:// dependency of
// Chart.yaml names (by name or alias), when it holds a chart, else "".
func (r *Renderer) localDependency(chartFile, dep string) string {
	src := r.source(chartFile)
	if src == nil || len(src.docs) == 0 {
		return ""
	}
	deps := mapValue(src.docs[0], "dependencies")
	if deps == nil || deps.Kind != yaml.SequenceNode {
		return ""
	}
	for _, d := range deps.Content {
		name, alias, repo := mapValue(d, "name"), mapValue(d, "alias"), mapValue(d, "repository")
		if repo == nil || name == nil || name.Value != dep && (alias == nil || alias.Value != dep) {
			continue
		}
		if dir, ok := units.LocalDependencyDir(filepath.Dir(chartFile), repo.Value); ok && fileExists(filepath.Join(dir, "Chart.yaml")) {
			return dir
		}
	}
	return ""
}

// chartFiles lists the files of a chart directory tree Helm reads.
func chartFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		out = append(out, p)
		return nil
	})
	return out
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// templatePath turns an engine template name (chart/templates/x.yaml,
// chart/charts/sub/templates/y.yaml) into the file on disk. A template of
// a dependency packed as a .tgz has no file of its own: inDep then names
// the dependency.
func templatePath(dir, chartName, name string) (path, inDep string) {
	rel := strings.TrimPrefix(name, chartName+"/")
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if fileExists(p) {
		return p, ""
	}
	parts := strings.Split(rel, "/")
	if len(parts) > 1 && parts[0] == "charts" {
		return "", parts[1]
	}
	return p, ""
}

func (r *Renderer) chartFieldPos(chartFile, key string) graph.Position {
	if src := r.source(chartFile); src != nil && len(src.docs) > 0 {
		if n := mapValue(src.docs[0], key); n != nil {
			return graph.NodePos(chartFile, n)
		}
	}
	return lineStart(chartFile, 1)
}

// helmValues merges the values the chart is rendered with, and remembers
// where each came from for related locations.
func (r *Renderer) helmValues(u *units.Unit, res *Result) (map[string]any, []valuesSource, bool) {
	vals := map[string]any{}
	var sources []valuesSource
	if src := r.source(filepath.Join(u.Dir, "values.yaml")); src != nil && len(src.docs) > 0 {
		sources = append(sources, valuesSource{file: src.path, node: src.docs[0], what: "chart default in values.yaml"})
	}
	addFile := func(file string, at graph.Position, ignoreMissing bool) bool {
		src := r.source(file)
		if src == nil {
			if ignoreMissing {
				return true
			}
			res.fail(at, "values file %s does not exist", file)
			return false
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(src.data, &m); err != nil {
			res.fail(lineStart(file, yamlErrLine(err)), "values file %s is not valid YAML: %s", file, unquotedValues(err.Error()))
			return false
		}
		vals = mergeMaps(vals, m)
		res.Files = appendFile(res.Files, file)
		if len(src.docs) > 0 {
			sources = append(sources, valuesSource{file: file, node: src.docs[0], what: "value from " + filepath.Base(file)})
		}
		return true
	}
	var h *units.HelmSource
	if u.App != nil {
		h = u.App.Source.Helm
	}
	if h == nil {
		for _, f := range r.opts.HelmValueFiles {
			if !addFile(f, lineStart(f, 1), false) {
				return nil, nil, false
			}
		}
		for _, s := range r.opts.HelmSet {
			if err := strvals.ParseInto(s, vals); err != nil {
				res.fail(lineStart(filepath.Join(u.Dir, "Chart.yaml"), 1), "--set %s: %v", s, err)
				return nil, nil, false
			}
		}
		return vals, sources, true
	}
	app := u.App
	for i, f := range h.ValueFiles {
		at := app.Pos(fmt.Sprintf("%s.helm.valueFiles[%d]", app.SourcePath, i))
		if strings.HasPrefix(f, "$") {
			res.failDetail(at, "rolloutlint does not resolve ref sources.", "value file %q comes from another source of the Application (a ref source)", f)
			return nil, nil, false
		}
		file := f
		if !filepath.IsAbs(file) {
			file = filepath.Join(u.Dir, filepath.FromSlash(f))
		}
		if !addFile(file, at, h.IgnoreMissingValueFiles) {
			return nil, nil, false
		}
	}
	switch {
	case h.ValuesObject != nil:
		vals = mergeMaps(vals, h.ValuesObject)
		if n := appNode(app, app.SourcePath+".helm.valuesObject"); n != nil {
			sources = append(sources, valuesSource{file: app.File, node: n, what: "valuesObject of Application " + app.Name})
		}
	case strings.TrimSpace(h.Values) != "":
		m := map[string]any{}
		at := app.Pos(app.SourcePath + ".helm.values")
		if err := yaml.Unmarshal([]byte(h.Values), &m); err != nil {
			res.fail(at, "helm.values of Application %s is not valid YAML: %s", app.Name, unquotedValues(err.Error()))
			return nil, nil, false
		}
		vals = mergeMaps(vals, m)
		if n := inlineValues(app, h.Values); n != nil {
			sources = append(sources, valuesSource{file: app.File, node: n, what: "helm.values of Application " + app.Name})
		}
	}
	for i, p := range h.Parameters {
		at := app.Pos(fmt.Sprintf("%s.helm.parameters[%d].value", app.SourcePath, i))
		set := p.Name + "=" + p.Value
		var err error
		if p.ForceString {
			err = strvals.ParseIntoString(set, vals)
		} else {
			err = strvals.ParseInto(set, vals)
		}
		if err != nil {
			res.fail(at, "helm parameter %s: %v", p.Name, err)
			return nil, nil, false
		}
		sources = append(sources, valuesSource{file: app.File, param: p.Name, paramValue: at, what: "parameter of Application " + app.Name})
	}
	return vals, sources, true
}

// appNode is the node of an Application field.
func appNode(app *units.Application, path string) *yaml.Node {
	pos := app.Pos(path)
	var found *yaml.Node
	walkYAML(app.Node(), func(k, v *yaml.Node) {
		if k != nil && k.Line == pos.Line && k.Column == pos.Column {
			found = v
		}
	})
	return found
}

// inlineValues parses an Application's helm.values block with lines and
// columns of the Application file.
func inlineValues(app *units.Application, text string) *yaml.Node {
	v := appNode(app, app.SourcePath+".helm.values")
	if v == nil || v.Kind != yaml.ScalarNode {
		return nil
	}
	var doc yaml.Node
	if yaml.Unmarshal([]byte(text), &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	lineOff := v.Line // a block scalar's text starts on the next line
	colOff := v.Column + 1
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		lineOff, colOff = v.Line-1, v.Column
	}
	stack := []*yaml.Node{doc.Content[0]}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n.Line += lineOff
		n.Column += colOff - 1
		stack = append(stack, n.Content...)
	}
	return doc.Content[0]
}

// mergeMaps merges b into a as Helm merges value files: maps merge
// recursively, anything else in b replaces.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

var (
	tmplErrRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`([A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)+):(\d+)(?::(\d+))?`)
	})
	yamlLineNo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })
)

func yamlErrLine(err error) int {
	if m := yamlLineNo().FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 1
}

// helmErrorPos finds the template file and line of a Helm error
// ("template: chart/templates/x.yaml:12:3: executing ..."), else the file
// the error names, else Chart.yaml.
func (r *Renderer) helmErrorPos(dir, chartFile, msg string) graph.Position {
	for _, m := range tmplErrRe().FindAllStringSubmatch(msg, -1) {
		parts := strings.SplitN(m[1], "/", 2)
		if len(parts) < 2 {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(parts[1]))
		if !fileExists(p) {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col := 1
		if m[3] != "" {
			col, _ = strconv.Atoi(m[3])
			col++ // Helm's columns are 0-based
		}
		return graph.Position{File: p, Line: line, Column: col, EndLine: line, EndColumn: col + 1}
	}
	return lineStart(chartFile, 1)
}

// cleanHelmError is Helm's error text as findings show it.
func cleanHelmError(msg string) string {
	return strings.TrimSpace(msg)
}

// Helm's and the YAML parsers' messages about a values file quote it: an
// unknown anchor's name, the text after a bad `---`. A values file is not a
// manifest and often holds credentials, so, as for files the loader reads,
// what they quote is left out of reports.
var (
	yamlMsgRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`yaml: .*`) })
	yamlQuotedRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("'[^']*'|`[^`]*`") })
	helmBadSepRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(invalid yaml document separator): .*`) })
)

// unquotedValues is a message about a values file without what it quotes
// of the file.
func unquotedValues(msg string) string {
	msg = helmBadSepRe().ReplaceAllString(msg, "$1 (a --- line followed by text)")
	return yamlMsgRe().ReplaceAllStringFunc(msg, func(m string) string { return yamlQuotedRe().ReplaceAllString(m, "(…)") })
}
