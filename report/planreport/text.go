package planreport

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// Text writes one table per Rollout, wrapped to Width columns.
func Text(w io.Writer, doc *Document) error {
	var b bytes.Buffer
	if len(doc.Rollouts) == 0 {
		b.WriteString("no Rollout in the input\n")
	}
	t := newTextWriter(doc)
	for i := range doc.Rollouts {
		if i > 0 {
			b.WriteString("\n")
		}
		t.rollout(&b, &doc.Rollouts[i])
	}
	_, err := w.Write(b.Bytes())
	return err
}

// textWriter writes the Rollout tables of one document. The text builders
// below append what fmt's %s, %d and %-Ns (padding counted in runes) would
// to scratch buffers kept from line to line, without its reflection or the
// strings that concatenating each line's pieces would make. A textWriter is
// used by one goroutine at a time.
type textWriter struct {
	doc *Document
	// verified is doc.Verified's sentence, the same in every Rollout's head.
	verified string
	b        *bytes.Buffer
	s, w     []byte // the line being built; a state's weights
}

func newTextWriter(doc *Document) *textWriter {
	return &textWriter{doc: doc, verified: doc.Verified.String()}
}

// line writes the line built in p (t.s grown) after indent, wrapped, and
// keeps p's array for the next line.
func (t *textWriter) line(indent string, p []byte) {
	// line does not keep text: it reads the bytes while it copies them
	// into t.b, a different buffer, so the scratch need not be copied.
	line(t.b, indent, unsafe.String(unsafe.SliceData(p), len(p)))
	t.s = p[:0]
}

// rollout writes one Rollout's table into b.
func (t *textWriter) rollout(b *bytes.Buffer, r *Rollout) {
	t.b = b
	defer func() { t.b = nil }()
	p := append(t.s[:0], "Rollout "...)
	p = append(append(append(p, r.Rollout.Namespace...), '/'), r.Rollout.Name...)
	p = strconv.AppendInt(append(append(append(p, " ("...), r.File...), ':'), int64(r.Line), 10)
	if r.Unit != nil {
		p = append(append(p, ", in "...), r.Unit.String()...)
	}
	p = append(append(append(append(append(p, "): "...), r.Strategy...), ", "...), splitName(*r)...), ", "...)
	p = strconv.AppendInt(p, int64(r.Replicas), 10)
	p = append(append(append(append(append(p, " replicas, Istio "...), t.doc.IstioVersion...), " model ("...), t.verified...), ')')
	t.line("", p)
	if l := r.Live; l != nil {
		line(b, "", fmt.Sprintf("from the live state: stable %s, canary %s, status canary weight %d%%", l.StableHash, liveCanary(l), l.CanaryWeight))
	}
	for _, ref := range r.NotInBundle {
		line(b, "", "not in the bundle: "+refText(ref))
	}
	if len(r.Rejected) > 0 {
		line(b, "", "not played out: Argo Rollouts refuses this spec (InvalidSpec) and runs no step:")
		for _, rj := range r.Rejected {
			line(b, "  ", rejectionText(rj))
		}
		return
	}
	b.WriteString("PODS = old/new ReplicaSet; WEIGHTS per route: s stable, c canary, a additional,\n" +
		"  x experiment, ! clamped; +name = header/mirror route\n")
	b.WriteString("\n")
	line(b, "", textHeader)
	for i := range r.States {
		t.state(&r.States[i])
	}
	n := r.Summary
	b.WriteString("\n")
	p = strconv.AppendInt(append(t.s[:0], "summary: "...), int64(n.FullPushes), 10)
	p = strconv.AppendInt(append(p, " full pushes, "...), int64(n.EndpointPushes), 10)
	p = strconv.AppendInt(append(p, " endpoint pushes; "...), int64(n.AllGatewayPushes), 10)
	p = strconv.AppendInt(append(p, " pushes reach every gateway; "...), int64(n.MergedPushes), 10)
	t.line("", append(p, " merged by debounce"...))
	if len(r.Abort) > 0 {
		from := r.States[r.AbortFrom]
		b.WriteString("\n")
		p = appendStepLabel(append(t.s[:0], "abort path (from "...), from.State)
		t.line("", append(append(append(p, ", "...), from.Action...), "):"...))
		for i := range r.Abort {
			t.state(&r.Abort[i])
		}
	}
}

var textHeader = fmt.Sprintf("%-10s %-40s %-7s %s", "STEP", "ACTION", "PODS", "WEIGHTS")

// liveCanary names the canary revision of a live state.
func liveCanary(l *plan.Live) string {
	switch {
	case l.NewTemplate:
		return "a new revision (the local template)"
	case !l.InProgress():
		return "none"
	}
	return l.CanaryHash
}

const (
	writeIndent = "           "   // under the ACTION column
	pushIndent  = "             " // a push's details
)

func (t *textWriter) state(s *State) {
	b := t.b
	p := appendPadRunes(appendStepLabel(t.s[:0], s.State), 0, 10)
	start := len(p) + 1
	p = appendPadRunes(appendClip(append(p, ' '), s.Action, 40), start, 40)
	start = len(p) + 1
	p = strconv.AppendInt(append(p, ' '), int64(s.StableReplicas), 10)
	p = strconv.AppendInt(append(p, '/'), int64(s.CanaryReplicas), 10)
	p = append(appendPadRunes(p, start, 7), ' ')
	// The columns before the weights, in runes: an action of multi-byte
	// characters is 40 runes but up to 160 bytes.
	prefix := utf8.RuneCount(p)
	// Weights wrap route by route under their own column.
	t.w = appendWeights(t.w[:0], s.State)
	rest := t.w
	for i := 0; ; i++ {
		part, tail, more := bytes.Cut(rest, []byte("; "))
		if i > 0 {
			if utf8.RuneCount(p)+2+utf8.RuneCount(part) > Width {
				b.Write(append(p, ";\n"...))
				p = p[:0]
				for range prefix {
					p = append(p, ' ')
				}
			} else {
				p = append(p, "; "...)
			}
		}
		p = appendClipBytes(p, part, Width-prefix)
		if !more {
			break
		}
		rest = tail
	}
	b.Write(append(p, '\n'))
	t.s = p[:0]
	for _, w := range s.Writes {
		p = strconv.AppendInt(append(t.s[:0], "write b"...), int64(w.Batch), 10)
		t.line(writeIndent, appendWriteText(append(p, ' '), w))
	}
	for _, x := range s.Pushes {
		p = t.pushHead(x)
		if x.Merged {
			p = strconv.AppendInt(append(p, " (debounce merged "...), int64(len(x.Keys)), 10)
			p = append(p, " keys)"...)
		}
		t.line(writeIndent, p)
		p = appendTypes(append(t.s[:0], "sent: sidecars "...), x.SidecarTypes)
		t.line(pushIndent, appendTypes(append(p, "; gateways "...), x.GatewayTypes))
		t.line(pushIndent, appendKeys(append(t.s[:0], "keys: "...), x.Keys))
		t.line(pushIndent, x.Scope.Append(append(t.s[:0], "scope: "...)))
	}
	if len(s.PushesIfLate) > 0 {
		line(b, writeIndent, "possible: if the EndpointSlice update lands after the debounce window:")
		for _, x := range s.PushesIfLate {
			t.line(pushIndent, appendKeys(append(t.pushHead(x), "; keys: "...), x.Keys))
		}
	}
}

// pushHead starts a push's line in t.s: push N class, changes types.
func (t *textWriter) pushHead(x xds.Push) []byte {
	p := strconv.AppendInt(append(t.s[:0], "push "...), int64(x.Window), 10)
	p = append(append(append(p, ' '), x.Class...), ", changes "...)
	return appendTypes(p, x.Effective)
}

// appendKeys appends the keys separated by spaces.
func appendKeys(dst []byte, keys []string) []byte {
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, k...)
	}
	return dst
}

// appendPadRunes pads dst[start:] with spaces to n runes: fmt's %-ns.
func appendPadRunes(dst []byte, start, n int) []byte {
	for k := n - utf8.RuneCount(dst[start:]); k > 0; k-- {
		dst = append(dst, ' ')
	}
	return dst
}

// appendClip appends clip(s, n).
func appendClip(dst []byte, s string, n int) []byte {
	if utf8.RuneCountInString(s) <= n {
		return append(dst, s...)
	}
	return append(dst, clip(s, n)...)
}

// appendClipBytes appends clip(string(s), n).
func appendClipBytes(dst, s []byte, n int) []byte {
	if utf8.RuneCount(s) <= n {
		return append(dst, s...)
	}
	return append(dst, clip(string(s), n)...)
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// line writes text after indent, wrapping at spaces so that no line exceeds
// Width; continuation lines get two more spaces of indent. A word longer than
// the width is cut, so the limit always holds.
func line(b *bytes.Buffer, indent, text string) {
	// Bytes bound runes: a line short in bytes is short in runes.
	if len(indent)+len(text) <= Width || utf8.RuneCountInString(indent)+utf8.RuneCountInString(text) <= Width {
		b.WriteString(indent)
		b.WriteString(text)
		b.WriteByte('\n')
		return
	}
	// The line being filled goes straight into b, but its indent only
	// once a word follows: a line of indent alone is dropped before a cut
	// word. cont says the indent is a continuation's (two more spaces),
	// curN is the line's length in runes and blank that it has no word.
	indentN := utf8.RuneCountInString(indent)
	indentBlank := strings.TrimSpace(indent) == ""
	cont, curN, blank := false, indentN, indentBlank
	started := false // the indent of the current line is written
	start := func() {
		if !started {
			b.WriteString(indent)
			if cont {
				b.WriteString("  ")
			}
			started = true
		}
	}
	newline := func() {
		start()
		b.WriteByte('\n')
		cont, curN, blank, started = true, indentN+2, indentBlank, false
	}
	for word := range strings.FieldsSeq(text) {
		wordN := utf8.RuneCountInString(word)
		for indentN+2+wordN > Width {
			r := []rune(word)
			cut := Width - indentN - 2
			if !blank {
				newline()
			}
			b.WriteString(indent)
			b.WriteString("  ")
			b.WriteString(string(r[:cut]))
			b.WriteByte('\n')
			cont, curN, blank, started = true, indentN+2, indentBlank, false
			word = string(r[cut:])
			wordN = utf8.RuneCountInString(word)
		}
		sep := 1
		if blank {
			sep = 0
		}
		if curN+sep+wordN > Width {
			newline()
			sep = 0
		}
		start()
		if sep == 1 {
			b.WriteByte(' ')
		}
		b.WriteString(word)
		curN += sep + wordN
		blank = false
	}
	start()
	b.WriteByte('\n')
}
