package units

import (
	"bytes"
	"fmt"
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
}

// applicationSetsIn reads the ApplicationSets of a manifest file.
func applicationSetsIn(file string, data []byte) []*appSet {
	if !bytes.Contains(data, []byte("ApplicationSet")) {
		return nil
	}
	var out []*appSet
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
		out = append(out, &appSet{file: file, doc: doc, name: head.Metadata.Name, namespace: head.Metadata.Namespace, node: body})
	})
	return out
}

// paramSet is one set of template parameters a generator makes, and what
// it came from (for messages).
type paramSet struct {
	vals map[string]any
	desc string
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
	dirs     map[string]*dirInfo
	problems []graph.Problem
}

// maxGeneratorDepth bounds matrix and merge nesting (Argo CD allows one
// level of nesting inside them).
const maxGeneratorDepth = 3

// expandApplicationSet returns the Applications an ApplicationSet
// generates from the repository, and the info findings on what it could
// not evaluate.
func expandApplicationSet(s *appSet, dirs map[string]*dirInfo, bases []string) ([]*Application, []graph.Problem) {
	x := &expander{set: s, dirs: dirs, bases: bases}
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
	if child(spec, "templatePatch") != nil {
		x.note(x.keyPos(spec, "templatePatch"), "ApplicationSet %s: templatePatch is not applied, so its Applications are not linted", s.name)
		return nil, x.problems
	}
	gens := child(spec, "generators")
	if gens == nil || gens.Kind != yaml.SequenceNode {
		return nil, x.problems
	}
	var sets []paramSet
	for _, g := range gens.Content {
		ps, ok := x.generate(g, 0)
		if ok {
			sets = append(sets, ps...)
		}
	}
	var out []*Application
	for _, p := range sets {
		n, err := x.substitute(tmpl, p.vals)
		if err != nil {
			x.note(err.pos, "ApplicationSet %s (%s): %s, so that Application is not linted", s.name, p.desc, err.msg)
			continue
		}
		for _, a := range applicationFrom(s.file, s.doc, n, true) {
			if a.Name == "" {
				continue
			}
			if a.Namespace == "" {
				a.Namespace = s.namespace
			}
			a.Origin = &Origin{Set: s.name, Params: p.desc, Chain: []string{"ApplicationSet " + s.name}}
			out = append(out, a)
		}
	}
	return out, x.problems
}

// note adds an info finding.
func (x *expander) note(pos graph.Position, format string, args ...any) {
	x.problems = append(x.problems, graph.Problem{RuleID: ruleRender, Info: true, Pos: pos, Message: fmt.Sprintf(format, args...),
		Detail: "rolloutlint expands the list, git (directories and files of this repository), matrix and merge generators " +
			"of an ApplicationSet offline; what needs a cluster, a network or a template function it does not know is not expanded."})
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

// generate evaluates one generator (a mapping with one generator key).
func (x *expander) generate(g *yaml.Node, depth int) ([]paramSet, bool) {
	if g == nil || g.Kind != yaml.MappingNode || len(g.Content) < 2 {
		return nil, false
	}
	for _, k := range []string{"selector", "template"} {
		if child(g, k) != nil {
			x.note(x.keyPos(g, k), "ApplicationSet %s: a generator's %s is not applied, so its Applications are not linted", x.set.name, k)
			return nil, false
		}
	}
	for i := 0; i+1 < len(g.Content); i += 2 {
		key, val := g.Content[i], g.Content[i+1]
		pos := graph.NodePos(x.set.file, key)
		switch key.Value {
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

// list is the list generator: each element is a parameter set.
func (x *expander) list(val *yaml.Node, pos graph.Position) ([]paramSet, bool) {
	elems := child(val, "elements")
	if ey := child(val, "elementsYaml"); ey != nil {
		var n yaml.Node
		if strings.Contains(ey.Value, "{{") || yaml.Unmarshal([]byte(ey.Value), &n) != nil || len(n.Content) == 0 {
			x.note(graph.NodePos(x.set.file, ey), "ApplicationSet %s: elementsYaml is not evaluated, so its Applications are not linted", x.set.name)
			return nil, false
		}
		elems = n.Content[0]
	}
	if elems == nil || elems.Kind != yaml.SequenceNode {
		return nil, true
	}
	var out []paramSet
	for i, e := range elems.Content {
		var m map[string]any
		if e.Decode(&m) != nil {
			continue
		}
		out = append(out, paramSet{vals: x.params(m), desc: fmt.Sprintf("list element %d", i)})
	}
	return out, true
}

// params turns a generator's values into template parameters: nested for
// Go templates, flattened with dots for fasttemplate.
func (x *expander) params(m map[string]any) map[string]any {
	if x.goTmpl {
		return m
	}
	out := map[string]any{}
	flatten("", m, out)
	return out
}

func flatten(prefix string, v any, out map[string]any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(key, c, out)
		}
	case []any:
		for i, c := range t {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), c, out)
		}
	default:
		out[prefix] = v
	}
}

// git is the git generator: directories or files of this repository (the
// tree linted; its repoURL is not compared, as for Applications, whose
// paths are looked for in the tree).
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
	var out []paramSet
	matched := false
	for _, base := range x.bases {
		var rels []string // directories, or files, below base
		if len(spec.Directories) > 0 {
			for d := range x.dirs {
				if d != base && Within(d, base) {
					rel, _ := filepath.Rel(base, d)
					rels = append(rels, filepath.ToSlash(rel))
				}
			}
		} else {
			for d, di := range x.dirs {
				if Within(d, base) {
					for _, f := range di.manifests {
						rel, _ := filepath.Rel(base, f)
						rels = append(rels, filepath.ToSlash(rel))
					}
				}
			}
		}
		sort.Strings(rels)
		for _, rel := range rels {
			include, exclude := false, false
			if len(spec.Directories) > 0 {
				for _, d := range spec.Directories {
					if globMatchPath(d.Path, rel) {
						if d.Exclude {
							exclude = true
						} else {
							include = true
						}
					}
				}
			} else {
				for _, f := range spec.Files {
					if globMatchPath(f.Path, rel) {
						if f.Exclude {
							exclude = true
						} else {
							include = true
						}
					}
				}
			}
			if !include || exclude {
				continue
			}
			matched = true
			if len(spec.Directories) > 0 {
				out = append(out, paramSet{vals: x.withValues(x.pathParams(rel, "", spec.PathParamPrefix), spec.Values), desc: "directory " + rel})
				continue
			}
			ps, err := x.fileParams(filepath.Join(base, filepath.FromSlash(rel)), rel, spec.PathParamPrefix)
			if err != nil {
				x.note(pos, "ApplicationSet %s: git file %s does not parse (%v), so its Applications are not linted", x.set.name, rel, err)
				continue
			}
			for _, p := range ps {
				p.vals = x.withValues(p.vals, spec.Values)
				out = append(out, p)
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

// pathParams are the path parameters of a directory (file "" ) or of a
// file of the git generator.
func (x *expander) pathParams(dir, file, prefix string) map[string]any {
	segs := strings.Split(dir, "/")
	base := path.Base(dir)
	if x.goTmpl {
		p := map[string]any{"path": dir, "basename": base, "basenameNormalized": normalize(base), "segments": toAny(segs)}
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
		out[fmt.Sprintf("%s[%d]", key, i)] = s
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
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
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var items []map[string]any
	switch t := v.(type) {
	case map[string]any:
		items = append(items, t)
	case []any:
		for _, it := range t {
			if m, ok := it.(map[string]any); ok {
				items = append(items, m)
			}
		}
	}
	var out []paramSet
	for i, m := range items {
		p := x.params(m)
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

// withValues adds a generator's values (templated with its parameters) as
// values.KEY.
func (x *expander) withValues(p map[string]any, values map[string]string) map[string]any {
	if len(values) == 0 {
		return p
	}
	vs := map[string]any{}
	for k, v := range values {
		if s, err := x.render(v, p); err == nil {
			vs[k] = s
		}
	}
	if x.goTmpl {
		p["values"] = vs
	} else {
		for k, v := range vs {
			p["values."+k] = v
		}
	}
	return p
}

// matrix is the cartesian product of two generators; the second may use
// the first's parameters.
func (x *expander) matrix(val *yaml.Node, pos graph.Position, depth int) ([]paramSet, bool) {
	gens := child(val, "generators")
	if gens == nil || gens.Kind != yaml.SequenceNode || len(gens.Content) != 2 {
		x.note(pos, "ApplicationSet %s: a matrix generator needs two generators, so it is not expanded", x.set.name)
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
			x.note(err.pos, "ApplicationSet %s (%s): %s, so that part of the matrix is not expanded", x.set.name, p1.desc, err.msg)
			continue
		}
		second, ok := x.generate(g2, depth+1)
		if !ok {
			return nil, false
		}
		for _, p2 := range second {
			out = append(out, paramSet{vals: mergeParams(p1.vals, p2.vals), desc: p1.desc + " × " + p2.desc})
		}
	}
	return out, true
}

// merge is the merge generator: the first generator's parameter sets,
// with those of the others whose mergeKeys values agree merged over them.
func (x *expander) merge(val *yaml.Node, pos graph.Position, depth int) ([]paramSet, bool) {
	var spec struct {
		MergeKeys []string `yaml:"mergeKeys"`
	}
	gens := child(val, "generators")
	if val.Decode(&spec) != nil || gens == nil || gens.Kind != yaml.SequenceNode || len(gens.Content) == 0 || len(spec.MergeKeys) == 0 {
		x.note(pos, "ApplicationSet %s: a merge generator needs generators and mergeKeys, so it is not expanded", x.set.name)
		return nil, false
	}
	base, ok := x.generate(gens.Content[0], depth+1)
	if !ok {
		return nil, false
	}
	key := func(p map[string]any) string {
		flat := map[string]any{}
		flatten("", p, flat)
		var parts []string
		for _, k := range spec.MergeKeys {
			parts = append(parts, fmt.Sprint(flat[k]))
		}
		return strings.Join(parts, "\x00")
	}
	for _, g := range gens.Content[1:] {
		more, ok := x.generate(g, depth+1)
		if !ok {
			return nil, false
		}
		for _, m := range more {
			k := key(m.vals)
			for i := range base {
				if key(base[i].vals) == k {
					base[i].vals = mergeParams(base[i].vals, m.vals)
				}
			}
		}
	}
	return base, true
}

// mergeParams is a over b: a copy of a with b's keys set (maps merged).
func mergeParams(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeParams(am, bm)
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
}

// substitute copies a node tree (keeping its lines, so positions stay
// those of the ApplicationSet's file) with the parameters put into every
// string that holds `{{`.
func (x *expander) substitute(n *yaml.Node, p map[string]any) (*yaml.Node, *templateError) {
	c := *n
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "{{") {
		s, err := x.render(n.Value, p)
		if err != nil {
			return nil, &templateError{pos: graph.NodePos(x.set.file, n), msg: err.Error()}
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
// `{{name}}` (a tag with no parameter stays as written), or a Go template.
func (x *expander) render(s string, p map[string]any) (string, error) {
	if !x.goTmpl {
		return fastTag.ReplaceAllStringFunc(s, func(tag string) string {
			name := strings.TrimSpace(tag[2 : len(tag)-2])
			if v, ok := p[name]; ok {
				return scalarString(v)
			}
			return tag
		}), nil
	}
	t, err := template.New("").Funcs(templateFuncs).Option(x.options...).Parse(s)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "function "); i >= 0 {
			msg = msg[i:]
		}
		return "", fmt.Errorf("template %q: %s", s, msg)
	}
	var b strings.Builder
	if err := t.Execute(&b, p); err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return "", fmt.Errorf("template %q: %s", s, msg)
	}
	return b.String(), nil
}

func scalarString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(t)
	}
	return fmt.Sprint(v)
}

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

// templateFuncs are the template functions rolloutlint evaluates: Argo
// CD's normalize and the Sprig string functions ApplicationSets use most.
// A template calling another is not expanded (an info finding).
var templateFuncs = template.FuncMap{
	"normalize":  normalize,
	"lower":      strings.ToLower,
	"upper":      strings.ToUpper,
	"trim":       strings.TrimSpace,
	"trimPrefix": func(prefix, s string) string { return strings.TrimPrefix(s, prefix) },
	"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
	"replace":    func(old, repl, s string) string { return strings.ReplaceAll(s, old, repl) },
	"contains":   func(sub, s string) bool { return strings.Contains(s, sub) },
	"hasPrefix":  func(prefix, s string) bool { return strings.HasPrefix(s, prefix) },
	"hasSuffix":  func(suffix, s string) bool { return strings.HasSuffix(s, suffix) },
	"quote":      func(v any) string { return strconv.Quote(scalarString(v)) },
	"squote":     func(v any) string { return "'" + scalarString(v) + "'" },
	"toString":   scalarString,
	"base":       path.Base,
	"dir":        path.Dir,
	"trunc": func(n int, s string) string {
		switch {
		case n >= 0 && len(s) > n:
			return s[:n]
		case n < 0 && len(s) > -n:
			return s[len(s)+n:]
		}
		return s
	},
	"default": func(d any, given ...any) any {
		if len(given) == 0 || given[0] == nil || given[0] == "" {
			return d
		}
		return given[0]
	},
	"join": func(sep string, v any) string {
		var parts []string
		if l, ok := v.([]any); ok {
			for _, x := range l {
				parts = append(parts, scalarString(x))
			}
		}
		return strings.Join(parts, sep)
	},
	"splitList": func(sep, s string) []any { return toAny(strings.Split(s, sep)) },
}

// globMatchPath matches a git generator path pattern against a path
// relative to the repository root: path.Match per segment, with `**`
// standing for any number of segments.
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

func globMatchPath(pattern, rel string) bool {
	return matchSegs(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(rel, "/"))
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
