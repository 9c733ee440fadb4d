package analyzer

import (
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// mapToUserFiles moves every position of the diagnostics that lies in a
// rendered file (Kustomize or Helm output) into the file the user wrote,
// adding the related locations the mapper gives (the base a patch changed,
// the values file a template read). It runs before suppression, so inline
// comments in the user's files suppress findings on rendered objects.
func mapToUserFiles(g *graph.Graph, diags []rules.Diagnostic) {
	if g.Mapper == nil {
		return
	}
	rendered := map[string]bool{}
	for _, f := range g.Files {
		if f.Rendered {
			rendered[f.Path] = true
		}
	}
	for i := range diags {
		d := &diags[i]
		if rendered[d.Pos.File] {
			pos, extra := g.Mapper.MapPos(d.Pos)
			d.Pos = pos
			for _, l := range extra {
				d.Related = append(d.Related, rules.Related{File: l.Pos.File, Line: l.Pos.Line, Column: l.Pos.Column, Message: l.Message})
			}
		}
		for j := range d.Related {
			r := &d.Related[j]
			if rendered[r.File] {
				pos, _ := g.Mapper.MapPos(graph.Position{File: r.File, Line: r.Line, Column: r.Column, EndLine: r.Line, EndColumn: r.Column + 1})
				r.File, r.Line, r.Column = pos.File, pos.Line, pos.Column
			}
		}
	}
}

// followsFromDecoding reports a finding of a rule other than the input
// rules (RL0xxx) on an object whose decoding failed: it was computed on a
// partial object and follows from the RL0003 finding that says why.
func followsFromDecoding(d *rules.Diagnostic) bool {
	return d.Resource != nil && d.Resource.DecodeFailed && !strings.HasPrefix(d.RuleID, "RL0")
}
