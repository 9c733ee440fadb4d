package graph

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// PosInScalar returns the position of the byte range [start, end) of the
// string value at path: for a literal block scalar (`query: |`) the line and
// column inside the block, for a single-line plain or quoted scalar the
// column inside it. Folded and multi-line flow scalars, whose text does not
// map to the source line by line, give the position of the value itself.
func (g *Graph) PosInScalar(r *Resource, path string, start, end int) Position {
	_, val := r.lookupExact(path)
	if val == nil || val.Kind != yaml.ScalarNode {
		return r.Pos(path)
	}
	v := val.Value
	start, end = clampOff(start, len(v)), clampOff(end, len(v))
	if end < start {
		end = start
	}
	lineStart := strings.LastIndexByte(v[:start], '\n') + 1
	lineEnd := len(v)
	if nl := strings.IndexByte(v[start:], '\n'); nl >= 0 {
		lineEnd = start + nl
	}
	if end > lineEnd {
		end = lineEnd
	}
	width := utf8.RuneCountInString(v[start:end])
	if width < 1 {
		width = 1
	}
	var line, col int
	switch {
	case val.Style&yaml.LiteralStyle != 0:
		line = val.Line + 1 + strings.Count(v[:start], "\n")
		indent, ok := g.blockIndent(r.File, line, v[lineStart:lineEnd])
		if !ok {
			return NodePos(r.File, val)
		}
		col = indent + 1 + utf8.RuneCountInString(v[lineStart:start])
	case val.Style&yaml.FoldedStyle != 0 || strings.Contains(v, "\n"):
		return NodePos(r.File, val)
	case val.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		line = val.Line
		col = val.Column + 1 + g.quotedWidth(r.File, val, v[:start])
		width = g.quotedWidth(r.File, val, v[:end]) - (col - val.Column - 1)
	default:
		line, col = val.Line, val.Column+utf8.RuneCountInString(v[:start])
	}
	return Position{File: r.File, Line: line, Column: col, EndLine: line, EndColumn: col + width}
}

// quotedWidth is how many source characters the quoted scalar val takes to
// spell its first len(prefix) bytes, counting escapes (`\"`, `\xNN`, `”`) at
// their written width. Without the source it is the prefix's own width.
func (g *Graph) quotedWidth(file string, val *yaml.Node, prefix string) int {
	src, ok := g.sourceLine(file, val.Line)
	runes := []rune(src)
	if !ok || val.Column > len(runes) {
		return utf8.RuneCountInString(prefix)
	}
	i := val.Column // just past the opening quote (0-based)
	for n := 0; n < len(prefix); {
		if i >= len(runes) {
			return utf8.RuneCountInString(prefix)
		}
		c := runes[i]
		step := 1
		switch {
		case val.Style&yaml.DoubleQuotedStyle != 0 && c == '\\' && i+1 < len(runes):
			step = map[rune]int{'x': 4, 'u': 6, 'U': 10}[runes[i+1]]
			if step == 0 {
				step = 2
			}
		case val.Style&yaml.SingleQuotedStyle != 0 && c == '\'' && i+1 < len(runes) && runes[i+1] == '\'':
			step = 2
		}
		_, size := utf8.DecodeRuneInString(prefix[n:])
		n += size
		i += step
	}
	return i - val.Column
}

// blockIndent finds how many characters precede a block scalar's line text on
// source line n (1-based); yaml nodes do not record a block's indentation.
func (g *Graph) blockIndent(file string, n int, text string) (int, bool) {
	lineText, ok := g.sourceLine(file, n)
	if !ok || !strings.HasSuffix(lineText, text) {
		return 0, false
	}
	return utf8.RuneCountInString(lineText) - utf8.RuneCountInString(text), true
}

func clampOff(v, n int) int {
	if v < 0 {
		return 0
	}
	if v > n {
		return n
	}
	return v
}

// sourceLine returns line n (1-based) of a file's source.
func (g *Graph) sourceLine(file string, n int) (string, bool) {
	f := g.File(file)
	if f == nil || f.Source == nil {
		return "", false
	}
	src := f.Source
	for i := 1; i < n; i++ {
		nl := bytes.IndexByte(src, '\n')
		if nl < 0 {
			return "", false
		}
		src = src[nl+1:]
	}
	if nl := bytes.IndexByte(src, '\n'); nl >= 0 {
		src = src[:nl]
	}
	return strings.TrimRight(string(src), "\r"), true
}
