package planreport

import (
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// jsonEnc appends a Rollout's JSON already indented, the bytes
// encoding/json's Marshal followed by json.Indent would give, without
// reflection: the plan JSON of a large bundle is hundreds of megabytes, and
// the reflective encoder and the separate indentation pass cost about as
// much as planning and predicting the pushes. The field lists below mirror
// the report types' json tags (names, order, omitempty); TestEncoderMatchesJSON
// compares the two on randomly filled values of every field, so a field
// added to those types and not here fails it.
type jsonEnc struct {
	b []byte
	// nl is a line break followed by the indentation of a deep enough level.
	nl     []byte
	prefix int // len of the prefix in nl
	depth  int
	// first is set by an object's opening brace until its first key.
	first bool
	// The memos hold where in b this Rollout's encoding wrote values that
	// come again: the plan's states share their routes, labels and managed
	// routes until a step changes them, the pushes share their type lists
	// and scopes, and the same few objects are named at every step, so a
	// value met again at the same depth is copied from its first encoding
	// (rollout empties them: the offsets are into one Rollout's bytes).
	slices  [16]sliceMemo
	objects [8]objectMemo
	// nextSlice and nextObject are the entries the next value memoized
	// replaces.
	nextSlice, nextObject int
}

// sliceMemo is the encoding of a slice, e.b[off:end], named by its array,
// length and depth (and type: slices of different types may share an
// address).
type sliceMemo struct {
	ptr      unsafe.Pointer
	n, depth int
	tag      memoTag
	off, end int
}

// objectMemo is the encoding of an object, e.b[off:end], at a depth.
type objectMemo struct {
	obj      plan.Object
	depth    int
	off, end int
}

// memoTag is the type of a memoized slice.
type memoTag uint8

const (
	memoRoutes memoTag = iota + 1
	memoManaged
	memoLabels
	memoTypes
	memoStrings
)

// again appends e.b[off:end], an earlier value's encoding.
func (e *jsonEnc) again(off, end int) {
	e.b = append(e.b, e.b[off:end]...)
	e.first = false
}

// forget empties the memos.
func (e *jsonEnc) forget() {
	e.slices = [len(e.slices)]sliceMemo{}
	e.objects = [len(e.objects)]objectMemo{}
	e.nextSlice, e.nextObject = 0, 0
}

// memoArray is jsonArray of a non-empty s, memoized under tag: s's
// elements must not change while the Rollout is encoded.
func memoArray[T any](e *jsonEnc, tag memoTag, s []T, elem func(e *jsonEnc, v *T)) {
	if len(s) == 0 {
		jsonArray(e, s, elem)
		return
	}
	ptr := unsafe.Pointer(unsafe.SliceData(s))
	for i := range e.slices {
		if m := &e.slices[i]; m.ptr == ptr && m.n == len(s) && m.depth == e.depth && m.tag == tag {
			e.again(m.off, m.end)
			return
		}
	}
	off := len(e.b)
	jsonArray(e, s, elem)
	e.slices[e.nextSlice] = sliceMemo{ptr: ptr, n: len(s), depth: e.depth, tag: tag, off: off, end: len(e.b)}
	e.nextSlice = (e.nextSlice + 1) % len(e.slices)
}

const jsonIndent = "  "

// newJSONEnc returns an encoder indenting with prefix and two spaces a
// level, the way json.Indent(dst, src, prefix, "  ") does.
func newJSONEnc(prefix string) *jsonEnc {
	e := &jsonEnc{prefix: len(prefix)}
	e.nl = append(append(e.nl, '\n'), prefix...)
	for range 16 {
		e.nl = append(e.nl, jsonIndent...)
	}
	return e
}

func (e *jsonEnc) newline() {
	n := 1 + e.prefix + e.depth*len(jsonIndent)
	for n > len(e.nl) {
		e.nl = append(e.nl, jsonIndent...)
	}
	e.b = append(e.b, e.nl[:n]...)
}

// open starts an object; every object written here has at least one key.
func (e *jsonEnc) open() {
	e.b = append(e.b, '{')
	e.depth++
	e.first = true
}

func (e *jsonEnc) close() {
	e.depth--
	e.newline()
	e.b = append(e.b, '}')
	e.first = false
}

// key starts a member; lit is the quoted name followed by ": ".
func (e *jsonEnc) key(lit string) {
	n := 1 + e.prefix + e.depth*len(jsonIndent)
	for n > len(e.nl) {
		e.nl = append(e.nl, jsonIndent...)
	}
	b := e.b
	if !e.first {
		b = append(b, ',')
	}
	e.first = false
	b = append(b, e.nl[:n]...)
	e.b = append(b, lit...)
}

func (e *jsonEnc) int(v int64) { e.b = strconv.AppendInt(e.b, v, 10) }

func (e *jsonEnc) bool(v bool) { e.b = strconv.AppendBool(e.b, v) }

// jsonArray appends s as encoding/json writes a slice, indented: null when
// nil, [] when empty, each element on its own line otherwise.
func jsonArray[T any](e *jsonEnc, s []T, elem func(e *jsonEnc, v *T)) {
	if s == nil {
		e.b = append(e.b, "null"...)
		return
	}
	if len(s) == 0 {
		e.b = append(e.b, "[]"...)
		return
	}
	e.b = append(e.b, '[')
	e.depth++
	for i := range s {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.newline()
		elem(e, &s[i])
	}
	e.depth--
	e.newline()
	e.b = append(e.b, ']')
	e.first = false
}

func strElem[S ~string](e *jsonEnc, s *S) { e.str(string(*s)) }

func intElem(e *jsonEnc, v *int) { e.int(int64(*v)) }

// jsonSafe holds the bytes str copies as they are: ASCII but for control
// characters, the quote, the backslash and the HTML-sensitive <, > and &.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// invalidUTF8 is what encoding/json writes for a byte of invalid UTF-8 in a
// string: U+FFFD, raw since Go 1.27 (its v2 implementation), escaped as
// \ufffd before. Asked of encoding/json once, so that the plan reads the
// same whichever toolchain built rolloutlint.
var invalidUTF8 = sync.OnceValue(func() string {
	b, err := json.Marshal("\x80")
	if err != nil || len(b) < 2 {
		return "\ufffd"
	}
	return string(b[1 : len(b)-1])
})

// str appends s quoted as encoding/json quotes it: HTML-safe (<, >, & and
// U+2028, U+2029 escaped), control characters escaped, every byte of
// invalid UTF-8 replaced by U+FFFD (see invalidUTF8).
func (e *jsonEnc) str(s string) {
	i := safePrefix(s)
	if i == len(s) { // the common case: nothing to escape
		e.b = append(append(append(e.b, '"'), s...), '"')
		return
	}
	e.b = append(e.b, '"')
	start := 0
	for i < len(s) {
		c := s[i]
		if jsonSafe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			e.b = append(e.b, s[start:i]...)
			switch c {
			case '"', '\\':
				e.b = append(e.b, '\\', c)
			case '\b':
				e.b = append(e.b, '\\', 'b')
			case '\f':
				e.b = append(e.b, '\\', 'f')
			case '\n':
				e.b = append(e.b, '\\', 'n')
			case '\r':
				e.b = append(e.b, '\\', 'r')
			case '\t':
				e.b = append(e.b, '\\', 't')
			default:
				const hex = "0123456789abcdef"
				e.b = append(e.b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			e.b = append(e.b, s[start:i]...)
			e.b = append(e.b, invalidUTF8()...)
		case r == '\u2028' || r == '\u2029':
			e.b = append(e.b, s[start:i]...)
			e.b = append(e.b, '\\', 'u', '2', '0', '2', byte('0'+r-'\u2028'+8))
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	e.b = append(e.b, s[start:]...)
	e.b = append(e.b, '"')
}

// Repeated bytes of a word, for safePrefix.
const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// hasZeroByte reports whether a byte of x is 0.
func hasZeroByte(x uint64) bool { return (x-ones)&^x&high != 0 }

// safePrefix is the length of the longest prefix of s that str copies as
// it is (jsonSafe), found eight bytes at a time.
func safePrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// No byte of 0x80 or more, none under 0x20 (valid as the bytes are
		// ASCII), none of " \ < > &.
		if x&high != 0 || (x-0x20*ones)&^x&high != 0 ||
			hasZeroByte(x^('"'*ones)) || hasZeroByte(x^('\\'*ones)) ||
			hasZeroByte(x^('<'*ones)) || hasZeroByte(x^('>'*ones)) || hasZeroByte(x^('&'*ones)) {
			break
		}
	}
	for i < len(s) && jsonSafe[s[i]] {
		i++
	}
	return i
}

func (e *jsonEnc) rollout(r *Rollout) {
	e.forget()
	e.open()
	e.key(`"rollout": `)
	e.object(&r.Rollout)
	e.key(`"file": `)
	e.str(r.File)
	e.key(`"line": `)
	e.int(int64(r.Line))
	e.key(`"strategy": `)
	e.str(r.Strategy)
	e.key(`"split": `)
	e.str(string(r.Split))
	e.key(`"replicas": `)
	e.int(int64(r.Replicas))
	e.key(`"states": `)
	jsonArray(e, r.States, (*jsonEnc).state)
	e.key(`"abortFrom": `)
	e.int(int64(r.AbortFrom))
	e.key(`"abort": `)
	jsonArray(e, r.Abort, (*jsonEnc).state)
	e.key(`"summary": `)
	e.summary(&r.Summary)
	e.key(`"notInBundle": `)
	jsonArray(e, r.NotInBundle, (*jsonEnc).reference)
	e.key(`"rejected": `)
	jsonArray(e, r.Rejected, (*jsonEnc).rejection)
	if r.Live != nil {
		e.key(`"live": `)
		e.live(r.Live)
	}
	if r.Unit != nil {
		e.key(`"unit": `)
		e.unit(r.Unit)
	}
	e.close()
}

func (e *jsonEnc) unit(u *Unit) {
	e.open()
	e.key(`"kind": `)
	e.str(u.Kind)
	e.key(`"dir": `)
	e.str(u.Dir)
	if u.Application != "" {
		e.key(`"application": `)
		e.str(u.Application)
	}
	e.close()
}

func (e *jsonEnc) object(o *plan.Object) {
	for i := range e.objects {
		if m := &e.objects[i]; m.end > 0 && m.depth == e.depth && m.obj == *o {
			e.again(m.off, m.end)
			return
		}
	}
	off := len(e.b)
	e.objectFields(o)
	e.objects[e.nextObject] = objectMemo{obj: *o, depth: e.depth, off: off, end: len(e.b)}
	e.nextObject = (e.nextObject + 1) % len(e.objects)
}

func (e *jsonEnc) objectFields(o *plan.Object) {
	e.open()
	e.key(`"kind": `)
	e.str(o.Kind)
	e.key(`"namespace": `)
	e.str(o.Namespace)
	e.key(`"name": `)
	e.str(o.Name)
	e.close()
}

func (e *jsonEnc) summary(s *xds.Summary) {
	e.open()
	e.key(`"fullPushes": `)
	e.int(int64(s.FullPushes))
	e.key(`"endpointPushes": `)
	e.int(int64(s.EndpointPushes))
	e.key(`"allGatewayPushes": `)
	e.int(int64(s.AllGatewayPushes))
	e.key(`"mergedPushes": `)
	e.int(int64(s.MergedPushes))
	e.close()
}

func (e *jsonEnc) reference(r *Reference) {
	e.open()
	e.key(`"kind": `)
	e.str(r.Kind)
	e.key(`"namespace": `)
	e.str(r.Namespace)
	e.key(`"name": `)
	e.str(r.Name)
	e.key(`"path": `)
	e.str(r.Path)
	e.key(`"effect": `)
	e.str(r.Effect)
	e.close()
}

func (e *jsonEnc) rejection(r *Rejection) {
	e.open()
	e.key(`"ruleId": `)
	e.str(r.RuleID)
	e.key(`"message": `)
	e.str(r.Message)
	if r.Detail != "" {
		e.key(`"detail": `)
		e.str(r.Detail)
	}
	e.key(`"file": `)
	e.str(r.File)
	e.key(`"line": `)
	e.int(int64(r.Line))
	e.key(`"column": `)
	e.int(int64(r.Column))
	e.close()
}

// state writes the embedded plan.State's fields, then the pushes.
func (e *jsonEnc) state(s *State) {
	e.open()
	e.key(`"phase": `)
	e.str(string(s.Phase))
	e.key(`"step": `)
	e.int(int64(s.Step))
	e.key(`"path": `)
	e.str(s.Path)
	e.key(`"action": `)
	e.str(s.Action)
	e.key(`"weight": `)
	e.int(int64(s.Weight))
	if len(s.Routes) > 0 {
		e.key(`"routes": `)
		memoArray(e, memoRoutes, s.Routes, (*jsonEnc).routeState)
	}
	if len(s.Managed) > 0 {
		e.key(`"managedRoutes": `)
		memoArray(e, memoManaged, s.Managed, (*jsonEnc).managedRoute)
	}
	e.key(`"stableReplicas": `)
	e.int(int64(s.StableReplicas))
	e.key(`"canaryReplicas": `)
	e.int(int64(s.CanaryReplicas))
	if len(s.Labels) > 0 {
		e.key(`"labels": `)
		memoArray(e, memoLabels, s.Labels, (*jsonEnc).revisionLabel)
	}
	if len(s.Writes) > 0 {
		e.key(`"writes": `)
		jsonArray(e, s.Writes, (*jsonEnc).write)
	}
	e.key(`"pushes": `)
	jsonArray(e, s.Pushes, (*jsonEnc).push)
	if len(s.PushesIfLate) > 0 {
		e.key(`"pushesIfLate": `)
		jsonArray(e, s.PushesIfLate, (*jsonEnc).push)
	}
	e.close()
}

func (e *jsonEnc) routeState(r *plan.RouteState) {
	e.open()
	e.key(`"virtualService": `)
	e.object(&r.VS)
	e.key(`"kind": `)
	e.str(string(r.Kind))
	e.key(`"index": `)
	e.int(int64(r.Index))
	if r.Name != "" {
		e.key(`"name": `)
		e.str(r.Name)
	}
	e.key(`"destinations": `)
	jsonArray(e, r.Dests, (*jsonEnc).destination)
	e.close()
}

func (e *jsonEnc) destination(d *plan.Destination) {
	e.open()
	e.key(`"host": `)
	e.str(d.Host)
	if d.Subset != "" {
		e.key(`"subset": `)
		e.str(d.Subset)
	}
	e.key(`"role": `)
	e.str(string(d.Role))
	e.key(`"weight": `)
	e.int(int64(d.Weight))
	if d.Clamped {
		e.key(`"clamped": `)
		e.bool(d.Clamped)
	}
	e.key(`"index": `)
	e.int(int64(d.Index))
	e.close()
}

func (e *jsonEnc) managedRoute(m *plan.ManagedRoute) {
	e.open()
	e.key(`"name": `)
	e.str(m.Name)
	e.key(`"type": `)
	e.str(m.Type)
	if m.Percentage != 0 {
		e.key(`"percentage": `)
		e.int(int64(m.Percentage))
	}
	e.close()
}

func (e *jsonEnc) revisionLabel(l *plan.RevisionLabel) {
	e.open()
	e.key(`"object": `)
	e.object(&l.Object)
	e.key(`"field": `)
	e.str(l.Field)
	e.key(`"hash": `)
	e.str(l.Hash)
	e.close()
}

func (e *jsonEnc) write(w *plan.Write) {
	e.open()
	e.key(`"kind": `)
	e.str(string(w.Kind))
	e.key(`"object": `)
	e.object(&w.Object)
	e.key(`"field": `)
	e.str(w.Field)
	e.key(`"old": `)
	e.str(w.Old)
	e.key(`"new": `)
	e.str(w.New)
	if w.RouteKind != "" {
		e.key(`"routeKind": `)
		e.str(string(w.RouteKind))
	}
	if len(w.Hosts) > 0 {
		e.key(`"hosts": `)
		jsonArray(e, w.Hosts, strElem[string])
	}
	e.key(`"batch": `)
	e.int(int64(w.Batch))
	if w.Hash != "" {
		e.key(`"hash": `)
		e.str(w.Hash)
	}
	e.close()
}

func (e *jsonEnc) push(p *xds.Push) {
	e.open()
	e.key(`"window": `)
	e.int(int64(p.Window))
	e.key(`"writes": `)
	jsonArray(e, p.Writes, intElem)
	e.key(`"keys": `)
	jsonArray(e, p.Keys, strElem[string])
	e.key(`"class": `)
	e.str(string(p.Class))
	e.key(`"eds": `)
	e.str(string(p.EDS))
	e.key(`"sidecarTypes": `)
	memoArray(e, memoTypes, p.SidecarTypes, strElem[xds.Type])
	e.key(`"gatewayTypes": `)
	memoArray(e, memoTypes, p.GatewayTypes, strElem[xds.Type])
	e.key(`"effective": `)
	memoArray(e, memoTypes, p.Effective, strElem[xds.Type])
	e.key(`"scope": `)
	e.scope(&p.Scope)
	e.key(`"merged": `)
	e.bool(p.Merged)
	e.key(`"async": `)
	e.bool(p.Async)
	e.key(`"stage": `)
	e.str(p.Stage)
	e.key(`"cites": `)
	jsonArray(e, p.Cites, strElem[string])
	e.close()
}

func (e *jsonEnc) scope(s *xds.Scope) {
	e.open()
	e.key(`"allGateways": `)
	e.bool(s.AllGateways)
	if len(s.GatewayNamespaces) > 0 {
		e.key(`"gatewayNamespaces": `)
		jsonArray(e, s.GatewayNamespaces, strElem[string])
	}
	e.key(`"sidecarNamespaces": `)
	memoArray(e, memoStrings, s.SidecarNamespaces, strElem[string])
	if len(s.SidecarExcept) > 0 {
		e.key(`"sidecarExcept": `)
		jsonArray(e, s.SidecarExcept, strElem[string])
	}
	e.close()
}

func (e *jsonEnc) live(l *plan.Live) {
	e.open()
	e.key(`"step": `)
	e.int(int64(l.Step))
	e.key(`"paused": `)
	e.bool(l.Paused)
	e.key(`"aborted": `)
	e.bool(l.Aborted)
	e.key(`"stableHash": `)
	e.str(l.StableHash)
	e.key(`"canaryHash": `)
	e.str(l.CanaryHash)
	e.key(`"canaryWeight": `)
	e.int(int64(l.CanaryWeight))
	if len(l.Routes) > 0 {
		e.key(`"routes": `)
		memoArray(e, memoRoutes, l.Routes, (*jsonEnc).routeState)
	}
	if len(l.Managed) > 0 {
		e.key(`"managedRoutes": `)
		memoArray(e, memoManaged, l.Managed, (*jsonEnc).managedRoute)
	}
	if len(l.Labels) > 0 {
		e.key(`"labels": `)
		memoArray(e, memoLabels, l.Labels, (*jsonEnc).revisionLabel)
	}
	e.key(`"stableReplicas": `)
	e.int(int64(l.StableReplicas))
	e.key(`"canaryReplicas": `)
	e.int(int64(l.CanaryReplicas))
	e.key(`"newTemplate": `)
	e.bool(l.NewTemplate)
	e.close()
}
