package render

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// Mapper maps positions in a unit's rendered documents into the files the
// user wrote. It implements graph.Mapper.
type Mapper struct {
	r     *Renderer
	files map[string]*renderedFile
}

// Merge adds the rendered files of another unit's mapper, for a bundle of
// several units.
func (m *Mapper) Merge(o *Mapper) {
	for k, v := range o.files {
		m.files[k] = v
	}
}

// Copy returns a mapper of the same rendered files, which Merge may extend
// without changing m.
func (m *Mapper) Copy() *Mapper {
	c := &Mapper{r: m.r, files: make(map[string]*renderedFile, len(m.files))}
	c.Merge(m)
	return c
}

// generatedKind marks a generated document (an Application an
// ApplicationSet makes), whose fields map to the same field paths of a node
// of the user's file (the ApplicationSet's template).
const generatedKind units.Kind = "generated"

// AddDocument registers a generated document: a position in it maps to
// the same field of source (a node tree with lines of file), or the
// nearest field above it that source has.
func (m *Mapper) AddDocument(path string, data []byte, source *yaml.Node, file string) {
	rf := &renderedFile{kind: generatedKind, path: path, data: data, unitRoot: file, source: source}
	rf.docs = []*renderedDoc{{start: 1, end: bytes.Count(data, []byte("\n")) + 1, data: data}}
	m.files[path] = rf
}

// renderedFile is one rendered output: a kustomize build, or the output of
// one Helm template.
type renderedFile struct {
	kind     units.Kind
	path     string
	data     []byte
	unitRoot string // the kustomization or Chart.yaml: where nothing better is known
	app      *units.Application
	docs     []*renderedDoc
	// Helm: the template file ("" for a template of a packed dependency,
	// named by dependency), and where values came from.
	template   string
	dependency string
	values     []valuesSource
	// source is a generated document's node in unitRoot (generatedKind).
	source *yaml.Node
	// subchart is the values key of a file:// dependency rendered from
	// subchartDir, its own directory (a vendored one is under charts/).
	subchart, subchartDir string
}

// renderedDoc is one document of a rendered file.
type renderedDoc struct {
	start, end int // its lines in the rendered file (1-based, inclusive)
	data       []byte
	once       sync.Once
	node       *yaml.Node
	// Kustomize: the resource's source file, whether a generator made it,
	// and the kustomizations that transformed it (base first).
	origin    string
	generated bool
	chain     []string
	// Helm: the lines of the template's document it came from.
	segStart, segEnd int
}

// root parses the document, with lines of the rendered file.
func (d *renderedDoc) root() *yaml.Node {
	d.once.Do(func() {
		var n yaml.Node
		if yaml.Unmarshal(d.data, &n) != nil || len(n.Content) == 0 {
			return
		}
		stack := []*yaml.Node{&n}
		for len(stack) > 0 {
			c := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c.Line += d.start - 1
			stack = append(stack, c.Content...)
		}
		d.node = n.Content[0]
	})
	return d.node
}

// MapPos implements graph.Mapper.
func (m *Mapper) MapPos(p graph.Position) (graph.Position, []graph.Location) {
	rf := m.files[p.File]
	if rf == nil {
		return p, nil
	}
	var doc *renderedDoc
	for _, d := range rf.docs {
		if p.Line >= d.start && p.Line <= d.end {
			doc = d
			break
		}
	}
	if doc == nil {
		return rf.fallback(), nil
	}
	elems, key, val := pathAt(doc.root(), p)
	if rf.kind == generatedKind {
		k, v, _ := lookup(rf.source, elems)
		return nodePos(rf.unitRoot, k, v), nil
	}
	if rf.kind == units.Helm {
		return m.helmPos(rf, doc, p, elems, key, val)
	}
	return m.kustomizePos(rf, doc, p, elems, key, val)
}

func (rf *renderedFile) fallback() graph.Position {
	if rf.template != "" {
		return lineStart(rf.template, 1)
	}
	return lineStart(rf.unitRoot, 1)
}

// pathAt finds the field a position in a rendered document is at: the
// last node, in document order, that starts at or before it. It returns
// the field path, and the key and value nodes of that field (key nil for
// sequence items and the document itself).
func pathAt(root *yaml.Node, p graph.Position) (elems []graph.PathElem, key, val *yaml.Node) {
	if root == nil {
		return nil, nil, nil
	}
	before := func(n *yaml.Node) bool {
		return n.Line < p.Line || n.Line == p.Line && n.Column <= p.Column
	}
	val = root
	cur := root
	for {
		var next *yaml.Node
		var nextKey *yaml.Node
		var elem graph.PathElem
		switch cur.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if before(cur.Content[i]) {
					nextKey, next = cur.Content[i], cur.Content[i+1]
					elem = graph.PathElem{IsKey: true, Key: cur.Content[i].Value}
				}
			}
		case yaml.SequenceNode:
			for i, it := range cur.Content {
				if before(it) {
					next, nextKey = it, nil
					elem = graph.PathElem{Index: i}
				}
			}
		}
		if next == nil {
			return elems, key, val
		}
		elems = append(elems, elem)
		key, val, cur = nextKey, next, next
	}
}

// walkYAML calls fn for every key/value pair and sequence item (key nil).
func walkYAML(n *yaml.Node, fn func(k, v *yaml.Node)) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkYAML(c, fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			fn(n.Content[i], n.Content[i+1])
			walkYAML(n.Content[i+1], fn)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			fn(nil, c)
			walkYAML(c, fn)
		}
	}
}

// lookup walks a field path in a node tree and returns the key and value
// of the deepest field found and how many elements matched.
func lookup(root *yaml.Node, elems []graph.PathElem) (key, val *yaml.Node, depth int) {
	cur := root
	val = root
	for i, e := range elems {
		var k, v *yaml.Node
		switch {
		case cur == nil:
		case e.IsKey && cur.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(cur.Content); j += 2 {
				if cur.Content[j].Value == e.Key {
					k, v = cur.Content[j], cur.Content[j+1]
				}
			}
		case !e.IsKey && cur.Kind == yaml.SequenceNode && e.Index >= 0 && e.Index < len(cur.Content):
			v = cur.Content[e.Index]
		}
		if v == nil {
			return key, val, i
		}
		key, val, cur = k, v, v
	}
	return key, val, len(elems)
}

// nodePos is the position of a field: its scalar value, else its key.
func nodePos(file string, key, val *yaml.Node) graph.Position {
	if val != nil && val.Kind == yaml.ScalarNode {
		return graph.NodePos(file, val)
	}
	if key != nil {
		return graph.NodePos(file, key)
	}
	return graph.NodePos(file, val)
}

// sameScalar reports whether two nodes are scalars with the same value.
func sameScalar(a, b *yaml.Node) bool {
	return a != nil && b != nil && a.Kind == yaml.ScalarNode && b.Kind == yaml.ScalarNode && a.Value == b.Value
}

// shifted moves a position inside the rendered scalar rv to the same place
// in the source scalar sv (they hold the same text, so a finding inside
// it, a PromQL column say, keeps its column).
func shifted(p graph.Position, file string, rv, sv *yaml.Node) graph.Position {
	base := graph.NodePos(file, sv)
	if rv == nil || sv == nil || rv.Style != sv.Style || p.Line < rv.Line {
		return base
	}
	width := p.EndColumn - p.Column
	if p.Line == rv.Line {
		if p.Column < rv.Column {
			return base
		}
		col := sv.Column + (p.Column - rv.Column)
		return graph.Position{File: file, Line: sv.Line, Column: col, EndLine: sv.Line, EndColumn: col + max(width, 1)}
	}
	line := sv.Line + (p.Line - rv.Line)
	col := p.Column + (sv.Column - rv.Column)
	if col < 1 {
		col = 1
	}
	return graph.Position{File: file, Line: line, Column: col, EndLine: line, EndColumn: col + max(width, 1)}
}

// pathString renders field path elements as rolloutlint writes paths.
func pathString(elems []graph.PathElem) string {
	var b strings.Builder
	for _, e := range elems {
		if e.IsKey {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.Key)
		} else {
			fmt.Fprintf(&b, "[%d]", e.Index)
		}
	}
	return b.String()
}

// splitHelmDocs cuts a template's output into documents and pairs them with
// the template's own documents when their counts agree (a template whose
// `range` or `if` makes more or fewer documents maps each to the whole
// template).
func (rf *renderedFile) splitHelmDocs(r *Renderer) {
	lines := bytes.Split(rf.data, []byte("\n"))
	start := 1
	flush := func(end int) {
		if end < start {
			return
		}
		data := bytes.Join(lines[start-1:end], []byte("\n"))
		if len(bytes.TrimSpace(stripComments(data))) > 0 {
			rf.docs = append(rf.docs, &renderedDoc{start: start, end: end, data: data})
		}
	}
	for i, l := range lines {
		if isDocMarker(l) {
			flush(i)
			start = i + 2
		}
	}
	flush(len(lines))
	var segs [][2]int
	var tl []string
	if rf.template != "" {
		if src := r.source(rf.template); src != nil {
			tl = src.lines
		}
	}
	s := 1
	addSeg := func(end int) {
		if end >= s && hasContent(tl[s-1:end]) {
			segs = append(segs, [2]int{s, end})
		}
	}
	for i, l := range tl {
		if isDocMarker([]byte(l)) {
			addSeg(i)
			s = i + 2
		}
	}
	if tl != nil {
		addSeg(len(tl))
	}
	for i, d := range rf.docs {
		if len(segs) == len(rf.docs) {
			d.segStart, d.segEnd = segs[i][0], segs[i][1]
		} else {
			d.segStart, d.segEnd = 1, len(tl)
		}
	}
}

func isDocMarker(l []byte) bool {
	return bytes.HasPrefix(l, []byte("---")) && (len(l) == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r')
}

func stripComments(data []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// hasContent reports whether template lines hold more than comments,
// blank lines and template actions alone.
func hasContent(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "{{") && strings.HasSuffix(t, "}}") {
			continue
		}
		return true
	}
	return false
}

// sortedLocations orders related locations by file and line.
func sortedLocations(ls []graph.Location) []graph.Location {
	sort.SliceStable(ls, func(i, j int) bool { return graph.LessPos(ls[i].Pos, ls[j].Pos) })
	return ls
}

// SourcesOf lists the user files a rendered resource was made from: for
// Kustomize its source file and the kustomizations that transformed it,
// for Helm its template, the chart's helpers, Chart.yaml and the values
// files and Application that gave it values. It is nil for a resource
// this mapper did not render.
func (m *Mapper) SourcesOf(res *graph.Resource) []string {
	rf := m.files[res.File]
	if rf == nil {
		return nil
	}
	n := res.Node()
	if n == nil {
		return nil
	}
	var out []string
	if rf.app != nil {
		out = append(out, rf.app.File)
	}
	if rf.kind == generatedKind {
		return append(out, rf.unitRoot)
	}
	if rf.kind == units.Helm {
		out = append(out, rf.unitRoot)
		if rf.template != "" {
			out = append(out, rf.template)
		}
		for _, v := range rf.values {
			out = append(out, v.file)
		}
		return out
	}
	for _, d := range rf.docs {
		if n.Line >= d.start && n.Line <= d.end {
			out = append(out, d.origin)
			out = append(out, d.chain...)
		}
	}
	return append(out, rf.unitRoot)
}
