package planreport

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// Text writes one table per Rollout, wrapped to Width columns.
func Text(w io.Writer, doc *Document) error {
	var b bytes.Buffer
	if len(doc.Rollouts) == 0 {
		b.WriteString("no Rollout in the input\n")
	}
	for i := range doc.Rollouts {
		if i > 0 {
			b.WriteString("\n")
		}
		textRollout(&b, doc, &doc.Rollouts[i])
	}
	_, err := w.Write(b.Bytes())
	return err
}

// textRollout writes one Rollout's table.
func textRollout(b *bytes.Buffer, doc *Document, r *Rollout) {
	line(b, "", fmt.Sprintf("Rollout %s (%s:%d): %s, %s, %d replicas, Istio %s model (%s)",
		keyOf(r.Rollout), r.File, r.Line, r.Strategy, splitName(*r), r.Replicas, doc.IstioVersion, doc.Verified))
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
		state(b, &r.States[i])
	}
	n := r.Summary
	b.WriteString("\n")
	line(b, "", fmt.Sprintf("summary: %d full pushes, %d endpoint pushes; %d pushes reach every gateway; %d merged by debounce",
		n.FullPushes, n.EndpointPushes, n.AllGatewayPushes, n.MergedPushes))
	if len(r.Abort) > 0 {
		from := r.States[r.AbortFrom]
		b.WriteString("\n")
		line(b, "", fmt.Sprintf("abort path (from %s, %s):", stepLabel(from.State), from.Action))
		for i := range r.Abort {
			state(b, &r.Abort[i])
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

func state(b *bytes.Buffer, s *State) {
	// The text builders below write what fmt's %s, %d and %-Ns (padding
	// counted in runes) would, without its reflection.
	prefix := padRunes(stepLabel(s.State), 10) + " " + padRunes(clip(s.Action, 40), 40) + " " +
		padRunes(strconv.FormatInt(int64(s.StableReplicas), 10)+"/"+strconv.FormatInt(int64(s.CanaryReplicas), 10), 7) + " "
	// Weights wrap route by route under their own column.
	pad := strings.Repeat(" ", len(prefix))
	cur := prefix
	for i, part := range strings.Split(weights(s.State), "; ") {
		if i > 0 {
			if utf8.RuneCountInString(cur)+2+utf8.RuneCountInString(part) > Width {
				b.WriteString(cur + ";\n")
				cur = pad
			} else {
				cur += "; "
			}
		}
		cur += clip(part, Width-len(prefix))
	}
	b.WriteString(cur + "\n")
	for _, w := range s.Writes {
		line(b, "           ", "write b"+strconv.Itoa(w.Batch)+" "+writeText(w))
	}
	for _, p := range s.Pushes {
		head := "push " + strconv.Itoa(p.Window) + " " + string(p.Class) + ", changes " + types(p.Effective)
		if p.Merged {
			head += " (debounce merged " + strconv.Itoa(len(p.Keys)) + " keys)"
		}
		line(b, "           ", head)
		line(b, "             ", "sent: sidecars "+types(p.SidecarTypes)+"; gateways "+types(p.GatewayTypes))
		line(b, "             ", "keys: "+strings.Join(p.Keys, " "))
		line(b, "             ", "scope: "+p.Scope.String())
	}
	if len(s.PushesIfLate) > 0 {
		line(b, "           ", "possible: if the EndpointSlice update lands after the debounce window:")
		for _, p := range s.PushesIfLate {
			line(b, "             ", "push "+strconv.Itoa(p.Window)+" "+string(p.Class)+", changes "+types(p.Effective)+"; keys: "+strings.Join(p.Keys, " "))
		}
	}
}

// padRunes is fmt's %-ns of s: s padded with spaces to n runes.
func padRunes(s string, n int) string {
	if k := n - utf8.RuneCountInString(s); k > 0 {
		return s + strings.Repeat(" ", k)
	}
	return s
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
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
