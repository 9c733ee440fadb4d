package graph

import (
	"fmt"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Position is a source range. Lines and columns are 1-based; columns count
// characters (runes), as editors and SARIF viewers do.
type Position struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
}

// String renders the position as file:line:col.
func (p Position) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}

// IsValid reports whether the position names a line.
func (p Position) IsValid() bool { return p.Line > 0 }

// NodePos returns the range a yaml node covers on its first line. Scalars span
// their text (quotes included); collections span one character at their start.
func NodePos(file string, n *yaml.Node) Position {
	if n == nil {
		return Position{File: file, Line: 1, Column: 1, EndLine: 1, EndColumn: 1}
	}
	p := Position{File: file, Line: n.Line, Column: n.Column, EndLine: n.Line, EndColumn: n.Column + 1}
	if p.Line <= 0 {
		p.Line, p.EndLine = 1, 1
	}
	if p.Column <= 0 {
		p.Column, p.EndColumn = 1, 2
	}
	if n.Kind == yaml.ScalarNode {
		width := utf8.RuneCountInString(n.Value)
		switch n.Style {
		case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
			width += 2
		case yaml.LiteralStyle, yaml.FoldedStyle:
			width = 1 // the indicator; the text starts on the next line
		}
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			for i := 0; i < len(n.Value); i++ {
				if n.Value[i] == '\n' { // a multi-line flow scalar: end at the first line
					width = utf8.RuneCountInString(n.Value[:i])
					break
				}
			}
		}
		if width < 1 {
			width = 1
		}
		p.EndColumn = p.Column + width
	}
	return p
}
