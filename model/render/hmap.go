package render

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// valuesRef matches a values reference in a template action: .Values.a.b
// (also $.Values.a.b and index-free chains only).
var valuesRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`) })

// toYamlRef matches a block of values inserted whole: toYaml .Values.a.b.
var toYamlRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`toYaml\s+\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)
})

// helmPos maps a position in a template's output to the template: the line
// where the field's key is written (at the value when the rendered value is
// written there literally), else the object's first line; when the line
// reads values, the values file (or the Application's values or
// parameter) that gave the value is a related location.
func (m *Mapper) helmPos(rf *renderedFile, doc *renderedDoc, p graph.Position, elems []graph.PathElem, key, val *yaml.Node) (graph.Position, []graph.Location) {
	if rf.template == "" {
		// A template of a dependency packed as a .tgz: the user wrote only
		// the dependency's entry in Chart.yaml.
		return m.r.chartDependencyPos(rf.unitRoot, rf.dependency), nil
	}
	src := m.r.source(rf.template)
	if src == nil {
		return lineStart(rf.template, 1), nil
	}
	lines := src.lines
	lo, hi := doc.segStart, doc.segEnd
	if lo < 1 || hi > len(lines) || lo > hi {
		lo, hi = 1, len(lines)
	}
	if len(elems) == 0 {
		return objectLine(rf.template, lines, lo, hi), nil
	}
	km := findKey(lines, lo, hi, elems, func(keys []string) int { return m.valuesLen(rf, keys) })
	line, col, depth, keyLen := km.line, km.col, km.depth, km.keyLen
	if line == 0 {
		return objectLine(rf.template, lines, lo, hi), m.valuesBlock(rf, lines, lo, hi, elems)
	}
	text := lines[line-1]
	var pos graph.Position
	if depth == len(elems) && val != nil && val.Kind == yaml.ScalarNode && val.Value != "" {
		rest := text[col-1+keyLen:]
		if i := strings.Index(rest, val.Value); i >= 0 && !strings.Contains(rest[:i], "{{") {
			c := col + keyLen + i
			pos = graph.Position{File: rf.template, Line: line, Column: c, EndLine: line, EndColumn: c + len(val.Value)}
		}
	}
	if pos.Line == 0 {
		pos = graph.Position{File: rf.template, Line: line, Column: col, EndLine: line, EndColumn: col + max(keyLen-1, 1)}
	}
	var related []graph.Location
	if depth == len(elems) {
		for _, mm := range valuesRef().FindAllStringSubmatch(text, -1) {
			related = append(related, m.valuesLoc(rf, splitDots(mm[1]), nil)...)
		}
		if len(related) == 0 && km.rangeKeys != nil && strings.Contains(text, "{{") {
			// `{{ . }}` in a range over values: the iteration's item.
			related = m.valuesLoc(rf, km.rangeKeys, []graph.PathElem{{Index: km.rangeIter}})
		}
	} else {
		// The field is not in the template: a block of values inserted
		// whole (toYaml .Values.x) below the deepest key found.
		related = m.valuesBlock(rf, lines, line, hi, elems[depth:])
	}
	return pos, sortedLocations(related)
}

func splitDots(s string) []string { return strings.Split(strings.TrimPrefix(s, "."), ".") }

// valuesBlock looks for `toYaml .Values.x` in template lines and maps the
// rest of the path into that value.
func (m *Mapper) valuesBlock(rf *renderedFile, lines []string, lo, hi int, rest []graph.PathElem) []graph.Location {
	for i := lo; i <= hi && i <= len(lines); i++ {
		if mm := toYamlRef().FindStringSubmatch(lines[i-1]); mm != nil {
			if locs := m.valuesLoc(rf, splitDots(mm[1]), rest); len(locs) > 0 {
				return locs
			}
		}
	}
	return nil
}

// valuesLoc finds where a value came from: the last source (in Helm's
// merge order) that sets it, deepening into rest when given.
func (m *Mapper) valuesLoc(rf *renderedFile, keys []string, rest []graph.PathElem) []graph.Location {
	prefix := subchartPrefix(rf)
	full := append(append([]string{}, prefix...), keys...)
	var elems []graph.PathElem
	for _, k := range full {
		elems = append(elems, graph.PathElem{IsKey: true, Key: k})
	}
	elems = append(elems, rest...)
	dotted := strings.Join(full, ".")
	for i := len(rf.values) - 1; i >= 0; i-- {
		vs := rf.values[i]
		if vs.param != "" {
			if vs.param == dotted || strings.HasPrefix(dotted, vs.param+".") {
				return []graph.Location{{Pos: vs.paramValue, Message: vs.what + " " + vs.param}}
			}
			continue
		}
		k, v, depth := lookup(vs.node, elems)
		if depth >= len(full) {
			return []graph.Location{{Pos: nodePos(vs.file, k, v), Message: vs.what + ": " + pathString(elems[:depth])}}
		}
	}
	// A subchart's own values.yaml.
	if len(prefix) > 0 {
		subDir := filepath.Join(filepath.Dir(rf.unitRoot), "charts", prefix[0])
		if rf.subchartDir != "" {
			subDir = rf.subchartDir
		}
		if src := m.r.source(filepath.Join(subDir, "values.yaml")); src != nil && len(src.docs) > 0 {
			k, v, depth := lookup(src.docs[0], elems[len(prefix):])
			if depth >= len(keys) {
				return []graph.Location{{Pos: nodePos(src.path, k, v), Message: "subchart default: " + pathString(elems[len(prefix):][:depth])}}
			}
		}
	}
	return nil
}

// valuesLen is the number of items of a values list (the last source
// that sets it), or -1 when no source says.
func (m *Mapper) valuesLen(rf *renderedFile, keys []string) int {
	var elems []graph.PathElem
	for _, k := range append(subchartPrefix(rf), keys...) {
		elems = append(elems, graph.PathElem{IsKey: true, Key: k})
	}
	for i := len(rf.values) - 1; i >= 0; i-- {
		vs := rf.values[i]
		if vs.node == nil {
			if vs.param != "" && strings.HasPrefix(vs.param, strings.Join(keys, ".")) {
				return -1 // a parameter sets (part of) it: the count is not in a file
			}
			continue
		}
		if _, v, depth := lookup(vs.node, elems); depth == len(elems) && v.Kind == yaml.SequenceNode {
			return len(v.Content)
		}
	}
	return -1
}

// subchartPrefix is the values key of a subchart whose template this is.
func subchartPrefix(rf *renderedFile) []string {
	if rf.subchart != "" {
		return []string{rf.subchart}
	}
	rel, err := filepath.Rel(filepath.Dir(rf.unitRoot), rf.template)
	if err != nil {
		return nil
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) > 2 && parts[0] == "charts" {
		return []string{parts[1]}
	}
	return nil
}

// keyMatch is how far findKey followed a path through a template.
type keyMatch struct {
	line, col int // 1-based, of the deepest key or item found (line 0: none)
	depth     int // path elements matched
	keyLen    int // the key's length with its colon (0 for an item)
	// rangeKeys is the values path of a `range .Values.x` that produced
	// the item the path goes through, and rangeIter its iteration.
	rangeKeys []string
	rangeIter int
}

// rangeRe matches a range over values: {{- range .Values.a.b }} (with
// optional $i, $v := assignments).
var rangeRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{-?\s*range\s+(?:\$[A-Za-z0-9_]*\s*,?\s*)*(?::=\s*)?\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)`)
})

// findKey follows a field path through template lines by indentation:
// each key is a later line `key:` (or `- key:`) indented deeper than its
// parent, each index the n-th `- ` item of a sequence. Items a `range`
// makes are counted through the loop body (item i of a body of k items
// per iteration is iteration i/k); an unrelated action stops the search.
func findKey(lines []string, lo, hi int, elems []graph.PathElem, rangeLen func(keys []string) int) keyMatch {
	var km keyMatch
	cur := lo       // search from this line
	parent := -1    // the parent's column (0-based); children are deeper
	inItem := false // the previous element was a sequence item: its line may hold the next key
	for i, e := range elems {
		found := false
		start := cur
		if !inItem && i > 0 {
			start = cur + 1
		}
		for n := start; n <= hi && n <= len(lines); n++ {
			text := lines[n-1]
			trimmed := strings.TrimLeft(text, " ")
			ind := len(text) - len(trimmed)
			if !e.IsKey && rangeRe().MatchString(trimmed) {
				// The sequence starts with a loop: its items are at the
				// column of the body's first item.
				if body, _ := loopBody(lines, n, hi, -1); len(body) > 0 {
					dash := len(lines[body[0]-1]) - len(strings.TrimLeft(lines[body[0]-1], " "))
					if dash >= parent { // items may sit at their key's column
						if line, ok := nthItem(lines, n, hi, dash, e.Index, &km, rangeLen); ok {
							km.line, km.col, km.depth, km.keyLen = line, dash+1, i+1, 0
							cur, parent, inItem, found = line, dash, true, true
						}
					}
				}
				break
			}
			if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "{{") {
				continue
			}
			item := strings.HasPrefix(trimmed, "- ") || trimmed == "-"
			if ind < parent || ind == parent && (e.IsKey || !item) && (n != start || !inItem) {
				break // the parent's block ended (a sequence may sit at its key's column)
			}
			if e.IsKey {
				k, kc := trimmed, ind
				for strings.HasPrefix(k, "- ") {
					k, kc = k[2:], kc+2
				}
				if kc <= parent {
					continue
				}
				if strings.HasPrefix(k, e.Key+":") || strings.HasPrefix(k, `"`+e.Key+`":`) {
					km.line, km.col, km.depth, km.keyLen = n, kc+1, i+1, len(e.Key)+1
					cur, parent, inItem, found = n, kc, false, true
					break
				}
				continue
			}
			// An index: the items at the first dash column below the parent.
			if !item {
				continue
			}
			if line, ok := nthItem(lines, n, hi, ind, e.Index, &km, rangeLen); ok {
				km.line, km.col, km.depth, km.keyLen = line, ind+1, i+1, 0
				cur, parent, inItem, found = line, ind, true, true
			}
			break
		}
		if !found {
			return km
		}
	}
	return km
}

// nthItem finds the line of item index of the sequence whose first item
// is at line first, column dash. A range over values among the items is
// followed: its body's items repeat once per iteration.
func nthItem(lines []string, first, hi, dash, index int, km *keyMatch, rangeLen func(keys []string) int) (int, bool) {
	count := 0
	for m := first; m <= hi && m <= len(lines); m++ {
		t := lines[m-1]
		tt := strings.TrimLeft(t, " ")
		ti := len(t) - len(tt)
		if tt == "" || strings.HasPrefix(tt, "#") {
			continue
		}
		if strings.HasPrefix(tt, "{{") {
			rm := rangeRe().FindStringSubmatch(tt)
			if rm == nil {
				if strings.Contains(tt, "range") {
					return 0, false // a loop over something else: the template cannot say which item
				}
				continue
			}
			body, end := loopBody(lines, m, hi, dash)
			if len(body) == 0 {
				return 0, false
			}
			// Items before the loop come first; the loop repeats its body
			// once per item of the values it ranges over (when the values
			// say how many, items after the loop are found too).
			keys := splitDots(rm[1])
			iters := -1
			if rangeLen != nil {
				iters = rangeLen(keys)
			}
			if index >= count && (iters < 0 || index < count+iters*len(body)) {
				rel := index - count
				km.rangeKeys, km.rangeIter = keys, rel/len(body)
				return body[rel%len(body)], true
			}
			if iters < 0 {
				return 0, false
			}
			count += iters * len(body)
			m = end
			continue
		}
		if ti < dash {
			break
		}
		if ti == dash && strings.HasPrefix(tt, "-") {
			if count == index {
				return m, true
			}
			count++
		}
	}
	return 0, false
}

// loopBody lists the lines of the items at column dash inside the loop
// opened at line open, and the line of its end.
func loopBody(lines []string, open, hi, dash int) ([]int, int) {
	depth := 1
	var items []int
	for m := open + 1; m <= hi && m <= len(lines); m++ {
		tt := strings.TrimSpace(lines[m-1])
		if strings.HasPrefix(tt, "{{") {
			switch {
			case blockOpen().MatchString(tt):
				depth++
			case blockEnd().MatchString(tt):
				depth--
				if depth == 0 {
					return items, m
				}
			}
			continue
		}
		ind := len(lines[m-1]) - len(strings.TrimLeft(lines[m-1], " "))
		if dash < 0 && depth == 1 && strings.HasPrefix(tt, "-") {
			dash = ind // the first item sets the column
		}
		if depth == 1 && strings.HasPrefix(tt, "-") && ind == dash {
			items = append(items, m)
		}
	}
	return items, hi
}

var (
	blockOpen = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{\{-?\s*(range|if|with|define|block)\b`) })
	blockEnd  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{\{-?\s*end\b`) })
)

// objectLine is an object's first line in a template document: its
// apiVersion or kind, else its first line of YAML.
func objectLine(file string, lines []string, lo, hi int) graph.Position {
	first := 0
	for n := lo; n <= hi && n <= len(lines); n++ {
		t := strings.TrimSpace(lines[n-1])
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "{{") && strings.HasSuffix(t, "}}") {
			continue
		}
		if strings.HasPrefix(t, "apiVersion:") || strings.HasPrefix(t, "kind:") {
			return graph.Position{File: file, Line: n, Column: 1, EndLine: n, EndColumn: len(t) + 1}
		}
		if first == 0 {
			first = n
		}
	}
	if first == 0 {
		first = lo
	}
	return lineStart(file, first)
}

// chartDependencyPos is the line of Chart.yaml naming a dependency.
func (r *Renderer) chartDependencyPos(chartFile, dep string) graph.Position {
	if src := r.source(chartFile); src != nil && len(src.docs) > 0 {
		if deps := mapValue(src.docs[0], "dependencies"); deps != nil {
			for _, d := range deps.Content {
				name := mapValue(d, "name")
				alias := mapValue(d, "alias")
				if name != nil && (strings.HasPrefix(dep, name.Value) || alias != nil && alias.Value == dep) {
					return graph.NodePos(chartFile, name)
				}
			}
		}
	}
	return lineStart(chartFile, 1)
}
