package planreport

import (
	"bytes"
	"fmt"
	"io"
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
	prefix := fmt.Sprintf("%-10s %-40s %-7s ", stepLabel(s.State), clip(s.Action, 40),
		fmt.Sprintf("%d/%d", s.StableReplicas, s.CanaryReplicas))
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
		line(b, "           ", fmt.Sprintf("write b%d %s", w.Batch, writeText(w)))
	}
	for _, p := range s.Pushes {
		head := fmt.Sprintf("push %d %s, changes %s", p.Window, p.Class, types(p.Effective))
		if p.Merged {
			head += fmt.Sprintf(" (debounce merged %d keys)", len(p.Keys))
		}
		line(b, "           ", head)
		line(b, "             ", fmt.Sprintf("sent: sidecars %s; gateways %s", types(p.SidecarTypes), types(p.GatewayTypes)))
		line(b, "             ", "keys: "+strings.Join(p.Keys, " "))
		line(b, "             ", "scope: "+p.Scope.String())
	}
	if len(s.PushesIfLate) > 0 {
		line(b, "           ", "possible: if the EndpointSlice update lands after the debounce window:")
		for _, p := range s.PushesIfLate {
			line(b, "             ", fmt.Sprintf("push %d %s, changes %s; keys: %s", p.Window, p.Class, types(p.Effective), strings.Join(p.Keys, " ")))
		}
	}
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
	cur := indent
	for _, word := range strings.Fields(text) {
		for utf8.RuneCountInString(indent+"  "+word) > Width {
			r := []rune(word)
			cut := Width - utf8.RuneCountInString(indent) - 2
			if strings.TrimSpace(cur) != "" {
				b.WriteString(cur + "\n")
			}
			b.WriteString(indent + "  " + string(r[:cut]) + "\n")
			cur, word = indent+"  ", string(r[cut:])
		}
		sep := " "
		if strings.TrimSpace(cur) == "" {
			sep = ""
		}
		if utf8.RuneCountInString(cur)+len(sep)+utf8.RuneCountInString(word) > Width {
			b.WriteString(cur + "\n")
			cur, sep = indent+"  ", ""
		}
		cur += sep + word
	}
	b.WriteString(cur + "\n")
}
