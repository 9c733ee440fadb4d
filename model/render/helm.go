package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	yaml2 "go.yaml.in/yaml/v2"
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
		pos := r.helmErrorPos(u.Dir, chartFile, resp.Error)
		if vf := loadValuesFile(u.Dir, resp.Error); vf != "" {
			pos = r.valuesErrorPos(vf, resp.Error)
			res.Files = appendFile(res.Files, vf)
		}
		res.fail(pos, "loading chart %s: %s", u.Dir, unquotedValues(withoutYAMLLine(cleanHelmError(resp.Error))))
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
		if at, ok := schemaValuePos(sources, resp.ChartName, resp.Error); ok {
			pos = at // the value the schema refuses, in the source it came from
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
			res.fail(r.valuesErrorPos(file, err.Error()), "values file %s is not valid YAML: %s", file, unquotedValues(withoutYAMLLine(err.Error())))
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
	yamlLineNo   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })
	yamlLineWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`yaml: line \d+: `) })
)

// yamlErrLine is the line a YAML error names, else 0.
func yamlErrLine(msg string) int {
	if m := yamlLineNo().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

var (
	// Helm's loader wraps a values.yaml it cannot parse, of the chart or
	// of a subchart directory under charts/, as
	// "error unpacking subchart b in a: cannot load values.yaml: ...".
	loadValuesRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`((?:error unpacking subchart [^ ]+ in [^ ]+: )*)cannot load values\.yaml:`)
	})
	subchartRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`error unpacking subchart ([^ ]+) in `) })
	unknownAliasRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`unknown anchor '([^']*)' referenced`) })
	schemaAtRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^- at '(/[^']*)'`) })
)

// withoutYAMLLine is a YAML error message without the line it names: the
// finding's position says it, and the parsers' lines can be one off
// (parsedErrLine) or count from the document's start.
func withoutYAMLLine(msg string) string {
	return yamlLineWord().ReplaceAllString(msg, "yaml: ")
}

// loadValuesFile is the values.yaml a chart load error is about, when the
// error is one and the file is on disk (not in a packed subchart), else "".
func loadValuesFile(dir, msg string) string {
	m := loadValuesRe().FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	for _, sub := range subchartRe().FindAllStringSubmatch(m[1], -1) {
		dir = filepath.Join(dir, "charts", sub[1])
	}
	if f := filepath.Join(dir, "values.yaml"); fileExists(f) {
		return f
	}
	return ""
}

// yamlParserProblems are the problems the YAML parser (not its scanner)
// reports. For these, the "line N" of a go.yaml.in/yaml/v3 error counts from
// 0 (the line of the construct that is not closed, or of the problem when
// the construct starts on the first line), and no line at all means the
// first; a scanner's problem counts from 1.
var yamlParserProblems = []string{"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive", "found duplicate %YAML directive",
	"found incompatible YAML document", "found undefined tag handle"}

// parsedErrLine is the line, counted from 1, of a go.yaml.in/yaml/v3
// parse error, else 0.
func parsedErrLine(msg string) int {
	for _, p := range yamlParserProblems {
		if strings.Contains(msg, p) {
			return yamlErrLine(msg) + 1
		}
	}
	return yamlErrLine(msg)
}

// blockProblemLine is, for a problem in a block collection (a key or an
// item where none may be: a line indented wrongly), the line the parser
// met it on. go.yaml.in/yaml/v3 names the line where the enclosing block
// starts (for a top-level key, the document's first), go.yaml.in/yaml/v2
// (the parser Helm reads values.yaml with) the line of the problem, which
// it counts from 0. 0 for other problems.
func blockProblemLine(msg string, data []byte) int {
	if !strings.Contains(msg, "did not find expected key") && !strings.Contains(msg, "did not find expected '-' indicator") &&
		!strings.Contains(msg, "did not find expected node content") {
		return 0
	}
	dec := yaml2.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return 0
		}
		return yamlErrLine(err.Error()) + 1
	}
}

// valuesErrorPos is where a values file that does not parse goes wrong.
// The file is parsed again here, document after document, so the line
// counts from the start of the file (Helm parses a values.yaml document by
// document, and its "line N" counts from the document's start). An error
// without a line (an alias to an anchor never defined) is placed on the
// alias. When this parser takes what Helm's did not, the line of Helm's
// message (msg) is used, if the file is one document; else the first line.
func (r *Renderer) valuesErrorPos(file, msg string) graph.Position {
	src := r.source(file)
	if src == nil {
		return lineStart(file, 1)
	}
	dec := yaml.NewDecoder(bytes.NewReader(src.data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if line := parsedErrLine(err.Error()); line > 0 {
			if l := blockProblemLine(err.Error(), src.data); l > 0 {
				line = l
			}
			return lineStart(file, line)
		}
		return unknownAliasPos(file, src.lines, err.Error())
	}
	if line := yamlErrLine(msg); line > 0 && len(src.docs) <= 1 {
		return lineStart(file, line)
	}
	return unknownAliasPos(file, src.lines, msg)
}

// unknownAliasPos is, for an error about an alias to an anchor never
// defined, the first such alias in lines; else the file's first line.
func unknownAliasPos(file string, lines []string, msg string) graph.Position {
	if m := unknownAliasRe().FindStringSubmatch(msg); m != nil {
		if pos, ok := aliasPos(file, lines, m[1]); ok {
			return pos
		}
	}
	return lineStart(file, 1)
}

// aliasPos is the first alias *name in lines (outside comments and
// quotes, roughly: preceded by a blank or a flow or block indicator and
// followed by a blank, a flow indicator or the end of the line).
func aliasPos(file string, lines []string, name string) (graph.Position, bool) {
	re, err := regexp.Compile(`(?:^|[\s\[{,:?-])(\*` + regexp.QuoteMeta(name) + `)(?:$|[\s\]},])`)
	if err != nil {
		return graph.Position{}, false
	}
	for i, l := range lines {
		if m := re.FindStringSubmatchIndex(l); m != nil {
			col := utf8.RuneCountInString(l[:m[2]]) + 1
			return graph.Position{File: file, Line: i + 1, Column: col, EndLine: i + 1, EndColumn: col + utf8.RuneCountInString(l[m[2]:m[3]])}, true
		}
	}
	return graph.Position{}, false
}

// schemaValuePos is where the first value a values.schema.json refuses was
// set: Helm's message lists, under each chart's name, the JSON pointer of
// each refused value ("- at '/image/tag': got number, want string"). Only
// the chart's own list is placed (a subchart's values are under its key);
// the last source that sets the value wins, as in Helm's merge.
func schemaValuePos(sources []valuesSource, chart, msg string) (graph.Position, bool) {
	in := false
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "- ") {
			in = line == chart+":"
			continue
		}
		m := schemaAtRe().FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		var keys []string
		for _, k := range strings.Split(m[1], "/")[1:] {
			keys = append(keys, strings.NewReplacer("~1", "/", "~0", "~").Replace(k))
		}
		for i := len(sources) - 1; i >= 0; i-- {
			s := sources[i]
			if s.param != "" {
				if s.param == strings.Join(keys, ".") {
					return s.paramValue, true
				}
				continue
			}
			if n := valueAt(s.node, keys); n != nil {
				return graph.NodePos(s.file, n), true
			}
		}
		return graph.Position{}, false
	}
	return graph.Position{}, false
}

// valueAt is the node at keys (map keys, sequence indexes) under n.
func valueAt(n *yaml.Node, keys []string) *yaml.Node {
	for _, k := range keys {
		for n != nil && n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		switch {
		case n == nil:
			return nil
		case n.Kind == yaml.MappingNode:
			n = mapValue(n, k)
		case n.Kind == yaml.SequenceNode:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return n
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
