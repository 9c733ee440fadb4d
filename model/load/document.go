package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// renderFirst is the detail of a template found where a manifest was expected.
const renderFirst = "Render it first (for example `helm template`) and lint the output."

// chunk is one YAML document of a file and the 1-based line it starts on.
type chunk struct {
	data []byte
	line int
}

// splitDocuments cuts a stream at document markers (`---` and `...` at column
// 0). Parsing documents separately lets a syntax error in one document leave
// the others linted. A marker cannot occur inside a block or quoted scalar at
// column 0, so the cut never splits a document.
func splitDocuments(data []byte) []chunk {
	var out []chunk
	start, startLine, line := 0, 1, 1
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		text := bytes.TrimRight(data[i:next], "\r\n")
		if isMarker(text, "---") || isMarker(text, "...") {
			if i > start {
				out = append(out, chunk{data: data[start:i], line: startLine})
			}
			if isMarker(text, "...") {
				start, startLine = next, line+1
			} else {
				// Keep the `---` line with its document: it may carry content
				// (`--- !tag` or `--- {a: 1}`).
				start, startLine = i, line
			}
		}
		i = next
		line++
	}
	if start < len(data) {
		out = append(out, chunk{data: data[start:], line: startLine})
	}
	return out
}

// bareMarker reports whether a chunk is a `---` line with nothing after it
// but spaces and line breaks: an empty document, which the full path reads
// as such (io.EOF or a null) after allocating a yaml.v3 parser for it. Files
// that end with `---`, as many generators write them, have one each.
func bareMarker(data []byte) bool {
	if !bytes.HasPrefix(data, []byte("---")) {
		return false
	}
	for _, b := range data[3:] {
		if b != ' ' && b != '\n' {
			return false
		}
	}
	return true
}

func isMarker(line []byte, m string) bool {
	if !bytes.HasPrefix(line, []byte(m)) {
		return false
	}
	rest := line[len(m):]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t'
}

var yamlLineErr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// pendingDoc is a document whose YAML aliases add nodes when expanded: it
// is converted only once the file's alias budget, spent in document order,
// allows it (see Inputs).
type pendingDoc struct {
	path string
	doc  int
	c    chunk
	body *yaml.Node
	own  int        // nodes as written
	uses []aliasUse // its aliases, in document order
}

// adds is the nodes the document's aliases add.
func (p *pendingDoc) adds() int {
	n := 0
	for _, u := range p.uses {
		n = satAdd(n, u.adds)
	}
	return n
}

// document loads one chunk. It returns true when the rest of the file should
// be skipped (the file is a template, not a manifest), and the document when
// its aliases must be budgeted before it is converted.
func (l *loader) document(in Input, doc int, c chunk) (bool, *pendingDoc) {
	stop, p := l.parse(in, doc, c)
	if p != nil && len(p.uses) == 0 {
		l.convert(p, p.own)
		p = nil
	}
	return stop, p
}

// parse reads one chunk up to the point of converting it to values.
func (l *loader) parse(in Input, doc int, c chunk) (bool, *pendingDoc) {
	if !l.full && l.fast(in.Path, doc, c) {
		l.fastDocs++
		l.k8sLike = true
		return false, nil
	}
	if bareMarker(c.data) {
		return false, nil // what yaml.v3 makes of it, without its parser (a file ending in `---`)
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(c.data))
	err := dec.Decode(&root)
	if errors.Is(err, io.EOF) {
		return false, nil // empty or comment-only
	}
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLineErr().FindStringSubmatch(err.Error()); m != nil {
			msg = m[2]
		}
		if !looksLikeManifest(c.data) {
			msg = unquoted(msg)
		}
		if tl := templateLine(in.Data); tl > 0 {
			l.explained(RuleNotManifest, lineStart(in.Path, tl), nil, "", renderFirst,
				"file is a Go/Helm template ({{ … }} at line %d), not a manifest", tl)
			return true, nil
		}
		l.problem(RuleSyntax, lineStart(in.Path, c.line+SyntaxErrorLine(c.data)-1), nil, "", "invalid YAML: %s", msg)
		return false, nil
	}
	shiftLines(&root, c.line-1)
	body := &root
	if body.Kind == yaml.DocumentNode {
		if len(body.Content) == 0 {
			return false, nil
		}
		body = body.Content[0]
	}
	if body.Kind == yaml.ScalarNode && body.ShortTag() == "!!null" {
		return false, nil
	}
	if n := templateNode(body); n != nil {
		l.explained(RuleNotManifest, graph.NodePos(in.Path, n), nil, "", renderFirst,
			"file is a Go/Helm template ({{ … }} at line %d), not a manifest", n.Line)
		return true, nil
	}
	bad, dups := keyProblems(body)
	if bad != nil {
		msg, detail := invalidKeyMessage(bad, looksLikeManifest(c.data))
		l.explained(RuleSyntax, graph.NodePos(in.Path, bad), nil, "", detail, "%s", msg)
		return false, nil // kubectl cannot convert the document to JSON: nothing of it is applied
	}
	if len(dups) > 0 {
		manifest := looksLikeManifest(c.data)
		for _, d := range dups {
			key := "a mapping key"
			if manifest {
				key = fmt.Sprintf("mapping key %q", d.key.Value)
			}
			l.problem(RuleSyntax, graph.NodePos(in.Path, d.key), nil, "",
				"invalid YAML: %s already defined at line %d", key, d.first)
		}
	}
	if body.Kind == yaml.MappingNode && (childNode(body, "apiVersion") != nil || childNode(body, "kind") != nil || childNode(body, "metadata") != nil) {
		l.k8sLike = true
	}
	if body.Kind != yaml.MappingNode {
		l.explained(RuleNoKind, graph.NodePos(in.Path, body), nil, "", "A Kubernetes object is a mapping with apiVersion and kind.",
			"document is %s, not a Kubernetes object", describeKind(body))
		return false, nil
	}
	var ex expansion
	own, uses := ex.measure(body)
	if ex.recursive != nil {
		l.explained(RuleLimit, graph.NodePos(in.Path, ex.recursive), nil, "", "Its expansion never ends; the document was not linted.",
			"a YAML alias refers to a node that contains it")
		return false, nil
	}
	return false, &pendingDoc{path: in.Path, doc: doc, c: c, body: body, own: own, uses: uses}
}

// convert turns a parsed document into values, visiting total nodes, and
// loads its objects.
func (l *loader) convert(p *pendingDoc, total int) {
	body := p.body
	conv := converter{budget: total}
	obj, ok := conv.value(body, 0).(map[string]any)
	if conv.budget < 0 && conv.tooDeep {
		l.explained(RuleLimit, graph.NodePos(p.path, body), nil, "", "It was not linted.",
			"document nests deeper than %d levels", maxDepth)
		return
	}
	if conv.budget < 0 {
		// expansion measured what the conversion visits; this is a backstop.
		l.explained(RuleLimit, graph.NodePos(p.path, body), nil, "", "It was not linted (an alias bomb?).",
			"document expands to more than %d nodes through YAML aliases", total)
		return
	}
	if !ok {
		return
	}
	l.object(p.path, p.doc, body, obj, graph.NodeSource{Data: p.c.data, LineOffset: p.c.line - 1, Item: -1})
}

// object turns one decoded mapping into a resource; `kind: List` objects are
// unpacked into their items. src says how to rebuild the node later: the
// node is released once the object is decoded (see graph.Resource.Node).
func (l *loader) object(file string, doc int, node *yaml.Node, obj map[string]any, src graph.NodeSource) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	top := src.Item < 0
	if apiVersion == "" || kind == "" {
		var missing []string
		if apiVersion == "" {
			missing = append(missing, "apiVersion")
		}
		if kind == "" {
			missing = append(missing, "kind")
		}
		l.explained(RuleNoKind, graph.NodePos(file, node), nil, "", "It is not a Kubernetes object and was skipped.",
			"document has no %s", strings.Join(missing, " or "))
		return
	}
	if top && strings.HasSuffix(kind, "List") && obj["items"] != nil {
		items, _ := obj["items"].([]any)
		itemsNode := childNode(node, "items")
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok || itemsNode == nil || i >= len(itemsNode.Content) {
				continue
			}
			item := src
			item.Item = i
			l.object(file, doc, derefNode(itemsNode.Content[i]), m, item)
		}
		return
	}
	res := l.newResource(file, doc, obj)
	res.SetNode(node, &src)
	defer res.ReleaseNode()
	group, version := res.Group, res.Version
	if res.Name == "" {
		md, _ := obj["metadata"].(map[string]any)
		if gen, _ := md["generateName"].(string); gen == "" && !toolInput(group, kind) {
			l.explained(RuleNoKind, res.Pos("metadata.name"), res, "metadata.name", "Other objects cannot reference it.",
				"%s has no metadata.name", kind)
		}
	}
	l.resources = append(l.resources, res)
	k := kinds.Lookup(group, kind)
	if k == nil {
		return
	}
	res.Known = true
	if !k.SupportsVersion(version) {
		l.explained(RuleAPIVersion, res.Pos("apiVersion"), res, "apiVersion",
			fmt.Sprintf("rolloutlint knows %s; the object was not checked.", strings.Join(versionsOf(group, k.Versions), ", ")),
			"%s %s is not a served version of %s", kind, apiVersion, kind)
		return
	}
	l.decode(res, k)
}

// newResource builds the resource of a decoded object with apiVersion and kind.
func (l *loader) newResource(file string, doc int, obj map[string]any) *graph.Resource {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, version := splitAPIVersion(apiVersion)
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	res := &graph.Resource{
		APIVersion: apiVersion, Group: group, Version: version, Kind: kind,
		Name: name, Namespace: ns, NamespaceExplicit: ns != "",
		File: file, Doc: doc,
	}
	res.SetObject(obj)
	if !kinds.IsNamespaced(group, kind) {
		res.Namespace = ""
	} else if res.Namespace == "" {
		res.Namespace = l.ns
	}
	return res
}

// fast loads a document without ever building its yaml node tree, when the
// fast decoder accepts it (it declines anything it cannot decode exactly as
// the full path would) and the object is clean: it has an apiVersion, a kind
// and a name, is not a List, has a served apiVersion, and neither the schema
// walk nor typed decoding would report anything. It returns false, having
// changed nothing, for every other document, which then takes the full path
// and gets its problems reported at their lines. A resource loaded here
// rebuilds its node from the source only when a finding needs a position.
func (l *loader) fast(file string, doc int, c chunk) bool {
	if kinds.TapeKind(kindLine(c.data)) && l.fastTape(file, doc, c) {
		return true
	}
	obj, ok := fastyaml.DecodeShared(c.data, math.MaxInt) // a document as written is bounded by the file size
	if !ok {
		return false
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" || strings.HasSuffix(kind, "List") && obj["items"] != nil {
		return false
	}
	res := l.newResource(file, doc, obj)
	if res.Name == "" {
		return false
	}
	src := &graph.NodeSource{Data: c.data, LineOffset: c.line - 1, Item: -1}
	if k := kinds.Lookup(res.Group, res.Kind); k != nil {
		if !k.SupportsVersion(res.Version) || !k.SchemaClean(obj) {
			return false
		}
		if k.New != nil {
			typed, direct, err := decodeDirect(k, obj, k.New())
			if err != nil {
				return false
			}
			res.Typed = typed
			// The typed object is what rules read; the generic one is
			// decoded again from the source when asked for, and its maps
			// serve the next documents' decodes when nothing kept them.
			res.SetObject(nil)
			src.Fast = true
			if _, vs := typed.(*kinds.VirtualServiceObject); vs {
				res.SetWeightsSet(graph.WeightsSetOf(obj))
			}
			if direct {
				fastyaml.Recycle(obj)
			}
		}
		res.Known = true
	}
	res.SetNode(nil, src)
	l.resources = append(l.resources, res)
	return true
}

// fastTape is fast for the typed kinds (Rollouts, Services,
// AnalysisTemplates, Istio objects), decoded from the document's events
// instead of its generic maps: it accepts a document only where fast would, with the
// same resource. It returns false, having changed nothing, for every other
// document, which fast then decodes the generic way.
func (l *loader) fastTape(file string, doc int, c chunk) bool {
	t := tapes.Get().(*fastyaml.Tape)
	defer func() {
		t.Reset()
		tapes.Put(t)
	}()
	if !fastyaml.DecodeTapeShared(c.data, math.MaxInt, t) {
		return false
	}
	apiVersion, kind := tapeString(t, 0, "apiVersion"), tapeString(t, 0, "kind")
	if apiVersion == "" || kind == "" || strings.HasSuffix(kind, "List") {
		return false
	}
	group, version := splitAPIVersion(apiVersion)
	k := kinds.Lookup(group, kind)
	if k == nil || k.New == nil || !k.SupportsVersion(version) {
		return false
	}
	md := t.Lookup(0, "metadata")
	if md < 0 {
		return false // no name
	}
	name, ns := tapeString(t, md, "name"), tapeString(t, md, "namespace")
	if name == "" {
		return false
	}
	typed := k.New()
	if !k.DecodeTape(typed, t) {
		return false
	}
	res := &graph.Resource{
		APIVersion: apiVersion, Group: group, Version: version, Kind: kind,
		Name: name, Namespace: ns, NamespaceExplicit: ns != "",
		File: file, Doc: doc, Typed: typed, Known: true,
	}
	if _, vs := typed.(*kinds.VirtualServiceObject); vs {
		res.SetWeightsSet(weightsSetOf(t))
	}
	if !kinds.IsNamespaced(group, kind) {
		res.Namespace = ""
	} else if res.Namespace == "" {
		res.Namespace = l.ns
	}
	res.SetNode(nil, &graph.NodeSource{Data: c.data, LineOffset: c.line - 1, Item: -1, Fast: true})
	l.resources = append(l.resources, res)
	return true
}

// weightsSetOf is graph.WeightsSetOf of the document on t.
func weightsSetOf(t *fastyaml.Tape) *graph.WeightsSet {
	spec := t.Lookup(0, "spec")
	of := func(kind graph.RouteKind) [][]bool {
		routes := -1
		if spec >= 0 {
			routes = t.Lookup(spec, string(kind))
		}
		if routes < 0 || t.Events[routes].Kind != fastyaml.EvSeq || t.Events[routes].End == routes+1 {
			return nil
		}
		var out [][]bool
		for r := routes + 1; r < t.Events[routes].End; r = t.Next(r) {
			var set []bool
			if entries := t.Lookup(r, "route"); entries >= 0 && t.Events[entries].Kind == fastyaml.EvSeq {
				for e := entries + 1; e < t.Events[entries].End; e = t.Next(e) {
					set = append(set, t.Lookup(e, "weight") >= 0)
				}
			}
			if set == nil {
				set = []bool{}
			}
			out = append(out, set)
		}
		return out
	}
	return &graph.WeightsSet{HTTP: of(graph.HTTP), TLS: of(graph.TLS), TCP: of(graph.TCP)}
}

// tapes recycles the tapes of fastTape.
var tapes = sync.Pool{New: func() any { return new(fastyaml.Tape) }}

// tapeString is the string value of key in the mapping at event i of t, or
// "" (as a missing key or a value of another type reads in fast).
func tapeString(t *fastyaml.Tape, i int, key string) string {
	j := t.Lookup(i, key)
	if j < 0 || t.Events[j].Kind != fastyaml.EvString {
		return ""
	}
	return t.Str(j)
}

// kindLine is the value of a document's first `kind:` line at column 0,
// plain and unquoted, or "": it says which decoder fast tries first, never
// what the document holds.
func kindLine(data []byte) string {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if rest, ok := bytes.CutPrefix(line, []byte("kind:")); ok {
			return string(bytes.TrimSpace(rest))
		}
	}
	return ""
}

func versionsOf(group string, versions []string) []string {
	out := make([]string, len(versions))
	for i, v := range versions {
		if group == "" {
			out[i] = v
		} else {
			out[i] = group + "/" + v
		}
	}
	return out
}

func splitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

func childNode(m *yaml.Node, key string) *yaml.Node {
	m = derefNode(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return derefNode(m.Content[i+1])
		}
	}
	return nil
}

func derefNode(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

// shiftLines makes a chunk's line numbers absolute in its file. Alias nodes are
// not followed: every node is reached once through Content.
func shiftLines(n *yaml.Node, by int) {
	if by == 0 {
		return
	}
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		cur.Line += by
		stack = append(stack, cur.Content...)
	}
}

// SyntaxErrorLine finds the 1-based line of a syntax error inside data: the
// fewest leading lines that already fail to parse. yaml.v3 reports the line where the
// enclosing construct starts (and 0-based for parser errors), which is seldom
// the line to fix.
func SyntaxErrorLine(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(k int) bool {
		var n yaml.Node
		err := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
		return err != nil
	}
	lo, hi := 1, len(lines)
	if !fails(hi) {
		return hi
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

type dupKey struct {
	key   *yaml.Node
	first int
}

// keyProblems walks a document's mappings once for the keys kubectl cannot
// take. invalid is the first key JSON cannot hold, and so kubectl and the API
// server cannot: a mapping or a list (an unquoted `{{args.name}}` is a flow
// mapping whose key is one), or a null; yaml.v3 reads them into nodes, and
// kubectl's YAML-to-JSON conversion fails on the document ("invalid map
// key"). Scalar keys of other types become strings, as they do there. When
// there is none, dups are the keys repeated within one mapping: yaml.v3
// rejects them when decoding into Go values but not into nodes; the API
// server rejects them under strict field validation.
func keyProblems(n *yaml.Node) (invalid *yaml.Node, dups []dupKey) {
	walkNodes(n, func(cur *yaml.Node) bool {
		if cur.Kind != yaml.MappingNode {
			return true
		}
		if argoPlaceholder(cur) != "" {
			invalid = cur
			return false
		}
		var seen map[string]int
		for i := 0; i+1 < len(cur.Content); i += 2 {
			k := cur.Content[i]
			if d := derefNode(k); d == nil || d.Kind != yaml.ScalarNode || isNullNode(d) {
				invalid = k
				return false
			}
			if k.Kind != yaml.ScalarNode || k.Value == "<<" {
				continue
			}
			if first, ok := seen[k.Value]; ok {
				dups = append(dups, dupKey{key: k, first: first})
			} else {
				if seen == nil {
					seen = map[string]int{}
				}
				seen[k.Value] = k.Line
			}
		}
		return true
	})
	if invalid != nil {
		dups = nil
	}
	return invalid, dups
}

// argoPlaceholderTag matches what Argo Rollouts substitutes between {{ and }}
// (utils/template: args.NAME, templates.NAME.podTemplateHash,
// experiment.availableAt), surrounding spaces trimmed as it trims them.
var argoPlaceholderTag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(args|templates|experiment)\.[A-Za-z0-9_.-]+$`)
})

// argoPlaceholder returns the tag of an unquoted Argo Rollouts placeholder,
// `{{args.name}}`, which YAML reads as a flow mapping holding one flow
// mapping as its key, or "" when m is not one.
func argoPlaceholder(m *yaml.Node) string {
	if m.Kind != yaml.MappingNode || m.Style&yaml.FlowStyle == 0 || len(m.Content) != 2 || !isNullNode(m.Content[1]) {
		return ""
	}
	inner := m.Content[0]
	if inner.Kind != yaml.MappingNode || inner.Style&yaml.FlowStyle == 0 || len(inner.Content) != 2 || !isNullNode(inner.Content[1]) {
		return ""
	}
	if k := inner.Content[0]; k.Kind == yaml.ScalarNode && k.Style == 0 && argoPlaceholderTag().MatchString(k.Value) {
		return k.Value
	}
	return ""
}

// isNullNode reports a null scalar: written as null or ~, or left out (the
// value of `{a}`).
func isNullNode(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// invalidKeyMessage says why the key keyProblems found makes the document
// unusable, and how to fix it. It quotes a placeholder's tag only in a
// manifest: the content of anything else is not echoed.
func invalidKeyMessage(n *yaml.Node, manifest bool) (msg, detail string) {
	const rejected = "kubectl and the API server reject the document (invalid map key): none of it reaches the cluster, and it was not linted."
	if tag := argoPlaceholder(n); tag != "" {
		if manifest {
			return fmt.Sprintf("invalid YAML for Kubernetes: unquoted {{%s}} is a mapping, not text", tag),
				fmt.Sprintf("%s Quote it: \"{{%s}}\".", rejected, tag)
		}
		return "invalid YAML for Kubernetes: an unquoted Argo Rollouts placeholder is a mapping, not text", rejected + " Quote it."
	}
	what := "a null"
	switch derefNode(n).Kind {
	case yaml.MappingNode:
		what = "a mapping"
	case yaml.SequenceNode:
		what = "a list"
	}
	return fmt.Sprintf("invalid YAML for Kubernetes: a mapping key is %s, not a string", what), rejected
}

// walkNodes visits n and its descendants in document order (aliases not
// followed) until fn returns false.
func walkNodes(n *yaml.Node, fn func(*yaml.Node) bool) {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !fn(cur) {
			return
		}
		for i := len(cur.Content) - 1; i >= 0; i-- {
			stack = append(stack, cur.Content[i])
		}
	}
}

// goTemplateAction matches Go template actions in a plain scalar, but not Argo
// Rollouts' own `{{args.name}}` placeholders.
var goTemplateAction = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{-?\s*(\.|\$|include\b|template\b|if\b|range\b|with\b|end\b|toYaml\b|default\b|quote\b|printf\b)`)
})

// templateNode finds the signature of a Go template that still parsed as
// YAML: `{{ .Values.x }}` is a flow mapping whose key is a flow mapping, and
// an action may sit inside a plain scalar.
func templateNode(n *yaml.Node) (found *yaml.Node) {
	walkNodes(n, func(cur *yaml.Node) bool {
		switch cur.Kind {
		case yaml.MappingNode:
			if cur.Style&yaml.FlowStyle != 0 && argoPlaceholder(cur) == "" {
				for i := 0; i < len(cur.Content); i += 2 {
					if cur.Content[i].Kind == yaml.MappingNode {
						found = cur
					}
				}
			}
		case yaml.ScalarNode:
			if cur.Style == 0 && goTemplateAction().MatchString(cur.Value) {
				found = cur
			}
		}
		return found == nil
	})
	return found
}

// templateLine returns the first line holding a Go template action outside a
// comment, or 0. Argo Rollouts' placeholders are not actions: an
// AnalysisTemplate's queries hold them, and a syntax error elsewhere in its
// file is a syntax error, not a template.
func templateLine(data []byte) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if bytes.HasPrefix(t, []byte("#")) {
			continue
		}
		if hasTemplateAction(t) {
			return i + 1
		}
	}
	return 0
}

// hasTemplateAction reports a {{ … }} on the line that is not an Argo
// Rollouts placeholder, or a {{ left open (an action spanning lines).
func hasTemplateAction(line []byte) bool {
	for {
		i := bytes.Index(line, []byte("{{"))
		if i < 0 {
			return false
		}
		line = line[i+2:]
		j := bytes.Index(line, []byte("}}"))
		if j < 0 || !argoPlaceholderTag().Match(bytes.TrimSpace(line[:j])) {
			return true
		}
		line = line[j+2:]
	}
}

// describeKind names what a document that is not a mapping is. It never
// quotes the value: a file that is not a manifest (a token, a key, a config
// file reached through a symlink) must not be echoed into reports.
func describeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("a plain value (%d characters on line %d)", utf8.RuneCountInString(n.Value), n.Line)
	}
	return "not a mapping"
}

// manifestKey finds an apiVersion or kind key at the start of a line, in
// YAML or JSON form.
var manifestKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t{,-]*["']?(apiVersion|kind)["']?[ \t]*:`) })

// looksLikeManifest reports whether a document's text names both apiVersion
// and kind as keys. Findings quote a document's content (a key, an anchor)
// only when it does: content of anything else is not echoed.
func looksLikeManifest(data []byte) bool {
	seen := 0
	for _, m := range manifestKey().FindAllSubmatch(data, -1) {
		if string(m[1]) == "apiVersion" {
			seen |= 1
		} else {
			seen |= 2
		}
		if seen == 3 {
			return true
		}
	}
	return false
}

// quotedText is a quoted piece of a parser message ('x', "x", `x`).
var quotedText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("'[^']*'|\"[^\"]*\"|`[^`]*`") })

// unquoted drops what a parser message quotes from the document (yaml.v3's
// "unknown anchor 'x' referenced").
func unquoted(msg string) string { return quotedText().ReplaceAllString(msg, "(…)") }

func lineStart(file string, line int) graph.Position {
	return graph.Position{File: file, Line: line, Column: 1, EndLine: line, EndColumn: 2}
}

// toolInput reports a kind that a command-line tool reads from a file, not one
// the API server stores: an IstioOperator for istioctl install (the in-cluster
// operator that stored them was removed in Istio 1.24), a kubeconfig (v1
// Config), a kind or k3d cluster, a kustomization under another file name,
// kubeadm's and the components' configuration files, an audit policy, a
// Skaffold config. They are written without metadata.name, and rightly so.
func toolInput(group, kind string) bool {
	switch {
	case group == "install.istio.io" && kind == "IstioOperator",
		group == "" && kind == "Config",
		group == "kind.x-k8s.io", group == "k3d.io", group == "ctlptl.dev",
		group == "kubeadm.k8s.io", group == "audit.k8s.io", group == "skaffold",
		strings.HasSuffix(group, ".config.k8s.io"):
		return true
	}
	return false
}
