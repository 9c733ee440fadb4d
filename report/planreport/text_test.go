package planreport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// The text format as it was written with fmt and string concatenation,
// kept as the reference the appending textWriter must match.

// refTextRollout writes one Rollout's table.
func refTextRollout(b *bytes.Buffer, doc *Document, r *Rollout) {
	in := ""
	if r.Unit != nil {
		in = ", in " + r.Unit.String()
	}
	line(b, "", fmt.Sprintf("Rollout %s (%s:%d%s): %s, %s, %d replicas, Istio %s model (%s)",
		keyOf(r.Rollout), r.File, r.Line, in, r.Strategy, splitName(*r), r.Replicas, doc.IstioVersion, doc.Verified))
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
		refState(b, &r.States[i])
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
			refState(b, &r.Abort[i])
		}
	}
}

func refState(b *bytes.Buffer, s *State) {
	// The text builders below write what fmt's %s, %d and %-Ns (padding
	// counted in runes) would, without its reflection.
	prefix := refPadRunes(stepLabel(s.State), 10) + " " + refPadRunes(clip(s.Action, 40), 40) + " " +
		refPadRunes(strconv.FormatInt(int64(s.StableReplicas), 10)+"/"+strconv.FormatInt(int64(s.CanaryReplicas), 10), 7) + " "
	// Weights wrap route by route under their own column.
	pad := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	cur := prefix
	for i, part := range strings.Split(refWeights(s.State), "; ") {
		if i > 0 {
			if utf8.RuneCountInString(cur)+2+utf8.RuneCountInString(part) > Width {
				b.WriteString(cur + ";\n")
				cur = pad
			} else {
				cur += "; "
			}
		}
		cur += clip(part, Width-utf8.RuneCountInString(prefix))
	}
	b.WriteString(cur + "\n")
	for _, w := range s.Writes {
		line(b, "           ", "write b"+strconv.Itoa(w.Batch)+" "+refWriteText(w))
	}
	for _, p := range s.Pushes {
		head := "push " + strconv.Itoa(p.Window) + " " + string(p.Class) + ", changes " + refTypes(p.Effective)
		if p.Merged {
			head += " (debounce merged " + strconv.Itoa(len(p.Keys)) + " keys)"
		}
		line(b, "           ", head)
		line(b, "             ", "sent: sidecars "+refTypes(p.SidecarTypes)+"; gateways "+refTypes(p.GatewayTypes))
		line(b, "             ", "keys: "+strings.Join(p.Keys, " "))
		line(b, "             ", "scope: "+refScope(p.Scope))
	}
	if len(s.PushesIfLate) > 0 {
		line(b, "           ", "possible: if the EndpointSlice update lands after the debounce window:")
		for _, p := range s.PushesIfLate {
			line(b, "             ", "push "+strconv.Itoa(p.Window)+" "+string(p.Class)+", changes "+refTypes(p.Effective)+"; keys: "+strings.Join(p.Keys, " "))
		}
	}
}

// refPadRunes is fmt's %-ns of s: s padded with spaces to n runes.
func refPadRunes(s string, n int) string {
	if k := n - utf8.RuneCountInString(s); k > 0 {
		return s + strings.Repeat(" ", k)
	}
	return s
}

// refWeights renders the routes' weights: "primary s50 c50 a20".
func refWeights(s plan.State) string {
	if len(s.Routes) == 0 {
		return "-"
	}
	var parts []string
	for _, rt := range s.Routes {
		name := rt.Name
		if name == "" {
			name = string(rt.Kind) + "[" + strconv.Itoa(rt.Index) + "]"
		}
		var ws []string
		for _, d := range rt.Dests {
			mark := ""
			if d.Clamped {
				mark = "!"
			}
			ws = append(ws, string(rune(roleLetter(d.Role)))+strconv.FormatInt(int64(d.Weight), 10)+mark)
		}
		parts = append(parts, name+" "+strings.Join(ws, " "))
	}
	for _, m := range s.Managed {
		parts = append(parts, "+"+m.Name)
	}
	return strings.Join(parts, "; ")
}

func refWriteText(w plan.Write) string {
	return w.Object.String() + " " + w.Field + ": " + w.Old + " → " + w.New
}

func refTypes(ts []xds.Type) string {
	if len(ts) == 0 {
		return "-"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ",")
}

// refScope renders a scope for the table.
func refScope(s xds.Scope) string {
	var gw string
	switch {
	case s.AllGateways:
		gw = "all gateways"
	case len(s.GatewayNamespaces) > 0:
		gw = "gateways in " + strings.Join(s.GatewayNamespaces, ",")
	default:
		gw = "no gateway"
	}
	var sc string
	switch {
	case len(s.SidecarNamespaces) == 1 && s.SidecarNamespaces[0] == "*":
		sc = "sidecars in all namespaces"
		if len(s.SidecarExcept) > 0 {
			sc += " except " + strings.Join(s.SidecarExcept, ",")
		}
	case len(s.SidecarNamespaces) > 0:
		sc = "sidecars in " + strings.Join(s.SidecarNamespaces, ",")
	default:
		sc = "no sidecar"
	}
	return gw + "; " + sc
}

// TestTextMatchesReference compares textWriter with the string-building
// reference on Rollouts whose every field is random (odd and multi-byte
// strings, long weights that wrap, empty and nil lists), several Rollouts
// per writer so that its reused buffers count.
func TestTextMatchesReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	doc := &Document{IstioVersion: "1.28", Verified: xds.Verification{Release: "1.28.2", Commit: "abc", Scenarios: 12}}
	tw := newTextWriter(doc)
	for i := range 3000 {
		var r Rollout
		fill(t, rnd, reflect.ValueOf(&r).Elem(), 0)
		if rnd.IntN(4) != 0 {
			r.Rejected = nil
		}
		if len(r.States) == 0 {
			r.Abort = nil
		} else {
			r.AbortFrom = rnd.IntN(len(r.States))
		}
		var want, got bytes.Buffer
		refTextRollout(&want, doc, &r)
		tw.rollout(&got, &r)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("Rollout %d: textWriter differs from the reference:\n%s\nwant:\n%s", i, got.String(), want.String())
		}
	}
}

// TestTextWideColumnsBeforeTheWeights writes a state whose action is 40
// runes of multi-byte characters (160 bytes, wider than Width in bytes) and
// whose weights wrap: no panic, and each wrapped weight starts under the
// WEIGHTS column, counted in runes as the padding is.
func TestTextWideColumnsBeforeTheWeights(t *testing.T) {
	var s State
	s.Action = strings.Repeat("\U0001F600", 50)
	for i := range 6 {
		s.Routes = append(s.Routes, plan.RouteState{Name: "route-with-a-long-name-" + strconv.Itoa(i),
			Dests: []plan.Destination{{Role: plan.RoleStable, Weight: 90}, {Role: plan.RoleCanary, Weight: 10}}})
	}
	var b bytes.Buffer
	tw := newTextWriter(&Document{})
	tw.b = &b
	tw.state(&s)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("the weights did not wrap:\n%s", b.String())
	}
	col := utf8.RuneCountInString(lines[0]) - utf8.RuneCountInString(lines[0][strings.Index(lines[0], "route-with"):])
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("line %d is %d runes, more than %d: %q", i, n, Width, l)
		}
		if i > 0 && (len(l) <= col || strings.TrimLeft(l, " ") != l[col:]) {
			t.Errorf("line %d does not start under the WEIGHTS column (%d): %q", i, col, l)
		}
	}
	if got := clip("abc", 0); got != "" {
		t.Errorf("clip to no room: %q", got)
	}
}
