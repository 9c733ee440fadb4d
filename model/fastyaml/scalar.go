package fastyaml

import (
	"unicode/utf8"
)

// plainStart reports whether t may start a plain scalar (yaml.v3's rule:
// no indicator, except -, ? and : followed by a non-space).
func plainStart(t string, flow bool) bool {
	switch t[0] {
	case '-':
		return len(t) > 1 && t[1] != ' ' && (!flow || t[1] != ',' && t[1] != ']' && t[1] != '}')
	case '?', ':':
		return !flow && len(t) > 1 && t[1] != ' '
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// plain reads a plain scalar in block context that starts with t, the rest
// of the line just consumed, and may continue on following lines more
// indented than indent (the enclosing collection's column). yaml.v3 folds
// such lines: one break becomes a space, n blank lines become n newlines. A
// `: ` inside (a mapping where none may be) or a Go template action declines.
func (p *parser) plain(t string, indent int) (string, bool) {
	if !plainStart(t, false) {
		return "", false
	}
	s, comment, ok := plainLine(t)
	if !ok {
		return "", false
	}
	joined := false
	var b []byte
	for pos, breaks := p.pos, 0; !comment && pos < len(p.src); {
		l := p.rawLine(pos)
		if l.start+l.indent == l.end {
			breaks++
			pos = l.next
			continue
		}
		ct := l.text(p.src)
		if l.indent <= indent || ct[0] == '#' || !plainStart(ct, false) || ct[0] == '-' || ct[0] == '?' || ct[0] == ':' {
			// The scalar ends; a more indented line after it is left for
			// the caller to decline.
			break
		}
		cs, cc, ok := plainLine(ct)
		if !ok {
			return "", false
		}
		if !joined {
			b = append(p.buf[:0], s...)
			joined = true
		}
		if breaks == 0 {
			b = append(b, ' ')
		}
		for ; breaks > 0; breaks-- {
			b = append(b, '\n')
		}
		b = append(b, cs...)
		comment = cc
		pos = l.next
		p.pos = pos
	}
	if joined {
		s = string(b)
		p.buf = b[:0]
	}
	if template(s) {
		return "", false
	}
	return s, true
}

// plainLine reads one line of a plain scalar: up to a comment (reported) or
// the end of the line, without trailing spaces; `: ` or a final `:` declines.
func plainLine(t string) (s string, comment, ok bool) {
	end := len(t)
	for i := 1; i < len(t); i++ {
		switch t[i] {
		case '#':
			if t[i-1] == ' ' {
				end = i
				comment = true
				i = len(t)
			}
		case ':':
			if i+1 == len(t) || t[i+1] == ' ' {
				return "", false, false
			}
		}
	}
	return trimRight(t[:end]), comment, true
}

// template reports whether a plain scalar holds a Go template action (the
// slow path reports such a file as a template). Argo Rollouts' own
// `{{args.name}}` placeholders are not actions.
func template(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '{' || s[i+1] != '{' {
			continue
		}
		j := i + 2
		if j < len(s) && s[j] == '-' {
			j++
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r' || s[j] == '\f') {
			j++
		}
		if j < len(s) && (s[j] == '.' || s[j] == '$') {
			return true
		}
		for _, kw := range templateKeywords {
			if len(s)-j >= len(kw) && s[j:j+len(kw)] == kw && (j+len(kw) == len(s) || !isWordByte(s[j+len(kw)])) {
				return true
			}
		}
	}
	return false
}

var templateKeywords = []string{"include", "template", "if", "range", "with", "end", "toYaml", "default", "quote", "printf"}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// quoted reads a single- or double-quoted scalar that closes on its line and
// returns its value and what follows the closing quote.
func (p *parser) quoted(t string) (val, after string, ok bool) {
	q := t[0]
	if q == '\'' {
		simple := true
		for i := 1; i < len(t); i++ {
			if t[i] != '\'' {
				continue
			}
			if i+1 < len(t) && t[i+1] == '\'' {
				simple = false
				i++
				continue
			}
			if simple {
				return t[1:i], t[i+1:], true
			}
			b := p.buf[:0]
			for j := 1; j < i; j++ {
				b = append(b, t[j])
				if t[j] == '\'' {
					j++
				}
			}
			p.buf = b
			return string(b), t[i+1:], true
		}
		return "", "", false
	}
	for i := 1; i < len(t); i++ {
		switch t[i] {
		case '"':
			return t[1:i], t[i+1:], true
		case '\\':
			return p.escaped(t, i)
		}
	}
	return "", "", false
}

// escaped finishes a double-quoted scalar t whose first backslash is at i.
func (p *parser) escaped(t string, i int) (val, after string, ok bool) {
	b := append(p.buf[:0], t[1:i]...)
	defer func() { p.buf = b[:0] }()
	for ; i < len(t); i++ {
		c := t[i]
		if c == '"' {
			return string(b), t[i+1:], true
		}
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i+1 == len(t) {
			return "", "", false // an escaped line break
		}
		i++
		n := 0
		switch t[i] {
		case '0':
			b = append(b, 0)
		case 'a':
			b = append(b, '\a')
		case 'b':
			b = append(b, '\b')
		case 't':
			b = append(b, '\t')
		case 'n':
			b = append(b, '\n')
		case 'v':
			b = append(b, '\v')
		case 'f':
			b = append(b, '\f')
		case 'r':
			b = append(b, '\r')
		case 'e':
			b = append(b, 0x1b)
		case ' ', '"', '\'', '\\':
			b = append(b, t[i])
		case 'N':
			b = append(b, "\u0085"...)
		case '_':
			b = append(b, "\u00a0"...)
		case 'L':
			b = append(b, "\u2028"...)
		case 'P':
			b = append(b, "\u2029"...)
		case 'x':
			n = 2
		case 'u':
			n = 4
		case 'U':
			n = 8
		default:
			return "", "", false // yaml.v3 rejects it (even `\/`)
		}
		if n == 0 {
			continue
		}
		if i+n >= len(t) {
			return "", "", false
		}
		r := 0
		for k := 1; k <= n; k++ {
			d := hexDigit(t[i+k])
			if d < 0 {
				return "", "", false
			}
			r = r<<4 | d
		}
		if r >= 0xD800 && r <= 0xDFFF || r > 0x10FFFF {
			return "", "", false
		}
		b = utf8.AppendRune(b, rune(r))
		i += n
	}
	return "", "", false
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
