package fastyaml

// mapping parses a block mapping whose keys sit at column indent. first, when
// not empty, is the rest of a sequence entry's line that opens the mapping
// (`- key: value`); it has already been consumed.
func (p *parser) mapping(indent int, first string, depth int) (map[string]any, bool) {
	sel := p.sel // the keys to keep, set by the caller for this mapping only
	p.sel = nil
	if depth > maxDepth || !p.node() {
		return nil, false
	}
	at := p.open(EvMap)
	mark, kmark := len(p.pairs), len(p.keys)
	parsed := 0
	if first != "" {
		if !p.entry(first, indent, depth, sel) {
			return nil, false
		}
		parsed++
	}
	for {
		l, found := p.peek()
		if !found || l.indent < indent {
			break
		}
		if l.indent > indent {
			return nil, false
		}
		p.consume(l)
		if !p.entry(l.text(p.src), indent, depth, sel) {
			return nil, false
		}
		parsed++
	}
	if p.failed || parsed == 0 || !p.distinctKeys(kmark) {
		return nil, false
	}
	entries := p.pairs[mark:]
	if p.skip > 0 || p.taped() {
		// A value nobody selected, or one on a tape: parsed to move past
		// it, never built.
		clear(entries)
		p.pairs = p.pairs[:mark]
		p.close(at)
		return nil, true
	}
	m := p.newMap(len(entries))
	for _, e := range entries {
		m[e.key] = e.val
	}
	n := len(entries)
	clear(entries)
	p.pairs = p.pairs[:mark]
	if len(m) != n {
		return nil, false // a duplicate key: the slow path reports it
	}
	return m, true
}

// entry parses one `key: value` of a block mapping at column indent; t is the
// line from the key on.
// sel, when not nil, selects the keys to keep (see Fields).
func (p *parser) entry(t string, indent, depth int, sel *Fields) bool {
	key, rest, ok := p.key(t)
	if !ok {
		return false
	}
	if sel != nil || p.skip > 0 || p.taped() {
		p.keys = append(p.keys, key) // dropped (or unbuilt) keys are checked for duplicates too
	}
	keep := true
	if sel != nil {
		var sub *Fields
		sub, keep = sel.Sub[key]
		if !keep && sel.Any != nil {
			sub, keep = sel.Any, true
		}
		p.sel = sub
	}
	if !keep && p.trusted {
		p.sel = nil
		p.skipValue(rest, indent)
		return true
	}
	if !keep {
		p.skip++
	} else if p.tape != nil && p.skip == 0 {
		p.text(EvKey, key)
	}
	v, ok := p.blockValue(rest, 0, indent, depth, true)
	p.sel = nil
	if !keep {
		p.skip--
		return ok
	}
	if !ok {
		return false
	}
	if p.tape == nil { // a tape has the entry already
		p.pairs = append(p.pairs, pair{key, v})
	}
	return true
}

// skipValue moves past the value of a mapping key at column indent, rest
// being what follows its colon, in a document known to be accepted: the
// value is whatever follows up to the next line with content at most as
// indented as the key, but for a sequence at the key's own column when the
// value starts on the next line. Blank and comment-only lines belong to no
// value (nor do they inside an accepted block scalar: one that ends there
// would have left the following lines to its parent).
func (p *parser) skipValue(rest string, indent int) {
	j := skipSpaces(rest)
	inline := j < len(rest) && rest[j] != '#'
	pos := p.pos
	for pos < len(p.src) {
		l := p.rawLine(pos)
		t := l.text(p.src)
		if t == "" || t[0] == '#' || l.indent > indent || !inline && l.indent == indent && isEntry(t) {
			pos = l.next
			continue
		}
		break
	}
	p.pos = pos
}

// key splits `key: rest` into the key's value and what follows the colon.
func (p *parser) key(t string) (key, rest string, ok bool) {
	switch t[0] {
	case '"', '\'':
		k, after, ok := p.quoted(t)
		if !ok {
			return "", "", false
		}
		i := 0
		for i < len(after) && after[i] == ' ' {
			i++
		}
		if i == len(after) || after[i] != ':' || i+1 < len(after) && after[i+1] != ' ' {
			return "", "", false
		}
		if len(t)-len(after)+i > maxKeyLen || k == "<<" {
			return "", "", false
		}
		return k, after[i+1:], true
	}
	if !plainStart(t, false) {
		return "", "", false
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '#':
			if t[i-1] == ' ' {
				return "", "", false // a comment before any colon
			}
		case ':':
			if i+1 == len(t) || t[i+1] == ' ' {
				if i > maxKeyLen {
					return "", "", false
				}
				k := trimRight(t[:i])
				if k == "<<" || template(k) || nullWord(k) {
					return "", "", false
				}
				return k, t[i+1:], true
			}
		}
	}
	return "", "", false
}

// blockValue parses the value after a mapping key's colon (mapValue) or after
// a sequence entry's dash (rest starts at column restCol): inline on the rest
// of the line, or on the following lines. indent is the column of the
// enclosing collection.
func (p *parser) blockValue(rest string, restCol, indent, depth int, mapValue bool) (any, bool) {
	i := 0
	for i < len(rest) && rest[i] == ' ' {
		i++
	}
	if i == len(rest) || rest[i] == '#' {
		if i < len(rest) && i == 0 {
			return nil, false // `key:#` is not a comment
		}
		return p.nested(indent, depth, mapValue)
	}
	if i == 0 {
		return nil, false // no space after the indicator
	}
	t := rest[i:]
	if mapValue {
		if isEntry(t) {
			return nil, false
		}
	} else if isKeyStart(t) {
		// `- key: value`: a mapping whose keys line up after the dash.
		return p.mapping(restCol+i, t, depth+1)
	}
	var v any
	switch t[0] {
	case '|', '>':
		return p.blockScalar(t, indent)
	case '"', '\'':
		s, after, ok := p.quoted(t)
		if !ok || !p.trailer(after) || !p.node() {
			return nil, false
		}
		if p.taped() {
			p.str(s)
		} else if p.skip == 0 {
			v = s
		}
	case '[', '{':
		fv, after, ok := p.flow(t, depth+1, p.sel)
		if !ok || !p.trailer(after) {
			return nil, false
		}
		v = fv
	default:
		s, ok := p.plain(t, indent)
		if !ok || !p.node() {
			return nil, false
		}
		if p.taped() {
			p.plainScalar(s)
		} else if p.skip == 0 {
			v = Plain(s)
		}
	}
	// Nothing more indented may follow: it would continue the scalar or be
	// an error.
	if l, found := p.peek(); found && l.indent > indent {
		return nil, false
	}
	return v, !p.failed
}

// nested parses a value that starts on the next line: a block mapping or
// sequence more indented than indent, a sequence at indent itself when it
// is a mapping's value, or nothing (null).
func (p *parser) nested(indent, depth int, mapValue bool) (any, bool) {
	l, found := p.peek()
	if p.failed {
		return nil, false
	}
	if !found || l.indent < indent || l.indent == indent && (!mapValue || !isEntry(l.text(p.src))) {
		if !p.node() {
			return nil, false
		}
		p.scalar(nil)
		return nil, true
	}
	if isEntry(l.text(p.src)) {
		return p.sequence(l.indent, l.indent == indent, depth+1)
	}
	return p.mapping(l.indent, "", depth+1)
}

// sequence parses a block sequence whose dashes sit at column indent;
// indentless is set for a sequence at its parent key's column, which ends
// at the first line that is not an entry.
func (p *parser) sequence(indent int, indentless bool, depth int) ([]any, bool) {
	// Every item gets the wildcard's selection; without one, a selection
	// ends here and the items are kept whole.
	var itemSel *Fields
	if p.sel != nil {
		itemSel = p.sel.Any
	}
	p.sel = nil
	if depth > maxDepth || !p.node() {
		return nil, false
	}
	at := p.open(EvSeq)
	mark := len(p.items)
	for {
		l, found := p.peek()
		if !found || l.indent < indent {
			break
		}
		t := l.text(p.src)
		if l.indent > indent || !isEntry(t) {
			if indentless && l.indent == indent {
				break
			}
			return nil, false
		}
		p.consume(l)
		rest := t[1:]
		if j := skipSpaces(rest); j < len(rest) && isEntry(rest[j:]) {
			return nil, false // `- - a`
		}
		p.sel = itemSel
		v, ok := p.blockValue(rest, indent+1, indent, depth, false)
		p.sel = nil
		if !ok {
			return nil, false
		}
		if p.tape == nil {
			p.items = append(p.items, v)
		}
	}
	if p.failed {
		return nil, false
	}
	items := p.items[mark:]
	if p.skip > 0 || p.taped() {
		clear(items)
		p.items = p.items[:mark]
		p.close(at)
		return nil, true
	}
	out := make([]any, len(items))
	copy(out, items)
	clear(items)
	p.items = p.items[:mark]
	return out, true
}

func skipSpaces(s string) int {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// nullWord reports a plain scalar that resolves to null: as a key, kubectl
// rejects the document, which the full loader reports.
func nullWord(s string) bool {
	return s == "~" || s == "null" || s == "Null" || s == "NULL"
}

func trimRight(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// isKeyStart reports whether t (a sequence entry's content) is `key: ...`.
func isKeyStart(t string) bool {
	switch t[0] {
	case '"', '\'':
		q := t[0]
		for i := 1; i < len(t); i++ {
			if t[i] == q {
				if q == '\'' && i+1 < len(t) && t[i+1] == '\'' {
					i++
					continue
				}
				j := i + 1
				for j < len(t) && t[j] == ' ' {
					j++
				}
				return j < len(t) && t[j] == ':'
			}
			if q == '"' && t[i] == '\\' {
				i++
			}
		}
		return false
	case '[', '{', '|', '>':
		return false
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '#':
			if i > 0 && t[i-1] == ' ' {
				return false
			}
		case ':':
			if i+1 == len(t) || t[i+1] == ' ' {
				return true
			}
		}
	}
	return false
}

// blockScalar reads a literal (|) or folded (>) block scalar whose header is
// t, following yaml.v3's scanner: indentation from the first non-empty line,
// folding of lines that do not start with a space, and clip/strip/keep
// chomping. indent is the enclosing collection's column.
func (p *parser) blockScalar(t string, indent int) (any, bool) {
	literal := t[0] == '|'
	chomp := 0
	h := t[1:]
	if len(h) > 0 && (h[0] == '-' || h[0] == '+') {
		if h[0] == '-' {
			chomp = -1
		} else {
			chomp = 1
		}
		h = h[1:]
	}
	if len(h) > 0 && h[0] != ' ' {
		return nil, false // an indentation indicator or junk
	}
	if !p.trailer(h) || !p.node() {
		return nil, false
	}
	src := p.src
	pos := p.pos
	// Leading empty lines fix the indentation together with the first
	// content line.
	breaks, maxIndent := 0, 0
	for pos < len(src) {
		l := p.rawLine(pos)
		if l.indent > maxIndent {
			maxIndent = l.indent
		}
		if l.start+l.indent == l.end && l.next > l.end {
			breaks++
			pos = l.next
			continue
		}
		break
	}
	ind := max(maxIndent, indent+1, 1)
	b := p.buf[:0]
	leadingBreak, leadingBlank, lines := false, false, 0
	for pos < len(src) {
		l := p.rawLine(pos)
		hasBreak := l.next > l.end
		if l.indent < ind || l.start+ind == l.end {
			if l.start+l.indent != l.end {
				break // a less indented line ends the scalar
			}
			if !hasBreak {
				pos = l.next
				break
			}
			breaks++
			pos = l.next
			continue
		}
		text := src[l.start+ind : l.end]
		trailingBlank := text[0] == ' '
		if !literal && leadingBreak && !leadingBlank && !trailingBlank {
			if breaks == 0 {
				b = append(b, ' ')
			}
		} else if leadingBreak {
			b = append(b, '\n')
		}
		for ; breaks > 0; breaks-- {
			b = append(b, '\n')
		}
		leadingBlank = trailingBlank
		b = append(b, text...)
		leadingBreak = hasBreak
		lines++
		pos = l.next
	}
	if lines == 0 {
		return nil, false // an empty block scalar: rare, left to the slow path
	}
	if chomp != -1 && leadingBreak {
		b = append(b, '\n')
	}
	if chomp == 1 {
		for ; breaks > 0; breaks-- {
			b = append(b, '\n')
		}
	}
	p.buf = b[:0]
	p.pos = pos
	if p.skip > 0 {
		return nil, true // not selected: no copy
	}
	if p.taped() {
		p.str(string(b))
		return nil, true
	}
	return string(b), true
}
