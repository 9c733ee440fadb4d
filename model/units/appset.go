package units

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// ruleRender is the tool rule of what is not rendered (RL0010, defined in
// rules/tool; render.RuleRender).
const ruleRender = "RL0010"

// appSet is an Argo CD ApplicationSet found in a manifest file.
type appSet struct {
	file            string
	doc             int
	name, namespace string
	node            *yaml.Node // the ApplicationSet's mapping
	lines           []string   // the file's lines, for templatePatch positions
}

// applicationSetsIn reads the ApplicationSets of a manifest file.
func applicationSetsIn(file string, data []byte) []*appSet {
	if !bytes.Contains(data, []byte("ApplicationSet")) {
		return nil
	}
	var out []*appSet
	lines := strings.Split(string(data), "\n")
	mappingDocuments(data, func(doc int, body *yaml.Node) {
		var head struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name      string `yaml:"name"`
				Namespace string `yaml:"namespace"`
			} `yaml:"metadata"`
		}
		if body.Decode(&head) != nil || head.Kind != "ApplicationSet" || !strings.HasPrefix(head.APIVersion, "argoproj.io/") {
			return
		}
		out = append(out, &appSet{file: file, doc: doc, name: head.Metadata.Name, namespace: head.Metadata.Namespace, node: body, lines: lines})
	})
	return out
}

// paramSet is one set of template parameters a generator makes, and what
// it came from (for messages).
type paramSet struct {
	vals map[string]any
	desc string
	// tmpl is the template its Application is made from (the set's, or
	// its generator's merged over it).
	tmpl *yaml.Node
}

// expander expands one ApplicationSet's generators: the ones that need
// nothing but the repository (list, git directories and files, matrix and
// merge of those). The others need a cluster or a network, and are info
// findings, as is anything else not evaluated here.
type expander struct {
	set      *appSet
	goTmpl   bool
	options  []string
	bases    []string // candidate repository roots, first match wins
	trees    map[string]*tree
	problems []graph.Problem
	// failed is set when Argo CD would fail too (a template error, a
	// parameter fasttemplate cannot take, clashing matrix parameters):
	// its controller then creates none of the set's Applications.
	failed bool
	// skipped is set when rolloutlint does not evaluate a template Argo
	// CD may (notEvaluated): then too none of the set's Applications is
	// linted.
	skipped bool
	// budget, funcs and parsed are the Go templates' limits, functions
	// and parsed strings, made at the first Go template.
	budget *budget
	funcs  template.FuncMap
	parsed map[string]*goTemplate
}

// maxGeneratorDepth bounds matrix and merge nesting (Argo CD allows one
// level of nesting inside them).
const maxGeneratorDepth = 3

// expandApplicationSet returns the Applications an ApplicationSet
// generates from the repository, and the info findings on what it could
// not evaluate.
func expandApplicationSet(s *appSet, bases []string) ([]*Application, []graph.Problem) {
	x := &expander{set: s, bases: bases}
	spec := child(s.node, "spec")
	if v := child(spec, "goTemplate"); v != nil && v.Value == "true" {
		x.goTmpl = true
	}
	if v := child(spec, "goTemplateOptions"); v != nil && v.Kind == yaml.SequenceNode {
		for _, o := range v.Content {
			x.options = append(x.options, o.Value)
		}
	}
	tmpl := child(spec, "template")
	if tmpl == nil || tmpl.Kind != yaml.MappingNode {
		x.note(x.keyPos(spec, "template"), "ApplicationSet %s has no template, so it generates no Application here", s.name)
		return nil, x.problems
	}
	patch := child(spec, "templatePatch")
	if patch != nil && (patch.Kind != yaml.ScalarNode || patch.ShortTag() == "!!null") {
		if patch.Kind != yaml.ScalarNode {
			x.fail(x.keyPos(spec, "templatePatch"), "templatePatch is not a string")
			return nil, x.problems
		}
		patch = nil
	}
	gens := child(spec, "generators")
	if gens == nil || gens.Kind != yaml.SequenceNode {
		return nil, x.problems
	}
	var sets []paramSet
	for _, g := range gens.Content {
		ps, ok := x.generate(g, 0)
		if ok {
			// A generator's own template, merged over the set's, makes its
			// Applications.
			t := mergeTemplate(generatorTemplate(g), tmpl)
			for i := range ps {
				ps[i].tmpl = t
			}
			sets = append(sets, ps...)
		}
	}
	var out []*Application
	for _, p := range sets {
		if x.failed || x.skipped {
			break
		}
		n, err := x.substitute(p.tmpl, p.vals)
		if err != nil {
			x.templateFailed(err, p.desc)
			break
		}
		if patch != nil {
			patched, perr := x.applyTemplatePatch(n, patch, p.vals)
			if perr != nil {
				x.templateFailed(&templateError{pos: perr.pos, msg: perr.msg, limit: perr.limit}, p.desc)
				break
			}
			n = patched
		}
		for _, a := range applicationFrom(s.file, s.doc, n, true) {
			if a.Name == "" {
				continue
			}
			// Argo CD puts every Application in the ApplicationSet's
			// namespace, whatever the template says.
			a.Namespace = s.namespace
			a.Origin = &Origin{Set: s.name, Params: p.desc, Chain: []string{"ApplicationSet " + s.name}}
			out = append(out, a)
		}
	}
	if x.failed || x.skipped {
		return nil, x.problems
	}
	return out, x.problems
}

// templateFailed reports a template that did not render: a limitation
// of rolloutlint (notEvaluated) or an error Argo CD has too.
func (x *expander) templateFailed(err *templateError, desc string) {
	if err.limit {
		x.skip(err.pos, "(%s) %s", desc, err.msg)
		return
	}
	x.fail(err.pos, "(%s) %s", desc, err.msg)
}

// skip adds the info finding on a template rolloutlint does not evaluate:
// the set is not expanded, so none of its Applications is linted.
func (x *expander) skip(pos graph.Position, format string, args ...any) {
	if x.failed || x.skipped {
		return
	}
	x.skipped = true
	x.note(pos, "ApplicationSet %s: %s; its Applications are not linted", x.set.name, fmt.Sprintf(format, args...))
}

// fail adds the info finding on an error Argo CD's controller would hit
// too: it then generates none of the set's Applications, so none is
// linted.
func (x *expander) fail(pos graph.Position, format string, args ...any) {
	if x.failed || x.skipped {
		return
	}
	x.failed = true
	x.note(pos, "ApplicationSet %s: %s; Argo CD generates none of its Applications, so none is linted", x.set.name, fmt.Sprintf(format, args...))
}

// note adds an info finding.
func (x *expander) note(pos graph.Position, format string, args ...any) {
	x.problems = append(x.problems, graph.Problem{RuleID: ruleRender, Info: true, Pos: pos, Message: fmt.Sprintf(format, args...),
		Detail: "rolloutlint expands the list, git (directories and files of this repository), matrix and merge generators " +
			"of an ApplicationSet offline, with Go templates as Argo CD evaluates them (Sprig and Argo CD's functions); what needs a cluster " +
			"or a network, and a template whose result would differ from run to run (the clock, randomness) or that goes over rolloutlint's " +
			"limits (loops, huge values), is not expanded."})
}

// keyPos is the position of a key of a mapping, else of the mapping.
func (x *expander) keyPos(m *yaml.Node, key string) graph.Position {
	if m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return graph.NodePos(x.set.file, m.Content[i])
			}
		}
	}
	if m == nil {
		m = x.set.node
	}
	return graph.NodePos(x.set.file, m)
}

// generate evaluates one generator (a mapping with one generator key, and
// a selector).
func (x *expander) generate(g *yaml.Node, depth int) ([]paramSet, bool) {
	return x.generateSelected(g, child(g, "selector"), depth)
}

// generateSelected evaluates a generator and keeps the parameter sets its
// selector (sel, nil for none) selects. The selector is passed apart from
// the generator: Argo CD filters a matrix's second generator with the
// selector as written, not as the first generator's parameters fill it in.
func (x *expander) generateSelected(g, sel *yaml.Node, depth int) ([]paramSet, bool) {
	var selector paramSelector
	if sel != nil {
		var err error
		if selector, err = parseSelector(sel); err != nil {
			x.fail(x.keyPos(g, "selector"), "%v", err)
			return nil, false
		}
	}
	sets, ok := x.generator(g, depth)
	if !ok || selector == nil {
		return sets, ok
	}
	kept := sets[:0]
	for _, p := range sets {
		if selector.matches(selectorLabels(p.vals)) {
			kept = append(kept, p)
		}
	}
	return kept, true
}

// generator evaluates one generator's parameter sets.
func (x *expander) generator(g *yaml.Node, depth int) ([]paramSet, bool) {
	if g == nil || g.Kind != yaml.MappingNode || len(g.Content) < 2 {
		return nil, false
	}
	for i := 0; i+1 < len(g.Content); i += 2 {
		key, val := g.Content[i], g.Content[i+1]
		pos := graph.NodePos(x.set.file, key)
		switch key.Value {
		case "selector", "template":
			// The selector is applied by generateSelected; a template beside
			// the generator (rather than in it) is no field of Argo CD's, which
			// ignores it.
			continue
		case "list":
			return x.list(val, pos)
		case "git":
			return x.git(val, pos)
		case "matrix", "merge":
			if depth >= maxGeneratorDepth {
				x.note(pos, "ApplicationSet %s: %s generators nested deeper than %d are not expanded", x.set.name, key.Value, maxGeneratorDepth)
				return nil, false
			}
			if key.Value == "matrix" {
				return x.matrix(val, pos, depth)
			}
			return x.merge(val, pos, depth)
		case "clusters", "scmProvider", "pullRequest", "clusterDecisionResource", "plugin":
			x.note(pos, "ApplicationSet %s: the %s generator needs %s, so its Applications are not linted", x.set.name, key.Value, needs(key.Value))
			return nil, false
		default:
			x.note(pos, "ApplicationSet %s: generator %q is not one rolloutlint expands, so its Applications are not linted", x.set.name, key.Value)
			return nil, false
		}
	}
	return nil, false
}

func needs(gen string) string {
	switch gen {
	case "clusters":
		return "the clusters registered in Argo CD"
	case "clusterDecisionResource":
		return "a resource in the cluster"
	case "plugin":
		return "a plugin service"
	}
	return "a source code host's API" // scmProvider, pullRequest
}

// list is the list generator: each element is a parameter set, then each
// item of elementsYaml. With fasttemplate an element's values must be
// strings (and its `values` a map of strings, as values.KEY), as Argo CD
// requires; elementsYaml items are taken as they are.
func (x *expander) list(val *yaml.Node, pos graph.Position) ([]paramSet, bool) {
	var out []paramSet
	if elems := child(val, "elements"); elems != nil && elems.Kind == yaml.SequenceNode {
		for i, e := range elems.Content {
			var m map[string]any
			if e.Decode(&m) != nil {
				x.fail(graph.NodePos(x.set.file, e), "list element %d is not a mapping", i)
				return nil, false
			}
			m = jsonValues(m)
			desc := fmt.Sprintf("list element %d", i)
			if x.goTmpl {
				out = append(out, paramSet{vals: m, desc: desc})
				continue
			}
			p := map[string]any{}
			for k, v := range m {
				if vs, ok := v.(map[string]any); ok && k == "values" {
					for _, vk := range sortedKeys(vs) {
						vv := vs[vk]
						if _, ok := vv.(string); !ok {
							x.fail(graph.NodePos(x.set.file, e), "list element %d: values.%s is not a string", i, vk)
							return nil, false
						}
						p["values."+vk] = vv
					}
					continue
				}
				if _, ok := v.(string); !ok {
					x.fail(graph.NodePos(x.set.file, e), "list element %d: %s is not a string (fasttemplate takes strings only)", i, k)
					return nil, false
				}
				p[k] = v
			}
			out = append(out, paramSet{vals: p, desc: desc})
		}
	}
	if ey := child(val, "elementsYaml"); ey != nil && ey.Value != "" {
		var items []map[string]any
		if strings.Contains(ey.Value, "{{") {
			x.note(graph.NodePos(x.set.file, ey), "ApplicationSet %s: elementsYaml is not evaluated, so its Applications are not linted", x.set.name)
			return nil, false
		}
		if err := yaml.Unmarshal([]byte(ey.Value), &items); err != nil {
			x.fail(graph.NodePos(x.set.file, ey), "elementsYaml is not a list of mappings (%v)", strings.TrimPrefix(err.Error(), "yaml: "))
			return nil, false
		}
		for i, m := range items {
			out = append(out, paramSet{vals: jsonValues(m), desc: fmt.Sprintf("elementsYaml item %d", i)})
		}
	}
	return out, true
}

// jsonValues is a decoded YAML value as Argo CD holds it: converted to JSON
// and decoded again, so numbers are float64 (rendered as Go prints them:
// 1000000 is 1e+06).
func jsonValues(m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if json.Unmarshal(data, &out) != nil {
		return m
	}
	return out
}

// flatParams turns a git file's values into fasttemplate parameters as
// Argo CD does: nested keys joined with dots (list items by index, as
// zones.0), every value printed with %v.
func flatParams(m map[string]any) map[string]any {
	out := map[string]any{}
	flatten("", m, out)
	return out
}

func flatten(prefix string, v any, out map[string]any) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			flatten(join(k), c, out)
		}
	case []any:
		for i, c := range t {
			flatten(join(strconv.Itoa(i)), c, out)
		}
	default:
		out[prefix] = fmt.Sprintf("%v", v)
	}
}

// git is the git generator: directories or files of this repository (the
// tree linted; its repoURL is not compared, as for Applications, whose
// paths are looked for in the tree). Directories are every directory of
// the tree but hidden ones, matched with path.Match as Argo CD does (`*`
// stays within a segment, `**` is the same as `*`); files are matched as
// `git ls-files` matches a pathspec, which the repo server runs (`*`
// crosses `/`).
func (x *expander) git(val *yaml.Node, pos graph.Position) ([]paramSet, bool) {
	var spec struct {
		Directories []struct {
			Path    string `yaml:"path"`
			Exclude bool   `yaml:"exclude"`
		} `yaml:"directories"`
		Files []struct {
			Path    string `yaml:"path"`
			Exclude bool   `yaml:"exclude"`
		} `yaml:"files"`
		PathParamPrefix string            `yaml:"pathParamPrefix"`
		Values          map[string]string `yaml:"values"`
	}
	if val.Decode(&spec) != nil {
		return nil, false
	}
	if len(spec.Directories) == 0 && len(spec.Files) == 0 {
		x.fail(pos, "the git generator has neither directories nor files")
		return nil, false
	}
	var out []paramSet
	matched := false
	for _, base := range x.bases {
		if x.trees == nil {
			x.trees = map[string]*tree{}
		}
		t := x.trees[base]
		if t == nil {
			t = &tree{}
			t.dirs, t.files = repoTree(base)
			x.trees[base] = t
		}
		dirs, files := t.dirs, t.files
		if len(spec.Directories) > 0 {
			for _, rel := range dirs {
				include, exclude := false, false
				for _, d := range spec.Directories {
					if ok, err := path.Match(d.Path, rel); err == nil && ok {
						if d.Exclude {
							exclude = true
						} else {
							include = true
						}
					}
				}
				if !include || exclude {
					continue
				}
				matched = true
				vals, err := x.withValues(x.pathParams(rel, "", spec.PathParamPrefix), spec.Values)
				if err != nil {
					x.valuesFailed(pos, err)
					return nil, false
				}
				out = append(out, paramSet{vals: vals, desc: "directory " + rel})
			}
		} else {
			keep := map[string]bool{}
			for _, f := range spec.Files {
				if !f.Exclude {
					for _, rel := range files {
						if pathspecMatch(f.Path, rel) {
							keep[rel] = true
						}
					}
				}
			}
			for _, f := range spec.Files {
				if f.Exclude {
					for _, rel := range files {
						if pathspecMatch(f.Path, rel) {
							delete(keep, rel)
						}
					}
				}
			}
			for _, rel := range files { // sorted, as Argo CD sorts them
				if !keep[rel] {
					continue
				}
				matched = true
				ps, err := x.fileParams(filepath.Join(base, filepath.FromSlash(rel)), rel, spec.PathParamPrefix)
				if err != nil {
					x.fail(pos, "git file %s does not parse (%v)", rel, err)
					return nil, false
				}
				for _, p := range ps {
					if p.vals, err = x.withValues(p.vals, spec.Values); err != nil {
						x.valuesFailed(pos, err)
						return nil, false
					}
					out = append(out, p)
				}
			}
		}
		if matched {
			break
		}
	}
	if !matched {
		x.note(pos, "ApplicationSet %s: the git generator matches nothing in the linted tree, so it generates no Application here", x.set.name)
	}
	return out, true
}

// tree is a repository's directories and files (repoTree), listed once
// per ApplicationSet.
type tree struct{ dirs, files []string }

// repoTree lists a repository as the repo server sees its checkout: every
// directory but hidden ones (walk order), and every file but those of .git
// (sorted), relative to the root.
func repoTree(root string) (dirs, files []string) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable entry holds nothing the generator sees
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				hiddenFiles(p, rel, &files)
				return filepath.SkipDir
			}
			dirs = append(dirs, rel)
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return dirs, files
}

// hiddenFiles adds the files of a hidden directory (git lists them; the
// directories generator does not).
func hiddenFiles(dir, rel string, files *[]string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			r, _ := filepath.Rel(dir, p)
			*files = append(*files, rel+"/"+filepath.ToSlash(r))
		}
		return nil
	})
}

// pathspecMatch matches a path as `git ls-files -- PATTERN` does with
// git's default pathspec magic: a pattern without wildcards names a file
// or a directory (all below it); one with wildcards is matched whole,
// without treating `/` specially (`*` and `?` match it too).
func pathspecMatch(pattern, name string) bool {
	for strings.HasPrefix(pattern, "./") {
		pattern = pattern[2:]
	}
	if pattern == "" || pattern == "." {
		return true
	}
	lit := strings.IndexAny(pattern, `*?[\`)
	if lit < 0 {
		if name == pattern {
			return true
		}
		return strings.HasPrefix(name, pattern) && (strings.HasSuffix(pattern, "/") || name[len(pattern)] == '/')
	}
	if !strings.HasPrefix(name, pattern[:lit]) {
		return false
	}
	return wildmatch(pattern, name)
}

// wildmatch is git's wildmatch without WM_PATHNAME: `*` any run of
// characters, `?` any one, `[...]` a class (`!` or `^` negates, `a-z`
// ranges), `\` quotes the next character.
func wildmatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if wildmatch(p, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			p, s = p[1:], s[1:]
		case '[':
			if s == "" {
				return false
			}
			ok, rest, valid := matchClass(p, s[0])
			if !valid {
				return false // git: an unterminated class matches nothing
			}
			if !ok {
				return false
			}
			p, s = rest, s[1:]
		case '\\':
			if len(p) < 2 || s == "" || s[0] != p[1] {
				return false
			}
			p, s = p[2:], s[1:]
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return s == ""
}

// matchClass matches c against the class at the start of p ("[...]"),
// and returns the pattern after it.
func matchClass(p string, c byte) (ok bool, rest string, valid bool) {
	i := 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate, i = true, i+1
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return ok != negate, p[i+1:], true
		}
		first = false
		lo := p[i]
		if lo == '\\' && i+1 < len(p) {
			i++
			lo = p[i]
		}
		if i+2 < len(p) && p[i+1] == '-' && p[i+2] != ']' {
			hi := p[i+2]
			if lo <= c && c <= hi {
				ok = true
			}
			i += 3
			continue
		}
		if lo == c {
			ok = true
		}
		i++
	}
	return false, "", false
}

// pathParams are the path parameters of a directory (file "" ) or of a
// file of the git generator.
func (x *expander) pathParams(dir, file, prefix string) map[string]any {
	segs := strings.Split(dir, "/")
	base := path.Base(dir)
	if x.goTmpl {
		p := map[string]any{"path": dir, "basename": base, "basenameNormalized": normalize(base), "segments": segs}
		if file != "" {
			p["filename"], p["filenameNormalized"] = file, normalize(file)
		}
		out := map[string]any{"path": p}
		if prefix != "" {
			out = map[string]any{prefix: out}
		}
		return out
	}
	key := "path"
	if prefix != "" {
		key = prefix + ".path"
	}
	out := map[string]any{key: dir, key + ".basename": base, key + ".basenameNormalized": normalize(base)}
	if file != "" {
		out[key+".filename"], out[key+".filenameNormalized"] = file, normalize(file)
	}
	for i, s := range segs {
		if s != "" {
			out[fmt.Sprintf("%s[%d]", key, i)] = s
		}
	}
	return out
}

// fileParams reads a git generator's file: a mapping is one parameter
// set, a list one per item, each with the path parameters of its
// directory.
func (x *expander) fileParams(file, rel, prefix string) ([]paramSet, error) {
	data, err := readLimited(file)
	if err != nil {
		return nil, err
	}
	var items []map[string]any
	var one map[string]any
	if err := yaml.Unmarshal(data, &one); err == nil {
		items = append(items, one)
	} else if err := yaml.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("%v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var out []paramSet
	for i, m := range items {
		m = jsonValues(m)
		if m == nil {
			m = map[string]any{}
		}
		p := m
		if !x.goTmpl {
			p = flatParams(m)
		}
		for k, v := range x.pathParams(path.Dir(rel), path.Base(rel), prefix) {
			p[k] = v
		}
		desc := "file " + rel
		if len(items) > 1 {
			desc = fmt.Sprintf("file %s item %d", rel, i)
		}
		out = append(out, paramSet{vals: p, desc: desc})
	}
	return out, nil
}

// valuesFailed reports a git generator's values that did not render.
func (x *expander) valuesFailed(pos graph.Position, err error) {
	var ne *notEvaluated
	if errors.As(err, &ne) {
		x.skip(pos, "git generator values: %v", err)
		return
	}
	x.fail(pos, "git generator values: %v", err)
}

// withValues adds a generator's values (templated with its parameters) as
// values.KEY.
func (x *expander) withValues(p map[string]any, values map[string]string) (map[string]any, error) {
	if len(values) == 0 {
		return p, nil
	}
	vs := map[string]any{}
	for _, k := range sortedKeys(values) {
		s, err := x.render(values[k], p)
		if err != nil {
			return nil, err
		}
		vs[k] = s
	}
	if x.goTmpl {
		p["values"] = vs
	} else {
		for k, v := range vs {
			p["values."+k] = v
		}
	}
	return p, nil
}

// matrix is the cartesian product of two generators; the second may use
// the first's parameters. With Go templates the first's values win (maps
// merged, empty values not overriding); with fasttemplate a key both set
// to different values is an error, as in Argo CD.
func (x *expander) matrix(val *yaml.Node, pos graph.Position, depth int) ([]paramSet, bool) {
	gens := child(val, "generators")
	if gens == nil || gens.Kind != yaml.SequenceNode || len(gens.Content) != 2 {
		x.fail(pos, "a matrix generator needs exactly two generators")
		return nil, false
	}
	first, ok := x.generate(gens.Content[0], depth+1)
	if !ok {
		return nil, false
	}
	var out []paramSet
	for _, p1 := range first {
		g2, err := x.substitute(gens.Content[1], p1.vals)
		if err != nil {
			x.templateFailed(err, p1.desc)
			return nil, false
		}
		second, ok := x.generateSelected(g2, child(gens.Content[1], "selector"), depth+1)
		if !ok {
			return nil, false
		}
		for _, p2 := range second {
			var vals map[string]any
			if x.goTmpl {
				vals = mergeOver(mergeOver(map[string]any{}, p2.vals), p1.vals)
			} else {
				vals = map[string]any{}
				for k, v := range p1.vals {
					vals[k] = fmt.Sprintf("%v", v)
				}
				// Keys in order, so that the clash reported is the same
				// on every run (Argo CD's own message names whichever its
				// map iteration meets first).
				for _, k := range sortedKeys(p2.vals) {
					s := fmt.Sprintf("%v", p2.vals[k])
					if cur, ok := vals[k]; ok && cur != s {
						x.fail(pos, "matrix: %s is %q in the first generator and %q in the second", k, cur, s)
						return nil, false
					}
					vals[k] = s
				}
			}
			out = append(out, paramSet{vals: vals, desc: p1.desc + " × " + p2.desc})
		}
	}
	return out, true
}

// merge is the merge generator: the first generator's parameter sets,
// with those of the others whose mergeKeys values (top-level parameters)
// agree merged over them. Parameter sets of one generator must differ in
// their merge keys.
func (x *expander) merge(val *yaml.Node, pos graph.Position, depth int) ([]paramSet, bool) {
	var spec struct {
		MergeKeys []string `yaml:"mergeKeys"`
	}
	gens := child(val, "generators")
	if val.Decode(&spec) != nil || gens == nil || gens.Kind != yaml.SequenceNode || len(gens.Content) < 2 || len(spec.MergeKeys) == 0 {
		x.fail(pos, "a merge generator needs two generators or more and mergeKeys")
		return nil, false
	}
	key := func(p map[string]any) string {
		k := map[string]any{}
		for _, m := range spec.MergeKeys {
			k[m] = p[m]
		}
		data, _ := json.Marshal(k)
		return string(data)
	}
	var base []paramSet
	index := map[string]int{}
	for gi, g := range gens.Content {
		sets, ok := x.generate(g, depth+1)
		if !ok {
			return nil, false
		}
		byKey := map[string]paramSet{}
		for _, s := range sets {
			k := key(s.vals)
			if _, dup := byKey[k]; dup {
				x.fail(pos, "merge: generator %d makes two parameter sets with merge keys %s", gi+1, k)
				return nil, false
			}
			byKey[k] = s
		}
		if gi == 0 {
			base = sets
			for i, s := range sets {
				index[key(s.vals)] = i
			}
			continue
		}
		for k, s := range byKey {
			i, ok := index[k]
			if !ok {
				continue
			}
			if x.goTmpl {
				base[i].vals = mergeOver(base[i].vals, s.vals)
			} else {
				m := map[string]any{}
				for bk, bv := range base[i].vals {
					m[bk] = bv
				}
				for sk, sv := range s.vals {
					m[sk] = sv
				}
				base[i].vals = m
			}
		}
	}
	return base, true
}

// mergeOver is dst with src's values set over it, as mergo.Merge with
// WithOverride does for maps: maps merged key by key, every other value of
// src (an empty one too) replacing dst's.
func mergeOver(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = mergeOver(dm, sm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// templateError is a substitution that failed, at its field.
type templateError struct {
	pos graph.Position
	msg string
	// limit is a template rolloutlint does not evaluate (notEvaluated).
	limit bool
}

// substitute copies a node tree (keeping its lines, so positions stay
// those of the ApplicationSet's file) with the parameters put into every
// string that holds `{{`.
func (x *expander) substitute(n *yaml.Node, p map[string]any) (*yaml.Node, *templateError) {
	c := *n
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "{{") {
		s, err := x.render(n.Value, p)
		if err != nil {
			var ne *notEvaluated
			return nil, &templateError{pos: graph.NodePos(x.set.file, n), msg: err.Error(), limit: errors.As(err, &ne)}
		}
		c.Value = s
		if c.Tag == "" || c.Tag == "!!str" || n.Style != 0 {
			c.Tag = "!!str"
		}
	}
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			var err *templateError
			if c.Content[i], err = x.substitute(k, p); err != nil {
				return nil, err
			}
		}
	}
	return &c, nil
}

// fastTag is a fasttemplate tag.
var fastTag = regexp.MustCompile(`\{\{([^{}]*)\}\}`)

// render substitutes the parameters into one string: fasttemplate's
// `{{name}}` (a tag with no parameter stays as written), or a Go template
// (parsed once per string and set). A Go template rolloutlint does not
// evaluate (a nondeterministic function, over the budget) is a
// *notEvaluated error; any other error is one Argo CD has too.
func (x *expander) render(s string, p map[string]any) (string, error) {
	if !x.goTmpl {
		return fastTag.ReplaceAllStringFunc(s, func(tag string) string {
			name := strings.TrimSpace(tag[2 : len(tag)-2])
			if v, ok := p[name].(string); ok && name != "" {
				return v
			}
			return tag
		}), nil
	}
	if x.budget == nil {
		x.budget = newBudget()
		x.funcs = funcsFor(x.budget)
		x.parsed = map[string]*goTemplate{}
	}
	if x.budget.over != "" {
		return "", &notEvaluated{fmt.Sprintf("template %q is not evaluated: %s", s, x.budget.over)}
	}
	g := x.parsed[s]
	if g == nil {
		var err error
		if g, err = parseGoTemplate(s, x.funcs, x.budget, x.options); err != nil {
			msg := err.Error()
			if i := strings.Index(msg, "function "); i >= 0 {
				msg = msg[i:]
			}
			return "", fmt.Errorf("template %q: %s", s, msg)
		}
		x.parsed[s] = g
	}
	if g.calls != "" {
		return "", &notEvaluated{fmt.Sprintf("template %q calls %s, which does not give the same result every time, so it is not evaluated", s, g.calls)}
	}
	w := &limitedWriter{b: x.budget}
	if err := g.t.Execute(w, p); err != nil {
		if x.budget.over != "" {
			return "", &notEvaluated{fmt.Sprintf("template %q is not evaluated: %s", s, x.budget.over)}
		}
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return "", fmt.Errorf("template %q: %s", s, msg)
	}
	return w.buf.String(), nil
}

// notEvaluated is a template rolloutlint does not evaluate, though Argo CD
// may: the set is then not expanded (a limitation, not Argo CD's error).
type notEvaluated struct{ msg string }

func (e *notEvaluated) Error() string { return e.msg }

// normalize makes a string a DNS name as Argo CD's normalize does:
// lower case, characters other than letters, digits, '-' and '.' replaced
// by '-', at most 253 characters.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := b.String()
	if len(out) > 253 {
		out = out[:253]
	}
	return strings.Trim(out, "-.")
}

// readLimited reads a git generator's file, up to the loader's file-size
// limit.
func readLimited(file string) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if st.Size() > load.DefaultMaxFileBytes {
		return nil, fmt.Errorf("over %d bytes", load.DefaultMaxFileBytes)
	}
	return os.ReadFile(file)
}

// sortedKeys are m's keys in order: the walks that can stop at an error
// take them so, and report the same one on every run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
