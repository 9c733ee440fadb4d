package fastyaml

import "unsafe"

// EventKind is what one Event of a Tape records.
type EventKind uint8

// The events of a tape. A mapping is EvMap followed, for each entry, by EvKey
// and the events of its value; a sequence is EvSeq followed by the events of
// its items; a scalar is one EvScalar.
const (
	EvScalar EventKind = iota // Val holds the scalar's generic value: nil (null), bool, int64 or float64
	EvString                  // Str holds the scalar's value, a string
	EvMap                     // End is the index after the mapping's last event
	EvSeq                     // End is the index after the sequence's last event
	EvKey                     // Str holds the key; its value's events follow
)

// Event is one step of a Tape. Strings are kept out of Val, where each would
// cost an allocation.
type Event struct {
	Kind EventKind
	End  int    // EvMap and EvSeq: the index of the event after the collection
	Str  string // EvKey, EvString
	Val  any    // EvScalar: nil, bool, int64 or float64, as Decode gives it
}

// IsNull reports whether event i is a null scalar.
func (t *Tape) IsNull(i int) bool {
	e := &t.Events[i]
	return e.Kind == EvScalar && e.Val == nil
}

// Scalar is the generic value of the scalar at event i (nil for a
// collection).
func (t *Tape) Scalar(i int) any {
	e := &t.Events[i]
	if e.Kind == EvString {
		return e.Str
	}
	return e.Val
}

// Tape is a document as the events of a depth-first walk of the value Decode
// would return, without that value's maps and lists: a typed decoder reads a
// document from it without building (and hashing) the generic maps first.
// Reuse one Tape for many documents: DecodeTapeShared overwrites it.
type Tape struct {
	Events []Event
}

// Next returns the index of the event after the value that starts at i.
func (t *Tape) Next(i int) int {
	switch t.Events[i].Kind {
	case EvMap, EvSeq:
		return t.Events[i].End
	}
	return i + 1
}

// Value builds the generic value that starts at event i, equal to the same
// part of Decode's result; its maps and lists are new.
func (t *Tape) Value(i int) any {
	e := &t.Events[i]
	switch e.Kind {
	case EvMap:
		n := 0
		for j := i + 1; j < e.End; j = t.Next(j + 1) {
			n++
		}
		m := make(map[string]any, n)
		for j := i + 1; j < e.End; j = t.Next(j + 1) {
			m[t.Events[j].Str] = t.Value(j + 1)
		}
		return m
	case EvSeq:
		n := 0
		for j := i + 1; j < e.End; j = t.Next(j) {
			n++
		}
		l := make([]any, 0, n)
		for j := i + 1; j < e.End; j = t.Next(j) {
			l = append(l, t.Value(j))
		}
		return l
	}
	return t.Scalar(i)
}

// Lookup returns the index of the value of key in the mapping that starts at
// event i, or -1.
func (t *Tape) Lookup(i int, key string) int {
	if t.Events[i].Kind != EvMap {
		return -1
	}
	for j := i + 1; j < t.Events[i].End; j = t.Next(j + 1) {
		if t.Events[j].Str == key {
			return j + 1
		}
	}
	return -1
}

// Reset drops what t references, keeping its room.
func (t *Tape) Reset() {
	clear(t.Events)
	t.Events = t.Events[:0]
}

// DecodeTapeShared is DecodeShared recording the document on t instead of
// building its value: it accepts exactly the documents DecodeShared accepts
// (with maxNodes as its budget), and then t.Value(0) equals DecodeShared's
// result, a mapping. The strings on t point into data, which the caller must
// never modify afterwards. On false t holds nothing of use.
func DecodeTapeShared(data []byte, maxNodes int, t *Tape) bool {
	t.Reset()
	if !validText(data) {
		return false
	}
	p := scratch.Get().(*parser)
	defer p.release()
	clear(p.made)
	*p = parser{src: unsafe.String(unsafe.SliceData(data), len(data)), budget: maxNodes, pairs: p.pairs[:0], items: p.items[:0], keys: p.keys[:0], buf: p.buf[:0], free: p.free, made: p.made[:0], tape: t}
	_, ok := p.document()
	p.last = nil
	if !ok || len(t.Events) == 0 || t.Events[0].Kind != EvMap {
		t.Reset()
		return false
	}
	return true
}

// open starts a collection event on the tape, if there is one, and returns
// its index for close.
func (p *parser) open(k EventKind) int {
	if p.tape == nil || p.skip > 0 {
		return -1
	}
	p.tape.Events = append(p.tape.Events, Event{Kind: k})
	return len(p.tape.Events) - 1
}

// close ends the collection open started.
func (p *parser) close(at int) {
	if at >= 0 {
		p.tape.Events[at].End = len(p.tape.Events)
	}
}

// scalar records a scalar's value on the tape, if there is one.
func (p *parser) scalar(v any) {
	if p.tape != nil && p.skip == 0 {
		if s, ok := v.(string); ok {
			p.str(s)
			return
		}
		p.tape.Events = append(p.tape.Events, Event{Kind: EvScalar, Val: v})
	}
}

// str records a string scalar on the tape, if there is one.
func (p *parser) str(s string) {
	if p.tape != nil && p.skip == 0 {
		p.tape.Events = append(p.tape.Events, Event{Kind: EvString, Str: s})
	}
}

// plainScalar records a plain scalar on the tape, resolved as Plain does.
func (p *parser) plainScalar(s string) {
	if v, str := plainValue(s); str {
		p.str(s)
	} else {
		p.scalar(v)
	}
}

// taped reports whether values are recorded on a tape rather than built.
func (p *parser) taped() bool { return p.tape != nil }
