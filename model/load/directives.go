package load

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// directiveRe matches `rolloutlint:ignore RL2003,RL5001 -- reason` inside a
// comment; the first group is the directive's word (anything but `ignore`
// is a misspelling), the second what follows it.
var directiveRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`#\s*rolloutlint:([A-Za-z][A-Za-z_-]*)\b[ \t]*([^\r\n]*)`)
})

// directives finds inline suppression comments. A directive that trails code
// covers its own line; one on a line of its own covers the next line that is
// not a comment.
func (l *loader) directives(file string, data []byte) []graph.Directive {
	if !bytes.Contains(data, []byte("rolloutlint:")) {
		return nil
	}
	lines := bytes.Split(data, []byte("\n"))
	var out []graph.Directive
	for i, raw := range lines {
		line := string(bytes.TrimRight(raw, "\r"))
		loc := directiveRe().FindStringSubmatchIndex(line)
		if loc == nil || !inComment(line, loc[0]) {
			continue
		}
		if verb := line[loc[2]:loc[3]]; verb != "ignore" {
			out = append(out, graph.Directive{Unknown: verb,
				Pos: graph.Position{File: file, Line: i + 1, Column: utf8.RuneCountInString(line[:loc[0]]) + 1,
					EndLine: i + 1, EndColumn: utf8.RuneCountInString(line) + 1}})
			continue
		}
		body := line[loc[4]:loc[5]]
		if i := strings.Index(body, " #"); i >= 0 { // a further comment follows
			body = body[:i]
		}
		rulesPart, reason, _ := strings.Cut(body, "--")
		d := graph.Directive{
			Pos: graph.Position{File: file, Line: i + 1, Column: utf8.RuneCountInString(line[:loc[0]]) + 1,
				EndLine: i + 1, EndColumn: utf8.RuneCountInString(line) + 1},
			Reason: strings.TrimSpace(reason),
		}
		d.Rules = strings.FieldsFunc(rulesPart, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if strings.TrimSpace(line[:loc[0]]) != "" {
			d.Line = i + 1
		} else {
			d.Line = i + 2
			for j := i + 1; j < len(lines); j++ {
				t := strings.TrimSpace(string(lines[j]))
				if t != "" && !strings.HasPrefix(t, "#") {
					d.Line = j + 1
					break
				}
			}
		}
		out = append(out, d)
	}
	return out
}

// inComment reports whether the '#' at index i of line starts a YAML comment:
// at the line start or after whitespace, and not inside a quoted string.
func inComment(line string, i int) bool {
	if i > 0 && line[i-1] != ' ' && line[i-1] != '\t' {
		return false
	}
	inS, inD := false, false
	for j := 0; j < i; j++ {
		switch line[j] {
		case '\'':
			if !inD {
				inS = !inS
			}
		case '"':
			if !inS {
				inD = !inD
			}
		case '\\':
			if inD {
				j++
			}
		}
	}
	return !inS && !inD
}
