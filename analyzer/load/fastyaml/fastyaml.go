// Package fastyaml decodes the common subset of YAML that Kubernetes
// manifests are written in straight into generic values (map[string]any,
// []any, string, int64, float64, bool, nil), without building a yaml.Node
// tree. It is exact or it declines: whenever Decode says ok, its result equals
// what the loader's slow path (yaml.v3 nodes, then conversion) returns and the
// slow path would have found no problem in the document; on anything unusual
// it returns ok == false and the caller takes the slow path.
//
// The subset: block mappings and sequences (compact `- key: value` entries and
// sequences at their key's own indentation included); plain scalars, also
// when folded over more indented lines; single- and double-quoted scalars on
// one line; literal and folded block scalars with any chomping but no
// indentation indicator; flow collections that close on their line; comments,
// blank lines, a leading `---` line and CRLF line ends. Anchors, aliases,
// tags, complex and merge keys, directives, tabs, multi-line quoted scalars
// and flow collections, Go template actions, duplicate keys and anything the
// parser does not recognise are declined.
package fastyaml

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultMaxNodes is the node budget Decode applies; it equals the loader's
// default limit, above which the slow path reports the document instead of
// decoding it.
const DefaultMaxNodes = 1_000_000

// maxDepth bounds nesting (block and flow). Real manifests nest about 15
// levels; deeper documents go to the slow path, which knows the real limit.
const maxDepth = 100

// maxKeyLen keeps implicit keys well inside YAML's 1024-character limit for
// the distance from a key's start to its colon.
const maxKeyLen = 1000

// Decode parses one document chunk (as load's splitDocuments cuts a file: it
// may start with a `---` line) and returns its root mapping as generic values,
// exactly what load's slow path (yaml.v3 Node + converter.value) returns, or
// ok == false when it cannot promise that.
func Decode(data []byte) (obj map[string]any, ok bool) {
	return DecodeLimit(data, DefaultMaxNodes)
}

// DecodeLimit is Decode with the loader's node budget: it declines documents
// whose conversion would visit more than maxNodes nodes, which the slow path
// reports as over the limit.
func DecodeLimit(data []byte, maxNodes int) (obj map[string]any, ok bool) {
	if !validText(data) {
		return nil, false
	}
	p := scratch.Get().(*parser)
	defer p.release()
	*p = parser{src: string(data), budget: maxNodes, pairs: p.pairs[:0], items: p.items[:0], buf: p.buf[:0]}
	if !p.documentStart() {
		return nil, false
	}
	l, found := p.peek()
	if !found {
		return nil, false // empty or comment-only: the slow path says so
	}
	var root any
	if l.text(p.src)[0] == '{' {
		// A one-line flow mapping as the whole document (JSON on one line).
		p.consume(l)
		v, rest, good := p.flow(l.text(p.src), 0)
		if !good || !p.trailer(rest) {
			return nil, false
		}
		root = v
	} else {
		v, good := p.mapping(l.indent, "", 0)
		if !good {
			return nil, false
		}
		root = v
	}
	if _, more := p.peek(); more || p.failed {
		return nil, false
	}
	m, isMap := root.(map[string]any)
	if !isMap {
		return nil, false
	}
	return m, true
}

// validText accepts only what yaml.v3's reader accepts and this package
// handles: valid UTF-8 of printable characters, no tabs, no byte order mark,
// no line breaks other than LF and CRLF (NEL, LS and PS are breaks to YAML).
func validText(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c >= 0x20 && c < 0x7f || c == '\n' {
			i++
			continue
		}
		if c == '\r' {
			if i+1 < len(data) && data[i+1] == '\n' {
				i += 2
				continue
			}
			return false
		}
		if c < 0x80 {
			return false // tab, other C0 controls, DEL
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		switch {
		case r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFEFF, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			return false
		}
		i += size
	}
	return true
}

// scratch recycles parsers for their scratch slices, which grow to the
// widest mapping and sequence seen and are reused by later documents.
var scratch = sync.Pool{New: func() any { return new(parser) }}

// release clears what the parser still references and returns it to scratch.
func (p *parser) release() {
	clear(p.pairs[:cap(p.pairs)])
	clear(p.items[:cap(p.items)])
	if cap(p.buf) > 64<<10 {
		p.buf = nil // a huge block scalar: do not keep its buffer
	}
	p.src = ""
	scratch.Put(p)
}

// line is one line of the document: [start, end) without its line break.
type line struct {
	start, end int
	next       int // offset of the following line
	indent     int // leading spaces
}

func (l line) text(src string) string { return src[l.start+l.indent : l.end] }

// parser walks the document line by line. Scalars are substrings of src, so
// most of them cost no copy.
type parser struct {
	src    string
	pos    int // offset of the first line not yet consumed
	budget int // nodes left, as the slow path's converter counts them
	failed bool
	pairs  []pair // entries of the mappings being built, innermost last
	items  []any  // items of the sequences being built, innermost last
	buf    []byte // scratch for scalars that need rewriting
	cache  line   // the line peek found last, valid while it starts at pos
	cached bool
}

type pair struct {
	key string
	val any
}

// rawLine returns the line starting at off.
func (p *parser) rawLine(off int) line {
	end, next := len(p.src), len(p.src)
	if i := strings.IndexByte(p.src[off:], '\n'); i >= 0 {
		end, next = off+i, off+i+1
	}
	if end > off && p.src[end-1] == '\r' {
		end--
	}
	l := line{start: off, end: end, next: next}
	for l.start+l.indent < end && p.src[l.start+l.indent] == ' ' {
		l.indent++
	}
	return l
}

// peek returns the next line with content, skipping blank and comment-only
// lines, without consuming it. A document marker there cannot be handled.
func (p *parser) peek() (line, bool) {
	if p.cached && p.cache.start == p.pos {
		return p.cache, true
	}
	for off := p.pos; off < len(p.src); {
		l := p.rawLine(off)
		t := l.text(p.src)
		if t == "" || t[0] == '#' {
			off = l.next
			p.pos = off // blank lines are never needed again
			continue
		}
		if l.indent == 0 && (isMarker(t, "---") || isMarker(t, "...") || t[0] == '%') {
			p.failed = true
			return line{}, false
		}
		p.cache, p.cached = l, true
		return l, true
	}
	return line{}, false
}

func (p *parser) consume(l line) { p.pos = l.next }

func isMarker(t, m string) bool {
	return len(t) >= 3 && t[:3] == m && (len(t) == 3 || t[3] == ' ')
}

// documentStart consumes a leading `---` line, which may carry only a comment.
func (p *parser) documentStart() bool {
	l := p.rawLine(0)
	t := p.src[l.start:l.end]
	if !isMarker(t, "---") {
		return true
	}
	p.pos = l.next
	return p.trailer(t[3:])
}

// trailer accepts what may follow a complete value on its line: spaces and
// an optional comment after at least one space.
func (p *parser) trailer(rest string) bool {
	i := 0
	for i < len(rest) && rest[i] == ' ' {
		i++
	}
	return i == len(rest) || i > 0 && rest[i] == '#'
}

// node counts one node against the budget, as the slow path's converter does.
func (p *parser) node() bool {
	p.budget--
	if p.budget < 0 {
		p.failed = true
		return false
	}
	return true
}

// isEntry reports whether t starts a block sequence entry ("-" then a space
// or the end of the line).
func isEntry(t string) bool {
	return t[0] == '-' && (len(t) == 1 || t[1] == ' ')
}

// mapping parses a block mapping whose keys sit at column indent. first, when
// not empty, is the rest of a sequence entry's line that opens the mapping
// (`- key: value`); it has already been consumed.
func (p *parser) mapping(indent int, first string, depth int) (map[string]any, bool) {
	if depth > maxDepth || !p.node() {
		return nil, false
	}
	mark := len(p.pairs)
	if first != "" {
		if !p.entry(first, indent, depth) {
			return nil, false
		}
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
		if !p.entry(l.text(p.src), indent, depth) {
			return nil, false
		}
	}
	if p.failed {
		return nil, false
	}
	entries := p.pairs[mark:]
	m := make(map[string]any, len(entries))
	for _, e := range entries {
		m[e.key] = e.val
	}
	n := len(entries)
	clear(entries)
	p.pairs = p.pairs[:mark]
	if len(m) != n || n == 0 {
		return nil, false // a duplicate key: the slow path reports it
	}
	return m, true
}

// entry parses one `key: value` of a block mapping at column indent; t is the
// line from the key on.
func (p *parser) entry(t string, indent, depth int) bool {
	key, rest, ok := p.key(t)
	if !ok {
		return false
	}
	v, ok := p.blockValue(rest, 0, indent, depth, true)
	if !ok {
		return false
	}
	p.pairs = append(p.pairs, pair{key, v})
	return true
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
				if k == "<<" || template(k) {
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
		v = s
	case '[', '{':
		fv, after, ok := p.flow(t, depth+1)
		if !ok || !p.trailer(after) {
			return nil, false
		}
		v = fv
	default:
		s, ok := p.plain(t, indent)
		if !ok || !p.node() {
			return nil, false
		}
		v = Plain(s)
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
	if !found || l.indent < indent || l.indent == indent && !(mapValue && isEntry(l.text(p.src))) {
		if !p.node() {
			return nil, false
		}
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
	if depth > maxDepth || !p.node() {
		return nil, false
	}
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
		v, ok := p.blockValue(rest, indent+1, indent, depth, false)
		if !ok {
			return nil, false
		}
		p.items = append(p.items, v)
	}
	if p.failed {
		return nil, false
	}
	items := p.items[mark:]
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
	return string(b), true
}
