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
//
// DecodeTapeShared accepts the same documents but records them as a Tape of
// events instead of building maps, for typed decoders (kinds.DecodeTape)
// that would only read the maps once and drop them.
package fastyaml

import (
	"encoding/binary"
	"math"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
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
	return decode(string(data), maxNodes, nil)
}

// DecodeShared is DecodeLimit without the copy of data: the strings of the
// result point into data, which the caller must never modify afterwards. The
// loader uses it on file contents it keeps unchanged for the whole run, which
// saves a second copy of every document.
func DecodeShared(data []byte, maxNodes int) (obj map[string]any, ok bool) {
	if !validText(data) {
		return nil, false
	}
	return decode(unsafe.String(unsafe.SliceData(data), len(data)), maxNodes, nil)
}

// Fields selects parts of a document to decode; a nil *Fields keeps
// everything. In a mapping with a selection only the keys in Sub are kept,
// each with its own selection, and, when Any is set, every other key too,
// with the selection Any. Any is the wildcard: a computed key or index
// (spec.http[*].name). In a sequence Any is the selection of every item; a
// sequence whose selection has no Any is kept whole, so the result may hold
// more than was selected, never less. Block and flow collections are
// selected alike.
//
// A selection is read, never modified, by concurrent decodes, so the union a
// key named both in Sub and by Any needs is the caller's to compute once:
// when Any is set, Sub[k] must already hold everything Any does.
// The wildcard's own selection is never nil: a wildcard over whole values
// makes the node whole, which nil already says.
type Fields struct {
	Sub map[string]*Fields
	Any *Fields
}

// DecodeSharedFields is DecodeShared keeping only the selected fields. The
// parts not selected are parsed to find where they end but never built, which
// makes re-reading a few fields of a document cheap. It accepts exactly the
// documents Decode accepts, but for Decode's node budget, which it does not
// apply: the parts not selected are checked as strictly (duplicate keys
// included), and the selected fields equal Decode's.
func DecodeSharedFields(data []byte, sel *Fields) (obj map[string]any, ok bool) {
	if !validText(data) {
		return nil, false
	}
	return decode(unsafe.String(unsafe.SliceData(data), len(data)), math.MaxInt, sel)
}

// DecodeAcceptedFields is DecodeSharedFields for a document Decode (or
// DecodeShared) has accepted before, as the loader's fast path did: knowing
// the document is in the subset, it skips a value nobody selected by its
// indentation instead of parsing it, which is most of the work of reading a
// few fields again. The selected fields equal DecodeSharedFields'. On a
// document Decode declines the result is unspecified (never a panic).
func DecodeAcceptedFields(data []byte, sel *Fields) (obj map[string]any, ok bool) {
	if sel == nil {
		return DecodeSharedFields(data, nil)
	}
	return decodeTrusted(unsafe.String(unsafe.SliceData(data), len(data)), sel)
}

func decode(src string, maxNodes int, sel *Fields) (obj map[string]any, ok bool) {
	return decodeWith(src, maxNodes, sel, false)
}

func decodeTrusted(src string, sel *Fields) (obj map[string]any, ok bool) {
	return decodeWith(src, math.MaxInt, sel, true)
}

func decodeWith(src string, maxNodes int, sel *Fields, trusted bool) (obj map[string]any, ok bool) {
	p := scratch.Get().(*parser)
	defer p.release()
	return p.decode(src, maxNodes, sel, trusted)
}

// decode is decodeWith on p.
func (p *parser) decode(src string, maxNodes int, sel *Fields, trusted bool) (obj map[string]any, ok bool) {
	clear(p.made)
	*p = parser{src: src, budget: maxNodes, pairs: p.pairs[:0], items: p.items[:0], keys: p.keys[:0], buf: p.buf[:0], free: p.free, made: p.made[:0], sel: sel, trusted: trusted}
	root, good := p.document()
	if !good {
		return nil, false
	}
	m, isMap := root.(map[string]any)
	if !isMap {
		return nil, false
	}
	p.last = mapID(m)
	return m, true
}

// document parses the whole document: its root mapping, block or flow. On a
// tape the root is recorded there and the value returned is nil.
func (p *parser) document() (any, bool) {
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
		v, rest, good := p.flow(l.text(p.src), 0, p.sel)
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
	return root, true
}

// mapID is the identity of a map (maps are not comparable).
func mapID(m map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

// validText accepts only what yaml.v3's reader accepts and this package
// handles: valid UTF-8 of printable characters, no tabs, no byte order mark,
// no line breaks other than LF and CRLF (NEL, LS and PS are breaks to YAML).
func validText(data []byte) bool {
	for i := 0; i < len(data); {
		if i+8 <= len(data) && plainWord(binary.LittleEndian.Uint64(data[i:])) {
			i += 8 // the common case, eight bytes at a time
			continue
		}
		var ok bool
		if i, ok = validStep(data, i); !ok {
			return false
		}
	}
	return true
}

// validStep checks the character at data[i] as validText does and returns
// the index of the next one.
func validStep(data []byte, i int) (next int, ok bool) {
	c := data[i]
	if c >= 0x20 && c < 0x7f || c == '\n' {
		return i + 1, true
	}
	if c == '\r' {
		return i + 2, i+1 < len(data) && data[i+1] == '\n'
	}
	if c < 0x80 {
		return i, false // tab, other C0 controls, DEL
	}
	r, size := utf8.DecodeRune(data[i:])
	if r == utf8.RuneError && size <= 1 {
		return i, false
	}
	switch {
	case r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFEFF, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
		return i, false
	}
	return i + size, true
}

// plainWord reports whether the eight bytes of w are all printable ASCII
// (0x20 to 0x7e) or LF, which validText accepts one by one. Each test is
// exact per byte once no byte has its high bit set: adding 0x60 sets the
// high bit of a byte from 0x20 up, adding 1 that of 0x7f, and the zero
// test of w^0x0a (carry-free: the high bits are masked first) finds LF.
func plainWord(w uint64) bool {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
		m7 = 0x7f7f7f7f7f7f7f7f
	)
	if w&hi != 0 {
		return false // a byte from 0x80: UTF-8 or not, one by one
	}
	ge20 := (w + 0x60*lo) & hi
	x := w ^ 0x0a*lo
	lf := ^((x&m7 + m7) | x) & hi
	del := (w + lo) & hi
	return ^ge20&hi&^lf == 0 && del == 0
}

// scratch recycles parsers for their scratch slices, which grow to the
// widest mapping and sequence seen and are reused by later documents.
var scratch = sync.Pool{New: func() any { return new(parser) }}

// release clears what the parser still references and returns it to scratch.
func (p *parser) release() {
	clear(p.pairs[:cap(p.pairs)])
	clear(p.items[:cap(p.items)])
	clear(p.keys[:cap(p.keys)])
	if cap(p.buf) > 64<<10 {
		p.buf = nil // a huge block scalar: do not keep its buffer
	}
	if cap(p.made) > 1<<14 {
		p.made, p.last = nil, nil // a huge document: do not keep the list
	}
	p.src = ""
	p.tape = nil
	scratch.Put(p)
}

// Small maps (at most smallMap entries) are what Recycle keeps: a Go map
// that small is one allocation of fixed size, so a recycled one fits any
// small mapping without growing or wasting room. maxFree bounds what one
// parser keeps.
const (
	smallMap = 8
	maxFree  = 4096
)

// Recycle hands the maps of obj, a result of Decode, DecodeShared or
// DecodeSharedFields, back to later decodes, which fill them instead of
// allocating new ones: the loader decodes every document into generic values
// only to decode those into typed objects, and the maps were most of what it
// allocated. The caller must hold the only reference to obj and to every map
// and list inside it, and use none of them afterwards (strings and scalars
// may be kept: they are never reused).
func Recycle(obj map[string]any) {
	p := scratch.Get().(*parser)
	p.recycleResult(obj)
	scratch.Put(p)
}

// recycleResult is Recycle on p. Only the parser that decoded obj (usually
// the one the pool gives back: it is per CPU) reuses its maps, which its
// record of that decode (made, last) lists. Any other parser leaves them to
// the collector: the decoding parser still holds that record until its next
// decode, so maps another parser reused could later be handed out again
// through it, and two documents would share a map (two mappings of one
// document filling the same map declined it, or gave it the other's values).
func (p *parser) recycleResult(obj map[string]any) {
	if p.last == nil || p.last != mapID(obj) {
		return
	}
	for _, m := range p.made {
		p.keep(m)
	}
	clear(p.made)
	p.made, p.last = p.made[:0], nil
}

// keep adds an unreferenced map to the free list if it is small.
func (p *parser) keep(m map[string]any) {
	if len(m) <= smallMap && len(p.free) < maxFree {
		clear(m)
		p.free = append(p.free, m)
	}
}

// newMap returns an empty map for n entries, a recycled one when n is small.
func (p *parser) newMap(n int) map[string]any {
	var m map[string]any
	switch k := len(p.free); {
	case n > smallMap:
		m = make(map[string]any, n)
	case k > 0:
		m = p.free[k-1]
		p.free[k-1] = nil
		p.free = p.free[:k-1]
	default:
		m = make(map[string]any, smallMap)
	}
	p.made = append(p.made, m)
	return m
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
	pairs  []pair           // entries of the mappings being built, innermost last
	items  []any            // items of the sequences being built, innermost last
	keys   []string         // keys of the mappings being filtered, innermost last
	buf    []byte           // scratch for scalars that need rewriting
	free   []map[string]any // empty small maps handed back by Recycle
	// made lists the maps the last decode built, and last is its result's
	// root when it succeeded: Recycle of that result takes them from here
	// instead of walking the result.
	made   []map[string]any
	last   unsafe.Pointer
	cache  line // the line peek found last, valid while it starts at pos
	cached bool
	sel    *Fields // the selection for the next block mapping (nil: all keys)
	// trusted is set when the document is known to be accepted (see
	// DecodeAcceptedFields): values not selected are skipped, not parsed.
	trusted bool
	skip    int // > 0 while parsing a value that is not selected
	// tape, when set, receives the document's events (DecodeTapeShared):
	// collections are recorded there and never built.
	tape *Tape
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

// distinctKeys reports whether the keys recorded since mark, those of a
// mapping whose map is not built or lacks the keys not selected, hold no
// duplicate, which Decode declines; it drops them. Mappings are small, so
// comparing pairs beats building a set.
func (p *parser) distinctKeys(mark int) bool {
	keys := p.keys[mark:]
	ok := true
	if len(keys) > 16 {
		seen := make(map[string]struct{}, len(keys))
		for _, k := range keys {
			seen[k] = struct{}{}
		}
		ok = len(seen) == len(keys)
	} else {
	pairs:
		for i := 1; i < len(keys); i++ {
			for _, k := range keys[:i] {
				if k == keys[i] {
					ok = false
					break pairs
				}
			}
		}
	}
	clear(keys)
	p.keys = p.keys[:mark]
	return ok
}

// isEntry reports whether t starts a block sequence entry ("-" then a space
// or the end of the line).
func isEntry(t string) bool {
	return t[0] == '-' && (len(t) == 1 || t[1] == ' ')
}
