package analyzer

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// suppression is one directive: an inline comment or an object annotation.
type suppression struct {
	pos      graph.Position
	rules    []string
	reason   string
	kind     string          // inSource or external
	line     int             // for comments: the covered line
	file     string          // for comments
	resource *graph.Resource // for annotations
	used     []bool
}

// matches returns the index of the directive's rule pattern that suppresses
// d, or -1. A directive covers a finding on its object or line, and a paired
// finding whose other side (a peer) is its object or on its line: the pair is
// reported once, on the first object, and a user may have suppressed it on
// either.
func (s *suppression) matches(d *rules.Diagnostic) int {
	if !s.covers(d) {
		return -1
	}
	for i, p := range s.rules {
		if config.MatchRule(p, d.RuleID) {
			return i
		}
	}
	return -1
}

// suppress marks suppressed diagnostics in place and returns the findings about
// the directives themselves: no reason given (RL0007) and suppressing nothing
// or naming an unknown rule (RL0008).
func suppress(g *graph.Graph, diags []rules.Diagnostic, known map[string]*rules.Rule, settings map[string]config.Setting) []rules.Diagnostic {
	var sups []*suppression
	for _, f := range g.Files {
		for _, d := range f.Directives {
			sups = append(sups, &suppression{pos: d.Pos, rules: d.Rules, reason: d.Reason, kind: "inSource", line: d.Line, file: f.Path})
		}
	}
	for _, r := range g.Resources {
		v, ok := r.Annotation(IgnoreAnnotation)
		if !ok {
			continue
		}
		ids, reason, _ := strings.Cut(v, "--")
		s := &suppression{pos: r.Pos(graph.Key("metadata.annotations", IgnoreAnnotation)), reason: strings.TrimSpace(reason), kind: "external", resource: r}
		s.rules = strings.FieldsFunc(ids, func(c rune) bool { return c == ',' || c == ' ' })
		sups = append(sups, s)
	}
	if len(sups) == 0 {
		return nil
	}
	for _, s := range sups {
		s.used = make([]bool, len(s.rules))
	}
	for i := range diags {
		d := &diags[i]
		for _, s := range sups {
			if j := s.matches(d); j >= 0 {
				s.used[j] = true
				if d.Suppressed == nil {
					d.Suppressed = &rules.Suppression{Kind: s.kind, Reason: s.reason}
				}
			}
		}
	}
	var out []rules.Diagnostic
	emit := func(id, name string, s *suppression, msg, detail string) {
		if st, ok := settings[id]; ok && !st.Enabled {
			return
		}
		sev := rules.Warning
		if st := settings[id]; st.Severity != 0 {
			sev = st.Severity
		}
		d := rules.Diagnostic{RuleID: id, Name: name, Severity: sev, Pos: s.pos, Message: msg, Detail: detail, Resource: s.resource}
		if s.resource != nil {
			d.Object = s.resource.Ref()
			d.Path = graph.Key("metadata.annotations", IgnoreAnnotation)
		}
		out = append(out, d)
	}
	for _, s := range sups {
		if len(s.rules) == 0 {
			emit(RuleSuppressionUnused, "unused-suppression", s, "suppression names no rule", "Write `rolloutlint:ignore RLxxxx -- reason`.")
			continue
		}
		if s.reason == "" {
			emit(RuleSuppressionNoReason, "suppression-without-reason", s,
				fmt.Sprintf("suppression of %s gives no reason", strings.Join(s.rules, ",")), "Add ` -- why this is fine` after the rule IDs.")
		}
		for j, p := range s.rules {
			if s.used[j] {
				continue
			}
			if !anyRuleMatches(p, known) {
				emit(RuleSuppressionUnused, "unused-suppression", s, fmt.Sprintf("suppression names %s, which is not a rule", p), "")
				continue
			}
			if !anyEnabled(p, settings) {
				continue // the rule is off: nothing to suppress, nothing to say
			}
			emit(RuleSuppressionUnused, "unused-suppression", s, fmt.Sprintf("suppression of %s matches no finding here", p), "Remove it.")
		}
	}
	return out
}

func (s *suppression) covers(d *rules.Diagnostic) bool {
	if s.resource != nil {
		if d.Resource == s.resource {
			return true
		}
		for _, rel := range d.Related {
			if rel.Peer == s.resource {
				return true
			}
		}
		return false
	}
	if d.Pos.File == s.file && d.Pos.Line == s.line {
		return true
	}
	for _, rel := range d.Related {
		if rel.Peer != nil && rel.File == s.file && rel.Line == s.line {
			return true
		}
	}
	return false
}

func anyRuleMatches(p string, known map[string]*rules.Rule) bool {
	for id := range known {
		if config.MatchRule(p, id) {
			return true
		}
	}
	return false
}

func anyEnabled(p string, settings map[string]config.Setting) bool {
	for id, s := range settings {
		if s.Enabled && config.MatchRule(p, id) {
			return true
		}
	}
	return false
}
