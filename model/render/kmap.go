package render

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// kustomizePos maps a position in a kustomize build to the user's files:
//
//   - the field in the resource's source file when the value there is the
//     rendered one;
//   - else the patch (strategic merge or JSON 6902) or the kustomization
//     field (namespace, namePrefix/nameSuffix, labels, annotations, images,
//     replicas) of the last kustomization on the resource's way that sets
//     it, with the source as a related location;
//   - else the nearest field of the object that its source file has.
func (m *Mapper) kustomizePos(rf *renderedFile, doc *renderedDoc, p graph.Position, elems []graph.PathElem, key, val *yaml.Node) (graph.Position, []graph.Location) {
	src := m.r.source(doc.origin)
	if src == nil || doc.generated {
		// A generated resource (configMapGenerator, secretGenerator):
		// point at the generator in the kustomization that configured it.
		file := doc.origin
		if file == "" {
			file = rf.unitRoot
		}
		return m.generatorPos(file, doc), nil
	}
	root := doc.root()
	kind := scalarAt(root, "kind")
	name := scalarAt(root, "metadata", "name")
	srcDoc := sourceDocument(src, kind, name)
	if srcDoc == nil {
		return lineStart(src.path, 1), nil
	}
	sk, sv, depth := lookup(srcDoc, alignByName(root, srcDoc, elems))
	exact := depth == len(elems)
	baseLoc := func() []graph.Location {
		if exact {
			return []graph.Location{{Pos: nodePos(src.path, sk, sv), Message: "the base value, " + describe(sv)}}
		}
		return []graph.Location{{Pos: objectPos(src.path, srcDoc), Message: "the object in its base"}}
	}
	// The value written in the source is the rendered one.
	if exact && (sameScalar(val, sv) || val != nil && val.Kind != yaml.ScalarNode && sv.Kind == val.Kind) {
		if sameScalar(val, sv) {
			return shifted(p, src.path, val, sv), nil
		}
		return nodePos(src.path, sk, sv), nil
	}
	// A kustomization on the way set it: the last one wins.
	for i := len(doc.chain) - 1; i >= 0; i-- {
		if pos, ok := m.setter(rf, root, doc.chain[i], kind, srcName(srcDoc), name, elems, val); ok {
			return pos, baseLoc()
		}
	}
	// Nothing rolloutlint can attribute set it (a replacement, a
	// transformer config): the field, or the nearest one above it, in
	// the source.
	return nodePos(src.path, sk, sv), nil
}

func describe(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return "before the overlay"
}

func scalarAt(n *yaml.Node, keys ...string) string {
	cur := n
	for _, k := range keys {
		cur = mapValue(cur, k)
	}
	if cur == nil || cur.Kind != yaml.ScalarNode {
		return ""
	}
	return cur.Value
}

func srcName(n *yaml.Node) string { return scalarAt(n, "metadata", "name") }

// sourceDocument finds the document of a source file a rendered resource
// came from: the one of the same kind whose name the rendered name
// contains (kustomize adds prefixes and suffixes), preferring the longest.
func sourceDocument(src *sourceFile, kind, name string) *yaml.Node {
	var best *yaml.Node
	bestLen := -1
	for _, d := range src.docs {
		if d.Kind != yaml.MappingNode || scalarAt(d, "kind") != kind {
			continue
		}
		n := srcName(d)
		if strings.Contains(name, n) && len(n) > bestLen {
			best, bestLen = d, len(n)
		}
	}
	if best == nil {
		for _, d := range src.docs {
			if d.Kind == yaml.MappingNode && scalarAt(d, "kind") == kind {
				return d
			}
		}
	}
	return best
}

// objectPos is where an object starts in its file: its name, else its
// first key.
func objectPos(file string, n *yaml.Node) graph.Position {
	if md := mapValue(n, "metadata"); md != nil {
		if nm := mapValue(md, "name"); nm != nil {
			return graph.NodePos(file, nm)
		}
	}
	if n != nil && n.Kind == yaml.MappingNode && len(n.Content) > 0 {
		return graph.NodePos(file, n.Content[0])
	}
	return graph.NodePos(file, n)
}

// generatorPos is the line of a kustomization naming a generated object.
func (m *Mapper) generatorPos(file string, doc *renderedDoc) graph.Position {
	src := m.r.source(file)
	name := scalarAt(doc.root(), "metadata", "name")
	if src != nil {
		for _, base := range []string{name, strings.TrimRight(name, "-0123456789abcdefghijklmnopqrstuvwxyz")} {
			for i := len(base); i > 2 && base != ""; i = strings.LastIndexByte(base[:i], '-') {
				tok := base[:i]
				for n, l := range src.lines {
					if strings.Contains(l, "name: "+tok) || strings.Contains(l, "name: \""+tok) {
						col := strings.Index(l, tok) + 1
						return graph.Position{File: file, Line: n + 1, Column: col, EndLine: n + 1, EndColumn: col + len(tok)}
					}
				}
				if i <= 0 {
					break
				}
			}
		}
	}
	return lineStart(file, 1)
}

// setter finds what in one kustomization sets the rendered value at
// elems: a patch of the resource, or one of its transformer fields. The
// resource is named srcName in its source and name once rendered.
func (m *Mapper) setter(rf *renderedFile, rendered *yaml.Node, kfile, kind, srcName, name string, elems []graph.PathElem, val *yaml.Node) (graph.Position, bool) {
	ksrc := m.r.source(kfile)
	if ksrc == nil || len(ksrc.docs) == 0 {
		return graph.Position{}, false
	}
	k := ksrc.docs[0]
	dir := filepath.Dir(kfile)
	path := pathString(elems)
	root := filepath.Clean(rf.unitRoot) == filepath.Clean(kfile)
	// Argo CD's source.kustomize options replace the root's fields.
	if root && rf.app != nil && rf.app.Source.Kustomize != nil {
		ks := rf.app.Source.Kustomize
		base := rf.app.SourcePath + ".kustomize."
		switch {
		case path == "metadata.name" && (ks.NamePrefix != "" || ks.NameSuffix != ""):
			if ks.NamePrefix != "" {
				return rf.app.Pos(base + "namePrefix"), true
			}
			return rf.app.Pos(base + "nameSuffix"), true
		case path == "metadata.namespace" && ks.Namespace != "":
			return rf.app.Pos(base + "namespace"), true
		}
	}
	// Patches, last first: a later patch wins over an earlier one.
	type patch struct {
		file   string
		node   *yaml.Node // the patch document (or JSON 6902 list)
		target *yaml.Node
	}
	var patches []patch
	addPatch := func(item *yaml.Node) {
		if item.Kind == yaml.ScalarNode { // patchesStrategicMerge: a path or inline text
			if strings.Contains(item.Value, "\n") {
				if n := inlineNode(item); n != nil {
					patches = append(patches, patch{file: kfile, node: n})
				}
				return
			}
			f := filepath.Join(dir, filepath.FromSlash(item.Value))
			if ps := m.r.source(f); ps != nil {
				for _, d := range ps.docs {
					patches = append(patches, patch{file: f, node: d})
				}
			}
			return
		}
		target := mapValue(item, "target")
		if pv := mapValue(item, "path"); pv != nil {
			f := filepath.Join(dir, filepath.FromSlash(pv.Value))
			if ps := m.r.source(f); ps != nil {
				for _, d := range ps.docs {
					patches = append(patches, patch{file: f, node: d, target: target})
				}
			}
		}
		if pv := mapValue(item, "patch"); pv != nil && pv.Kind == yaml.ScalarNode {
			if n := inlineNode(pv); n != nil {
				patches = append(patches, patch{file: kfile, node: n, target: target})
			}
		}
	}
	for _, key := range []string{"patchesStrategicMerge", "patchesJson6902", "patches"} {
		if seq := mapValue(k, key); seq != nil && seq.Kind == yaml.SequenceNode {
			for _, item := range seq.Content {
				addPatch(item)
			}
		}
	}
	for i := len(patches) - 1; i >= 0; i-- {
		pt := patches[i]
		if pt.target != nil && !targetMatches(pt.target, kind, srcName, name) {
			continue
		}
		if pt.node.Kind == yaml.SequenceNode { // JSON 6902 operations
			if pos, ok := json6902Setter(pt.file, pt.node, elems, val); ok {
				return pos, true
			}
			continue
		}
		if pt.target == nil {
			pk, pn := scalarAt(pt.node, "kind"), srcNameOf(pt.node)
			if pk != kind || pn != srcName && pn != name {
				continue
			}
		}
		pk, pv, depth := lookup(pt.node, alignByName(rendered, pt.node, elems))
		if depth == len(elems) && (sameScalar(pv, val) || val == nil || val.Kind != yaml.ScalarNode) {
			return nodePos(pt.file, pk, pv), true
		}
		// A strategic merge patch merges lists by key (containers by
		// name): the item may sit at another index in the patch.
		if pos, ok := mergedItem(pt.file, pt.node, elems, val); ok {
			return pos, true
		}
	}
	// Transformer fields of the kustomization.
	field := func(keys ...string) (graph.Position, bool) {
		cur := k
		var kn *yaml.Node
		for _, key := range keys {
			var next, nk *yaml.Node
			if cur != nil && cur.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(cur.Content); j += 2 {
					if cur.Content[j].Value == key {
						nk, next = cur.Content[j], cur.Content[j+1]
					}
				}
			}
			if next == nil {
				return graph.Position{}, false
			}
			cur, kn = next, nk
		}
		return nodePos(kfile, kn, cur), true
	}
	switch {
	case path == "metadata.namespace":
		return field("namespace")
	case path == "metadata.name":
		if pos, ok := field("namePrefix"); ok {
			return pos, true
		}
		return field("nameSuffix")
	case strings.HasPrefix(path, "metadata.labels.") || strings.Contains(path, "matchLabels.") || strings.Contains(path, "selector."):
		label := elems[len(elems)-1].Key
		if pos, ok := field("commonLabels", label); ok {
			return pos, true
		}
		if seq := mapValue(k, "labels"); seq != nil && seq.Kind == yaml.SequenceNode {
			for _, it := range seq.Content {
				if pairs := mapValue(it, "pairs"); pairs != nil {
					for j := 0; j+1 < len(pairs.Content); j += 2 {
						if pairs.Content[j].Value == label {
							return nodePos(kfile, pairs.Content[j], pairs.Content[j+1]), true
						}
					}
				}
			}
		}
	case strings.HasPrefix(path, "metadata.annotations."):
		return field("commonAnnotations", elems[len(elems)-1].Key)
	case strings.HasSuffix(path, ".image") && val != nil:
		if seq := mapValue(k, "images"); seq != nil && seq.Kind == yaml.SequenceNode {
			for _, it := range seq.Content {
				n := mapValue(it, "name")
				if n == nil {
					continue
				}
				for _, f := range []string{"newTag", "digest", "newName"} {
					if fv := mapValue(it, f); fv != nil && strings.Contains(val.Value, fv.Value) {
						return graph.NodePos(kfile, fv), true
					}
				}
			}
		}
	case path == "spec.replicas":
		if seq := mapValue(k, "replicas"); seq != nil && seq.Kind == yaml.SequenceNode {
			for _, it := range seq.Content {
				if n := mapValue(it, "name"); n != nil && (n.Value == srcName || n.Value == name) {
					if c := mapValue(it, "count"); c != nil {
						return graph.NodePos(kfile, c), true
					}
				}
			}
		}
	}
	return graph.Position{}, false
}

func srcNameOf(n *yaml.Node) string { return scalarAt(n, "metadata", "name") }

// targetMatches reports whether a patch target selects the resource
// (kind, and name as a regular expression anchored as kustomize does).
func targetMatches(t *yaml.Node, kind, srcName, name string) bool {
	if k := scalarAt(t, "kind"); k != "" && k != kind {
		return false
	}
	if n := scalarAt(t, "name"); n != "" {
		re, err := regexp.Compile("^(?:" + n + ")$")
		if err != nil {
			return n == srcName || n == name
		}
		return re.MatchString(srcName) || re.MatchString(name)
	}
	return true
}

// inlineNode parses a patch written inline in a kustomization (a block
// scalar), with lines of the kustomization.
func inlineNode(v *yaml.Node) *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(v.Value), &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	lineOff, colOff := v.Line, v.Column+1
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

// json6902Setter finds the operation of a JSON 6902 patch that writes the
// field at elems (its path, or a parent whose value holds the field).
func json6902Setter(file string, ops *yaml.Node, elems []graph.PathElem, val *yaml.Node) (graph.Position, bool) {
	for i := len(ops.Content) - 1; i >= 0; i-- {
		op := ops.Content[i]
		kind := scalarAt(op, "op")
		if kind != "add" && kind != "replace" && kind != "copy" && kind != "move" {
			continue
		}
		opElems := pointerElems(scalarAt(op, "path"))
		if len(opElems) > len(elems) || !prefixOf(opElems, elems) {
			continue
		}
		v := mapValue(op, "value")
		if v == nil {
			return graph.NodePos(file, mapValue(op, "path")), true
		}
		vk, vv, depth := lookup(v, elems[len(opElems):])
		if depth == len(elems)-len(opElems) {
			if vk == nil && len(opElems) == len(elems) {
				return nodePos(file, nil, v), true
			}
			return nodePos(file, vk, vv), true
		}
		return graph.NodePos(file, mapValue(op, "path")), true
	}
	return graph.Position{}, false
}

// pointerElems turns a JSON pointer into field path elements; "-" (append)
// and numbers are indexes.
func pointerElems(p string) []graph.PathElem {
	var out []graph.PathElem
	for _, part := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		if n, err := strconv.Atoi(part); err == nil {
			out = append(out, graph.PathElem{Index: n})
			continue
		}
		out = append(out, graph.PathElem{IsKey: true, Key: part})
	}
	return out
}

func prefixOf(a, b []graph.PathElem) bool {
	for i := range a {
		if a[i].IsKey != b[i].IsKey || a[i].IsKey && a[i].Key != b[i].Key || !a[i].IsKey && a[i].Index != b[i].Index {
			return false
		}
	}
	return true
}

// mergedItem finds, in a strategic merge patch, the list item matching the
// rendered one by its name and the field below it.
func mergedItem(file string, patch *yaml.Node, elems []graph.PathElem, val *yaml.Node) (graph.Position, bool) {
	for i, e := range elems {
		if e.IsKey {
			continue
		}
		_, seq, depth := lookup(patch, elems[:i])
		if depth != i || seq == nil || seq.Kind != yaml.SequenceNode {
			return graph.Position{}, false
		}
		for _, it := range seq.Content {
			k, v, d := lookup(it, elems[i+1:])
			if d == len(elems)-i-1 && sameScalar(v, val) {
				return nodePos(file, k, v), true
			}
		}
		return graph.Position{}, false
	}
	return graph.Position{}, false
}

// alignByName rewrites the indexes of a path into the rendered object as
// indexes into another document (the source, a patch) where a list item is
// a mapping with a name: strategic merge matches containers, ports and
// the like by name, so the item may sit at another index there.
func alignByName(rendered, other *yaml.Node, elems []graph.PathElem) []graph.PathElem {
	out := append([]graph.PathElem(nil), elems...)
	rcur, ocur := rendered, other
	for i, e := range out {
		if rcur == nil || ocur == nil {
			break
		}
		if e.IsKey {
			rcur, ocur = mapValue(rcur, e.Key), mapValue(ocur, e.Key)
			continue
		}
		if rcur.Kind != yaml.SequenceNode || ocur.Kind != yaml.SequenceNode || e.Index < 0 || e.Index >= len(rcur.Content) {
			break
		}
		item := rcur.Content[e.Index]
		name := scalarAt(item, "name")
		next := (*yaml.Node)(nil)
		if name != "" {
			for j, o := range ocur.Content {
				if scalarAt(o, "name") == name {
					out[i].Index, next = j, o
					break
				}
			}
		}
		if next == nil {
			if name != "" {
				out[i].Index = len(ocur.Content) // no such item there
				break
			}
			if e.Index < len(ocur.Content) {
				next = ocur.Content[e.Index]
			}
		}
		rcur, ocur = item, next
	}
	return out
}
