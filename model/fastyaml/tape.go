package fastyaml

import (
	"math"
	"unsafe"
)

// EventKind is what one Event of a Tape records.
type EventKind uint8

// The events of a tape. A mapping is EvMap followed, for each entry, by EvKey
// and the events of its value; a sequence is EvSeq followed by the events of
// its items; a scalar is one event of a scalar kind (EvNull to EvString).
const (
	EvNull   EventKind = iota // a null
	EvBool                    // a bool (Tape.Scalar)
	EvInt                     // an int64 (Tape.Scalar)
	EvFloat                   // a float64 (Tape.Scalar)
	EvString                  // a string (Tape.Str)
	EvMap                     // End is the index after the mapping's last event
	EvSeq                     // End is the index after the sequence's last event
	EvKey                     // Tape.Str is the key; its value's events follow
)

// IsScalar reports whether k is one of the scalar kinds.
func (k EventKind) IsScalar() bool { return k < EvMap }

// Event is one step of a Tape. It holds no pointer: a string is an offset
// into the document (or into the tape's own strings), a number its bits, so
// recording and dropping events costs the collector nothing.
type Event struct {
	Kind EventKind
	End  int    // EvMap and EvSeq: the index of the event after the collection
	off  int32  // EvKey, EvString: offset in src, or -1-index in strs
	n    int32  // EvKey, EvString: length
	num  uint64 // EvBool: 0 or 1; EvInt: int64 bits; EvFloat: float64 bits
}

// Tape is a document as the events of a depth-first walk of the value Decode
// would return, without that value's maps and lists: a typed decoder reads a
// document from it without building (and hashing) the generic maps first.
// Reuse one Tape for many documents: DecodeTapeShared overwrites it.
type Tape struct {
	Events []Event
	src    string   // the document
	strs   []string // strings that are not substrings of src (unescaped, folded)
}

// IsNull reports whether event i is a null scalar.
func (t *Tape) IsNull(i int) bool { return t.Events[i].Kind == EvNull }

// Str is the key of an EvKey event or the value of an EvString one.
func (t *Tape) Str(i int) string {
	e := &t.Events[i]
	if e.off < 0 {
		return t.strs[-1-int(e.off)]
	}
	return t.src[e.off : e.off+e.n]
}

// Scalar is the generic value of the scalar at event i, as Decode gives it
// (nil for a null, and for a collection).
func (t *Tape) Scalar(i int) any {
	e := &t.Events[i]
	switch e.Kind {
	case EvBool:
		return e.num != 0
	case EvInt:
		return int64(e.num)
	case EvFloat:
		return math.Float64frombits(e.num)
	case EvString:
		return t.Str(i)
	}
	return nil
}

// Bool is the value of the EvBool event i (Scalar without the interface).
func (t *Tape) Bool(i int) bool { return t.Events[i].num != 0 }

// Int is the value of the EvInt event i (Scalar without the interface).
func (t *Tape) Int(i int) int64 { return int64(t.Events[i].num) }

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
			m[t.Str(j)] = t.Value(j + 1)
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
		if t.Str(j) == key {
			return j + 1
		}
	}
	return -1
}

// Reset drops what t references, keeping its room.
func (t *Tape) Reset() {
	t.Events = t.Events[:0]
	clear(t.strs)
	t.strs = t.strs[:0]
	t.src = ""
}

// DecodeTapeShared is DecodeShared recording the document on t instead of
// building its value: it accepts exactly the documents DecodeShared accepts
// (with maxNodes as its budget), and then t.Value(0) equals DecodeShared's
// result, a mapping. The strings on t point into data, which the caller must
// never modify afterwards. On false t holds nothing of use.
func DecodeTapeShared(data []byte, maxNodes int, t *Tape) bool {
	t.Reset()
	if len(data) > math.MaxInt32 || !validText(data) {
		return false // offsets are int32
	}
	p := scratch.Get().(*parser)
	defer p.release()
	clear(p.made)
	t.src = unsafe.String(unsafe.SliceData(data), len(data))
	*p = parser{src: t.src, budget: maxNodes, pairs: p.pairs[:0], items: p.items[:0], keys: p.keys[:0], buf: p.buf[:0], free: p.free, made: p.made[:0], tape: t}
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

// scalar records a scalar's generic value on the tape, if there is one.
func (p *parser) scalar(v any) {
	if p.tape == nil || p.skip > 0 {
		return
	}
	e := Event{Kind: EvNull}
	switch v := v.(type) {
	case string:
		p.str(v)
		return
	case bool:
		e.Kind = EvBool
		if v {
			e.num = 1
		}
	case int64:
		e.Kind, e.num = EvInt, uint64(v)
	case float64:
		e.Kind, e.num = EvFloat, math.Float64bits(v)
	}
	p.tape.Events = append(p.tape.Events, e)
}

// str records a string scalar on the tape, if there is one.
func (p *parser) str(s string) { p.text(EvString, s) }

// text records a key or a string on the tape, if there is one: as its place
// in the document when it is a part of it, else among the tape's strings.
func (p *parser) text(k EventKind, s string) {
	if p.tape == nil || p.skip > 0 {
		return
	}
	e := Event{Kind: k, n: int32(len(s))}
	if d := uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(unsafe.StringData(p.src))); len(s) > 0 && d < uintptr(len(p.src)) && d+uintptr(len(s)) <= uintptr(len(p.src)) {
		e.off = int32(d)
	} else if len(s) > 0 {
		e.off = int32(-1 - len(p.tape.strs))
		p.tape.strs = append(p.tape.strs, s)
	}
	p.tape.Events = append(p.tape.Events, e)
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
