package analyzer

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/internal/textdist"
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
	key      string          // for a misspelt annotation: its key (else IgnoreAnnotation)
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
	var misspelt []misspelling
	for _, f := range g.Files {
		for _, d := range f.Directives {
			if d.Unknown != "" {
				misspelt = append(misspelt, misspelling{pos: d.Pos, what: "directive", got: "rolloutlint:" + d.Unknown, want: "rolloutlint:ignore"})
				continue
			}
			sups = append(sups, &suppression{pos: d.Pos, rules: d.Rules, reason: d.Reason, kind: "inSource", line: d.Line, file: f.Path})
		}
	}
	misspelt = append(misspelt, misspeltAnnotations(g)...)
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
	if len(sups) == 0 && len(misspelt) == 0 {
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
			key := IgnoreAnnotation
			if s.key != "" {
				key = s.key
			}
			d.Path = graph.Key("metadata.annotations", key)
		}
		out = append(out, d)
	}
	for _, m := range misspelt {
		msg := fmt.Sprintf("unknown %s %s suppresses nothing", m.what, m.got)
		if _, near := textdist.Within(m.got, m.want, 3); near {
			msg = fmt.Sprintf("unknown %s %s suppresses nothing (did you mean %s?)", m.what, m.got, m.want)
		}
		emit(RuleSuppressionUnused, "unused-suppression", &suppression{pos: m.pos, resource: m.resource, key: m.key}, msg,
			fmt.Sprintf("rolloutlint reads only the comment `rolloutlint:ignore RLxxxx -- reason` and the annotation `%s: \"RLxxxx -- reason\"`.", IgnoreAnnotation))
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

// misspelling is a comment or annotation meant as a suppression that
// rolloutlint does not read as one.
type misspelling struct {
	pos       graph.Position
	what      string // "directive" or "annotation"
	got, want string
	resource  *graph.Resource // for an annotation
	key       string          // for an annotation: its key
}

// annotationPrefix starts every annotation key of rolloutlint's.
const annotationPrefix = graph.AnnotationPrefix

// misspeltAnnotations finds annotation keys under rolloutlint.io/ other than
// the ignore annotation, in the files whose text holds the prefix (as the
// loader found: File.MentionsAnnotations).
func misspeltAnnotations(g *graph.Graph) []misspelling {
	var mention map[string]bool
	for _, f := range g.Files {
		if f.MentionsAnnotations {
			if mention == nil {
				mention = map[string]bool{}
			}
			mention[f.Path] = true
		}
	}
	if mention == nil {
		return nil
	}
	var out []misspelling
	for _, r := range g.Resources {
		if !mention[r.File] {
			continue
		}
		for _, k := range r.AnnotationKeys() {
			if k == IgnoreAnnotation || !strings.HasPrefix(k, annotationPrefix) {
				continue
			}
			out = append(out, misspelling{pos: r.Pos(graph.Key("metadata.annotations", k)), what: "annotation",
				got: k, want: IgnoreAnnotation, resource: r, key: k})
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
