package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// kustomize renders a kustomization root with krusty, the library behind
// `kustomize build` and `kubectl kustomize`. Its root kustomization gets
// buildMetadata [originAnnotations, transformerAnnotations] (in memory, the
// file is not changed) so that every resource says which file it came from
// and which kustomizations transformed it; an Application's
// source.kustomize options are applied to the root the way Argo CD's
// `kustomize edit` does.
func (r *Renderer) kustomize(u *units.Unit, res *Result) {
	absDir, err := filepath.Abs(u.Dir)
	if err != nil {
		res.fail(lineStart(u.Dir, 1), "kustomize: %v", err)
		return
	}
	rootFile := kustomizationFile(u.Dir)
	// Refuse what would fetch or execute before krusty sees it: it would
	// clone remote bases with git and fetch URLs over HTTP.
	if refused := r.refuseRemote(u.Dir, res); refused {
		res.Files = appendFile(res.Files, rootFile)
		return
	}
	fs := &trackingFS{FileSystem: filesys.MakeFsOnDisk(), root: filepath.Join(absDir, filepath.Base(rootFile)),
		user: func(p string) string { return userPath(u.Dir, absDir, p) }}
	var userMeta []string
	fs.edit = func(data []byte) ([]byte, error) {
		var edited []byte
		edited, userMeta, err = editRootKustomization(data, u.App)
		return edited, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionNone // the order written, deterministic
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig() // builtins only: no exec, container or Go plugins
	var m resmap.ResMap
	err = withKrustyStderr(func() (err error) {
		m, err = krusty.MakeKustomizer(opts).Run(fs, absDir)
		return err
	})
	for _, f := range fs.readFiles() {
		res.Files = appendFile(res.Files, userPath(u.Dir, absDir, f))
	}
	res.Files = appendFile(res.Files, rootFile)
	res.Problems = append(res.Problems, r.deprecationNotes(res.Files)...)
	if refused := fs.refusedProblems(); len(refused) > 0 {
		// What kustomize said is only that it could not read the file.
		for _, p := range refused {
			p.Detail += " " + u.Dir + " was not built."
			res.Problems = append(res.Problems, p)
		}
		return
	}
	if err != nil {
		pos, msg, detail := r.kustomizeError(u.Dir, absDir, rootFile, res.Files, err)
		res.failDetail(pos, detail, "kustomize build of %s failed: %s", u.Dir, msg)
		return
	}
	keepOrigin := containsString(userMeta, types.OriginAnnotations)
	keepTransformations := containsString(userMeta, types.TransformerAnnotations)
	rf := &renderedFile{kind: units.Kustomize, path: renderedName(u, "kustomize"), unitRoot: rootFile, app: u.App}
	var buf bytes.Buffer
	line := 1
	for i, rs := range m.Resources() {
		doc := &renderedDoc{}
		if o, err := rs.GetOrigin(); err == nil && o != nil && o.Repo == "" {
			if o.Path != "" {
				doc.origin = userPath(u.Dir, absDir, o.Path)
			} else if o.ConfiguredIn != "" {
				doc.origin = userPath(u.Dir, absDir, o.ConfiguredIn)
				doc.generated = true
			}
		}
		if ts, err := rs.GetTransformations(); err == nil {
			for _, t := range ts {
				if t != nil && t.ConfiguredIn != "" {
					doc.chain = appendFile(doc.chain, userPath(u.Dir, absDir, t.ConfiguredIn))
				}
			}
		}
		// The annotations were asked for by rolloutlint, not the user:
		// the object is linted as kustomize builds it without them.
		if !keepOrigin {
			_ = rs.SetOrigin(nil)
		}
		if !keepTransformations {
			_ = rs.ClearTransformations()
		}
		data, err := rs.AsYAML()
		if err != nil {
			res.fail(lineStart(rootFile, 1), "kustomize build of %s: resource %d: %v", u.Dir, i, err)
			continue
		}
		buf.WriteString("---\n")
		line++
		doc.start = line
		buf.Write(data)
		line += bytes.Count(data, []byte("\n"))
		doc.end = line - 1
		doc.data = data
		rf.docs = append(rf.docs, doc)
	}
	res.Problems = append(res.Problems, fs.droppedProblems()...)
	rf.data = buf.Bytes()
	res.Mapper.files[rf.path] = rf
	res.Inputs = append(res.Inputs, load.Input{Path: rf.path, Data: rf.data, Role: load.RoleRendered})
}

// renderedName is the name of a unit's rendered output. It never reaches
// a finding (the Mapper replaces it) and names no file on disk.
func renderedName(u *units.Unit, tool string) string {
	name := filepath.ToSlash(u.Dir) + " (" + tool + " build"
	if u.App != nil {
		name += " for Application " + u.App.Name
	}
	return name + ")"
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// kustomizationFile is the kustomization file of a directory.
func kustomizationFile(dir string) string {
	for _, n := range units.KustomizationNames {
		p := filepath.Join(dir, n)
		if st, err := osStat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return filepath.Join(dir, units.KustomizationNames[0])
}

// trackingFS is the disk, with the root kustomization edited in memory
// and a record of every file kustomize read. It refuses to give kustomize a
// named pipe, socket or device, or a file whose YAML aliases the loader
// would not expand (kustomize expands them all: a small alias bomb took
// minutes and gigabytes, and an alias to a node containing it overflowed
// the stack), and notes the resource files
// whose later documents kustomize silently drops (see droppedDocuments).
type trackingFS struct {
	filesys.FileSystem
	root    string
	edit    func([]byte) ([]byte, error)
	user    func(string) string // a path read, as the user names it
	mu      sync.Mutex
	read    []string
	refused []graph.Problem // files not given to kustomize
	dropped []graph.Problem
	seen    map[string]bool
}

// ReadFile reads a file, recording it, and edits the root kustomization.
func (f *trackingFS) ReadFile(path string) ([]byte, error) {
	user := path
	if f.user != nil {
		user = f.user(path)
	}
	refuse := func(p graph.Problem) ([]byte, error) {
		f.mu.Lock()
		f.read = append(f.read, path)
		f.refused = append(f.refused, p)
		f.mu.Unlock()
		return nil, fmt.Errorf("%s: %s", user, p.Message)
	}
	// A named pipe a kustomization names would block the build until
	// something writes to it (a lint hung); a device is not a manifest.
	if st, err := os.Stat(path); err == nil {
		if why := load.SpecialFile(st.Mode()); why != "" {
			return refuse(graph.Problem{RuleID: RuleRender, Pos: lineStart(user, 1), Message: "a kustomization names this " + why + ", which kustomize would read",
				Detail: "A named pipe blocks its reader until something writes to it (kustomize build, and Argo CD, would hang), and a socket or device is not a manifest."})
		}
	}
	data, err := f.FileSystem.ReadFile(path)
	if err != nil {
		return data, err
	}
	if p := load.AliasProblem(user, data, 0); p != nil {
		p.Detail += " kustomize expands every alias."
		return refuse(*p)
	}
	f.mu.Lock()
	f.read = append(f.read, path)
	first := !f.seen[path]
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	f.seen[path] = true
	f.mu.Unlock()
	isKust := containsString(units.KustomizationNames, filepath.Base(path))
	if first && !isKust {
		if line, n, why := droppedDocuments(data); n > 0 {
			msg, detail := droppedMessage(n, why)
			f.mu.Lock()
			f.dropped = append(f.dropped, graph.Problem{RuleID: RuleRender, Pos: lineStart(user, line), Message: msg, Detail: detail})
			f.mu.Unlock()
		}
	}
	if filepath.Clean(path) == f.root && f.edit != nil {
		if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
			// kustomize reads a UTF-16 kustomization as its UTF-8 text;
			// the edit appends and writes UTF-8.
			if text, ok := load.Text(data); ok {
				data = text
			}
		}
		return f.edit(data)
	}
	return data, nil
}

// refusedProblems say why files were not given to kustomize: a special
// file, or YAML aliases the loader would not expand.
func (f *trackingFS) refusedProblems() []graph.Problem {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]graph.Problem(nil), f.refused...)
}

// droppedProblems are the resource files whose later documents kustomize
// does not build.
func (f *trackingFS) droppedProblems() []graph.Problem {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]graph.Problem(nil), f.dropped...)
}

func (f *trackingFS) readFiles() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.read...)
}

// editRootKustomization asks for origin and transformer annotations and
// applies an Application's source.kustomize options as Argo CD does with
// `kustomize edit` (namePrefix, nameSuffix, namespace replaced; labels,
// annotations, images, replicas, components and patches added). It
// returns the buildMetadata the user asked for.
func editRootKustomization(data []byte, app *units.Application) ([]byte, []string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return data, nil, nil // krusty reports it
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return data, nil, nil
	}
	top := doc.Content[0]
	var userMeta []string
	if n := mapValue(top, "buildMetadata"); n != nil {
		_ = n.Decode(&userMeta)
	}
	var ks *units.KustomizeSource
	if app != nil {
		ks = app.Source.Kustomize
	}
	if ks == nil {
		if mapValue(top, "buildMetadata") == nil {
			// Append a line: the rest of the file keeps its line numbers.
			out := append(bytes.TrimRight(data, "\n"), "\nbuildMetadata: [originAnnotations, transformerAnnotations]\n"...)
			return out, userMeta, nil
		}
	}
	meta := userMeta
	for _, m := range []string{types.OriginAnnotations, types.TransformerAnnotations} {
		if !containsString(meta, m) {
			meta = append(meta, m)
		}
	}
	setValue(top, "buildMetadata", meta)
	if ks != nil {
		if ks.NamePrefix != "" {
			setValue(top, "namePrefix", ks.NamePrefix)
		}
		if ks.NameSuffix != "" {
			setValue(top, "nameSuffix", ks.NameSuffix)
		}
		if ks.Namespace != "" {
			setValue(top, "namespace", ks.Namespace)
		}
		mergeStringMap(top, "commonLabels", ks.CommonLabels)
		mergeStringMap(top, "commonAnnotations", ks.CommonAnnotations)
		for _, img := range ks.Images {
			appendValue(top, "images", parseImage(img))
		}
		for _, rp := range ks.Replicas {
			appendValue(top, "replicas", map[string]any{"name": rp.Name, "count": rp.Count})
		}
		for _, c := range ks.Components {
			appendValue(top, "components", c)
		}
		for _, p := range ks.Patches {
			appendValue(top, "patches", p)
		}
	}
	out, err := yaml.Marshal(top)
	if err != nil {
		return data, userMeta, fmt.Errorf("applying the Application's kustomize options: %w", err)
	}
	return out, userMeta, nil
}

// parseImage reads `kustomize edit set image` syntax: [name=]newName[:tag|@digest].
func parseImage(s string) map[string]any {
	out := map[string]any{}
	name, rest, ok := strings.Cut(s, "=")
	if !ok {
		rest = s
	}
	var newName, tag, digest string
	if i := strings.Index(rest, "@"); i >= 0 {
		newName, digest = rest[:i], rest[i+1:]
	} else if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		newName, tag = rest[:i], rest[i+1:]
	} else {
		newName = rest
	}
	if !ok {
		name = newName
	}
	out["name"] = name
	if newName != name {
		out["newName"] = newName
	}
	if tag != "" {
		out["newTag"] = tag
	}
	if digest != "" {
		out["digest"] = digest
	}
	return out
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func setValue(m *yaml.Node, key string, v any) {
	var n yaml.Node
	_ = n.Encode(v)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = &n
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &n)
}

func appendValue(m *yaml.Node, key string, v any) {
	var n yaml.Node
	_ = n.Encode(v)
	if seq := mapValue(m, key); seq != nil && seq.Kind == yaml.SequenceNode {
		seq.Content = append(seq.Content, &n)
		return
	}
	setValue(m, key, []any{v})
}

func mergeStringMap(m *yaml.Node, key string, add map[string]string) {
	if len(add) == 0 {
		return
	}
	cur := map[string]string{}
	if n := mapValue(m, key); n != nil {
		_ = n.Decode(&cur)
	}
	for k, v := range add {
		cur[k] = v
	}
	setValue(m, key, cur)
}

// refuseRemote walks the kustomizations the root uses and reports every
// remote resource, base or component, and every helmCharts entry (which
// kustomize renders by running the helm binary). It returns true when
// the unit must not be built.
func (r *Renderer) refuseRemote(dir string, res *Result) bool {
	refused := false
	seen := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		if seen[dir] {
			return
		}
		seen[dir] = true
		file := kustomizationFile(dir)
		src := r.source(file)
		if src == nil || len(src.docs) == 0 {
			return
		}
		top := src.docs[0]
		for _, key := range []string{"resources", "bases", "components"} {
			seq := mapValue(top, key)
			if seq == nil || seq.Kind != yaml.SequenceNode {
				continue
			}
			for _, item := range seq.Content {
				if item.Kind != yaml.ScalarNode {
					continue
				}
				if units.IsRemote(item.Value) {
					res.failDetail(graph.NodePos(file, item), "rolloutlint renders only what is in the repository and fetches nothing: vendor it, or lint `kustomize build` output with `rolloutlint lint -`.",
						"%s %q is remote", strings.TrimSuffix(key, "s"), item.Value)
					refused = true
					continue
				}
				sub := filepath.Join(dir, filepath.FromSlash(item.Value))
				if st, err := osStat(sub); err == nil && st.IsDir() {
					visit(sub)
				}
			}
		}
		if hc := mapValue(top, "helmCharts"); hc != nil {
			res.failDetail(graph.NodePos(file, hc), "Render the chart as its own unit (a chart directory or an Argo CD Application), or lint `kustomize build --enable-helm` output with `rolloutlint lint -`.",
				"helmCharts are rendered by running the helm binary, which rolloutlint does not do")
			refused = true
		}
	}
	visit(dir)
	return refused
}

var (
	inFileRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`in File: (\S+)`) })
	// yamlErrRe is the YAML parser's part of a kustomize error.
	yamlErrRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`MalformedYAMLError: .*? in File: `) })
	quotedRe       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("'[^']*'|\"[^\"]*\"|`[^`]*`") })
	badSeparatorRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`invalid document separator: [^'\n]*`) })
	patchTarget    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:target for patch|no matches for Id) ([A-Za-z0-9]+)\.[^/ ]*/([^ .\[]+)`)
	})
	absPathsLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(/[^\s':]+)+`) })
	pluginRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`unable to load external plugin '([^']+)'`) })
	outsideRe    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`security; file '([^']+)' is not in or below '([^']+)'`)
	})
	invalidKustRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`invalid Kustomization: json: cannot unmarshal (\w+) into (?:Go struct field )?Kustomization\.([\w.]+) of type (\S+)`)
	})
)

// outsideDetail explains kustomize's load restriction.
const outsideDetail = "kustomize reads a kustomization's files only from its own directory and below (a base " +
	"directory, with its own kustomization, may be anywhere). Move the file, or give its directory a " +
	"kustomization and list the directory. Argo CD builds with the same restriction unless its " +
	"kustomize.buildOptions say --load-restrictor LoadRestrictionsNone."

// kustomizeError finds the user's file and line a kustomize error is
// about: the file and line of a YAML error, else the kustomization line
// that names what failed (a missing file, a patch target), else the root
// kustomization. The message keeps kustomize's reason with absolute paths
// made relative.
func (r *Renderer) kustomizeError(unitDir, absDir, rootFile string, files []string, err error) (graph.Position, string, string) {
	msg := err.Error()
	wd, _ := os.Getwd()
	msg = absPathsLike().ReplaceAllStringFunc(msg, func(p string) string {
		if wd != "" && strings.HasPrefix(p, wd+string(filepath.Separator)) {
			return filepath.ToSlash(userPath(unitDir, absDir, p)) // as the user named the tree
		}
		return p
	})
	var kusts []string
	for _, f := range files {
		if containsString(units.KustomizationNames, filepath.Base(f)) {
			kusts = append(kusts, f)
		}
	}
	sort.SliceStable(kusts, func(i, j int) bool { return len(kusts[i]) > len(kusts[j]) })
	// kyaml quotes the line of a bad separator: it may be anything, a
	// token included, and says nothing the position does not.
	msg = badSeparatorRe().ReplaceAllString(msg, "invalid document separator (a --- line followed by text that is not a comment)")
	if m := inFileRe().FindStringSubmatch(msg); m != nil {
		for _, f := range files {
			if strings.HasSuffix(filepath.ToSlash(f), "/"+m[1]) || filepath.Base(f) == m[1] {
				line := 1
				if lm := yamlLineNo().FindStringSubmatch(msg); lm != nil {
					line, _ = strconv.Atoi(lm[1])
				}
				if !allManifests(f) {
					// As the loader does: what the YAML parser quotes
					// (unknown anchor '…') of a file that is not a manifest
					// (a token, a key) is not echoed into reports.
					msg = yamlErrRe().ReplaceAllStringFunc(msg, func(e string) string { return quotedRe().ReplaceAllString(e, "(…)") })
				}
				return lineStart(f, line), msg, ""
			}
		}
	}
	// A kustomization field of the wrong type: at the field, in the root
	// kustomization or another one the build read.
	if m := invalidKustRe().FindStringSubmatch(msg); m != nil {
		if pos, path, ok := r.kustomizationField(append([]string{rootFile}, kusts...), m[2], m[1]); ok {
			field := kustFieldPath(path)
			detail := ""
			if strings.HasPrefix(path, "patches.") && !strings.Contains(path[len("patches."):], ".") && m[1] == "string" {
				detail = "A patches entry is a mapping: `- path: rollout.yaml`, or `- patch: |-` with the patch inline, " +
					"each with an optional target. A bare file name was a patchesStrategicMerge entry."
			}
			want := m[3]
			if strings.HasPrefix(want, "types.") {
				want = "a mapping (" + want + ")"
			}
			return pos, fmt.Sprintf("%s is a %s, and kustomize expects %s there", field, m[1], want), detail
		}
	}
	detail := ""
	var tokens []string
	if m := outsideRe().FindStringSubmatch(msg); m != nil {
		// The entry naming the file is written relative to its
		// kustomization: search it by the file's name.
		tokens = append(tokens, filepath.Base(m[1]))
		msg = fmt.Sprintf("%s is not in or below %s (kustomize's load restriction)", m[1], m[2])
		detail = outsideDetail
	}
	if m := patchTarget().FindStringSubmatch(msg); m != nil {
		tokens = append(tokens, m[2])
	}
	if detail == "" {
		for _, q := range quoted(err.Error()) {
			tokens = append(tokens, filepath.Base(q), q)
		}
	}
	if m := pluginRe().FindStringSubmatch(msg); m != nil {
		tokens = append(tokens, "kind: "+m[1])
		msg = strings.Replace(msg, m[0], m[0]+" (rolloutlint runs no exec, container or Go plugin)", 1)
	}
	// Kustomizations first, then the other files read (patches, plugin configs).
	searched := append([]string(nil), kusts...)
	for _, f := range files {
		if !containsString(kusts, f) {
			searched = append(searched, f)
		}
	}
	for i := len(tokens) - 1; i >= 0; i-- {
		tok := tokens[i]
		if tok == "" || tok == "." {
			continue
		}
		for _, k := range searched {
			if src := r.source(k); src != nil {
				for n, l := range src.lines {
					if strings.HasPrefix(strings.TrimSpace(l), "#") {
						continue
					}
					if col := wordIndex(l, tok); col >= 0 {
						return graph.Position{File: k, Line: n + 1, Column: col + 1, EndLine: n + 1, EndColumn: col + 1 + len(tok)}, msg, detail
					}
				}
			}
		}
	}
	return lineStart(rootFile, 1), msg, detail
}

// allManifests reports whether every document of a file names apiVersion
// and kind (false when it cannot be read).
func allManifests(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	docs, ok := load.Documents(data)
	if !ok {
		return false
	}
	for _, d := range docs {
		if !d.Manifest {
			return false
		}
	}
	return true
}

// quoted lists the single-quoted names of a kustomize error. Its messages
// nest quotes (err='accumulating resources from '../x.yaml': ...'), so a
// pairwise match would take the text between two names for one: every
// text between two quotes that holds no space is a candidate.
func quoted(msg string) []string {
	parts := strings.Split(msg, "'")
	var out []string
	for i := 1; i < len(parts)-1; i++ {
		if p := parts[i]; p != "" && !strings.ContainsAny(p, " \t\n") {
			out = append(out, p)
		}
	}
	return out
}

// kustomizationField is the position of a field of a kustomization (a path
// such as patches.0, as kustomize's decoding error names it) in the first
// of the files that has it, with the path found. Go versions differ in
// naming the item of a list (patches.0, or patches): a path ending at a
// list is completed with its first item that is a scalar where a scalar
// (got: string, number, bool) was not expected.
func (r *Renderer) kustomizationField(files []string, path, got string) (graph.Position, string, bool) {
	for _, f := range files {
		src := r.source(f)
		if src == nil || len(src.docs) == 0 {
			continue
		}
		cur := src.docs[0]
		for _, e := range strings.Split(path, ".") {
			var next *yaml.Node
			if i, err := strconv.Atoi(e); err == nil {
				if cur.Kind == yaml.SequenceNode && i >= 0 && i < len(cur.Content) {
					next = cur.Content[i]
				}
			} else {
				next = mapValue(cur, e)
			}
			if next == nil {
				cur = nil
				break
			}
			cur = next
		}
		if cur == nil {
			continue
		}
		if cur.Kind == yaml.SequenceNode && (got == "string" || got == "number" || got == "bool") {
			for i, item := range cur.Content {
				if item.Kind == yaml.ScalarNode {
					return graph.NodePos(f, item), path + "." + strconv.Itoa(i), true
				}
			}
		}
		return graph.NodePos(f, cur), path, true
	}
	return graph.Position{}, "", false
}

// kustFieldPath writes kustomize's field path (patches.0) as rolloutlint
// writes paths (patches[0]).
func kustFieldPath(p string) string {
	var b strings.Builder
	for i, e := range strings.Split(p, ".") {
		if _, err := strconv.Atoi(e); err == nil {
			b.WriteString("[" + e + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e)
	}
	return b.String()
}

// wordIndex is the index of tok in line where it stands alone (not inside a
// longer name), or -1.
func wordIndex(line, tok string) int {
	isName := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
	}
	for off := 0; ; {
		i := strings.Index(line[off:], tok)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(tok)
		if (i == 0 || !isName(line[i-1]) || !isName(tok[0])) && (end == len(line) || !isName(line[end]) || !isName(tok[len(tok)-1])) {
			return i
		}
		off = i + 1
	}
}
