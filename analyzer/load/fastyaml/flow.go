package fastyaml

import (
	"strings"
)

// flow parses a flow collection that closes on its line, t starting at its
// bracket, and returns it with what follows.
func (p *parser) flow(t string, depth int) (any, string, bool) {
	if depth > maxDepth || !p.node() {
		return nil, "", false
	}
	closer := byte(']')
	if t[0] == '{' {
		closer = '}'
	}
	i := 1 + skipSpaces(t[1:])
	if i == len(t) {
		return nil, "", false // continues on the next line
	}
	if t[i] == closer {
		if closer == '}' {
			return map[string]any{}, t[i+1:], true
		}
		return []any{}, t[i+1:], true
	}
	mark, imark := len(p.pairs), len(p.items)
	for {
		var key string
		if closer == '}' {
			k, rest, ok := p.flowScalar(t[i:], true)
			if !ok {
				return nil, "", false
			}
			key = k
			i = len(t) - len(rest)
			i += skipSpaces(t[i:])
			if i == len(t) || t[i] == ',' || t[i] == '}' || key == "<<" {
				return nil, "", false // a key without a value
			}
		}
		var v any
		switch c := t[i]; c {
		case '[', '{':
			fv, rest, ok := p.flow(t[i:], depth+1)
			if !ok {
				return nil, "", false
			}
			v, i = fv, len(t)-len(rest)
		default:
			s, rest, ok := p.flowScalar(t[i:], false)
			if !ok || !p.node() {
				return nil, "", false
			}
			if c == '"' || c == '\'' {
				v = s
			} else {
				v = Plain(s)
			}
			i = len(t) - len(rest)
		}
		if closer == '}' {
			p.pairs = append(p.pairs, pair{key, v})
		} else {
			p.items = append(p.items, v)
		}
		i += skipSpaces(t[i:])
		if i == len(t) {
			return nil, "", false // continues on the next line
		}
		if t[i] == closer {
			i++
			break
		}
		if t[i] != ',' {
			return nil, "", false
		}
		i++
		i += skipSpaces(t[i:])
		if i == len(t) || t[i] == closer || t[i] == ',' {
			return nil, "", false // a trailing comma or an empty entry
		}
	}
	if p.skip > 0 { // not selected: parsed, never built
		clear(p.items[imark:])
		p.items = p.items[:imark]
		clear(p.pairs[mark:])
		p.pairs = p.pairs[:mark]
		return nil, t[i:], true
	}
	if closer == ']' {
		items := p.items[imark:]
		out := make([]any, len(items))
		copy(out, items)
		clear(items)
		p.items = p.items[:imark]
		return out, t[i:], true
	}
	entries := p.pairs[mark:]
	m := make(map[string]any, len(entries))
	for _, e := range entries {
		m[e.key] = e.val
	}
	n := len(entries)
	clear(entries)
	p.pairs = p.pairs[:mark]
	if len(m) != n {
		return nil, "", false
	}
	return m, t[i:], true
}

// flowScalar reads a quoted or plain scalar inside a flow collection. As a
// key (isKey) it must be followed by `:` and returns the rest after it; as a
// value it returns the rest at the `,` or closing bracket.
func (p *parser) flowScalar(t string, isKey bool) (string, string, bool) {
	if t[0] == '"' || t[0] == '\'' {
		s, rest, ok := p.quoted(t)
		if !ok {
			return "", "", false
		}
		if isKey {
			j := skipSpaces(rest)
			if j == len(rest) || rest[j] != ':' || len(s) > maxKeyLen {
				return "", "", false
			}
			return s, rest[j+1:], true
		}
		return s, rest, true
	}
	if !plainStart(t, true) {
		return "", "", false
	}
	for i := 1; i < len(t); i++ {
		switch t[i] {
		case ',', ']', '}':
			if isKey {
				return "", "", false
			}
			return trimRight(t[:i]), t[i:], true
		case ':':
			// `: ` ends a key; yaml.v3 keeps any other colon in the scalar
			// (a URL, an image tag) unless a flow indicator follows it.
			if i+1 < len(t) && t[i+1] == ' ' {
				if isKey && i <= maxKeyLen {
					return trimRight(t[:i]), t[i+1:], true
				}
				return "", "", false
			}
			if i+1 == len(t) || strings.IndexByte(",[]{}?", t[i+1]) >= 0 {
				return "", "", false
			}
		case '#':
			if t[i-1] == ' ' {
				return "", "", false // a comment inside the collection
			}
		case '[', '{', '?':
			return "", "", false
		}
	}
	return "", "", false
}
