package fastyaml

import (
	"strings"
)

// flow parses a flow collection that closes on its line, t starting at its
// bracket, and returns it with what follows. sel selects its parts as in a
// block collection (see Fields).
func (p *parser) flow(t string, depth int, sel *Fields) (any, string, bool) {
	if depth > maxDepth || !p.node() {
		return nil, "", false
	}
	closer, kind := byte(']'), EvSeq
	if t[0] == '{' {
		closer, kind = '}', EvMap
	}
	i := 1 + skipSpaces(t[1:])
	if i == len(t) {
		return nil, "", false // continues on the next line
	}
	at := p.open(kind)
	if t[i] == closer {
		p.close(at)
		switch {
		case p.skip > 0 || p.taped():
			return nil, t[i+1:], true
		case closer == '}':
			return map[string]any{}, t[i+1:], true
		}
		return []any{}, t[i+1:], true
	}
	mark, imark, kmark := len(p.pairs), len(p.items), len(p.keys)
	for {
		var key string
		var sub *Fields // the selection of the value: nil keeps it whole
		keep := true
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
			if sel != nil || p.skip > 0 || p.taped() {
				p.keys = append(p.keys, key) // dropped (or unbuilt) keys are checked for duplicates too
			}
			if sel != nil {
				sub, keep = sel.Sub[key]
				if !keep && sel.Any != nil {
					sub, keep = sel.Any, true
				}
			}
		} else if sel != nil {
			sub = sel.Any
		}
		if !keep {
			p.skip++
		} else if closer == '}' && p.tape != nil && p.skip == 0 {
			p.text(EvKey, key)
		}
		v, rest, ok := p.flowValue(t[i:], depth, sub)
		if !keep {
			p.skip--
		}
		if !ok {
			return nil, "", false
		}
		i = len(t) - len(rest)
		switch {
		case !keep, p.tape != nil:
		case closer == '}':
			p.pairs = append(p.pairs, pair{key, v})
		default:
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
	if !p.distinctKeys(kmark) {
		return nil, "", false
	}
	if p.skip > 0 || p.taped() { // not selected (or on a tape): parsed, never built
		p.close(at)
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
	m := p.newMap(len(entries))
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

// flowValue parses one value of a flow collection, t starting at it, and
// returns it with what follows; sel selects the parts of a nested collection.
// A value not selected is parsed and counted but not built.
func (p *parser) flowValue(t string, depth int, sel *Fields) (any, string, bool) {
	if c := t[0]; c == '[' || c == '{' {
		return p.flow(t, depth+1, sel)
	}
	s, rest, ok := p.flowScalar(t, false)
	if !ok || !p.node() {
		return nil, "", false
	}
	switch {
	case p.skip > 0:
		return nil, rest, true
	case p.taped():
		if t[0] == '"' || t[0] == '\'' {
			p.str(s)
		} else {
			p.plainScalar(s)
		}
		return nil, rest, true
	case t[0] == '"' || t[0] == '\'':
		return s, rest, true
	}
	return Plain(s), rest, true
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
					k := trimRight(t[:i])
					return k, t[i+1:], !nullWord(k)
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
