package planreport

import (
	"fmt"
	"io"
	"strings"
)

// Markdown writes one table per Rollout, for pull-request comments.
func Markdown(w io.Writer, doc *Document) error {
	var b strings.Builder
	for _, r := range doc.Rollouts {
		in := ""
		if r.Unit != nil {
			in = " in " + mdText(r.Unit.Kind) + " " + codeSpan(r.Unit.Dir)
			if r.Unit.Application != "" {
				in += " (Application " + codeSpan(r.Unit.Application) + ")"
			}
		}
		fmt.Fprintf(&b, "### Rollout %s%s (%s, %s, Istio %s model)\n\n", codeSpan(keyOf(r.Rollout)), in, r.Strategy, splitName(r), doc.IstioVersion)
		for _, ref := range r.NotInBundle {
			fmt.Fprintf(&b, "- Not in the bundle: %s\n", mdText(refText(ref)))
		}
		if len(r.NotInBundle) > 0 {
			b.WriteString("\n")
		}
		if len(r.Rejected) > 0 {
			b.WriteString("**Not played out**: Argo Rollouts refuses this spec (`InvalidSpec`) and runs no step:\n\n")
			for _, rj := range r.Rejected {
				fmt.Fprintf(&b, "- %s %s: %s\n", codeSpan(fmt.Sprintf("%s:%d:%d", rj.File, rj.Line, rj.Column)), rj.RuleID, mdText(rj.Message))
			}
			b.WriteString("\n")
			continue
		}
		b.WriteString("| step | action | weights | pods old/new | writes | pushes |\n|---|---|---|---|---|---|\n")
		rows := func(states []State) {
			for _, s := range states {
				var ws, ps []string
				for _, x := range s.Writes {
					ws = append(ws, cell(codeSpan(writeText(x))))
				}
				for _, p := range s.Pushes {
					ps = append(ps, cell(mdText(fmt.Sprintf("%d. %s (%s)", p.Window, pushText(p), p.Scope))))
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %d/%d | %s | %s |\n", stepLabel(s.State), cell(mdText(s.Action)), cell(mdText(weights(s.State))),
					s.StableReplicas, s.CanaryReplicas, strings.Join(ws, "<br>"), strings.Join(ps, "<br>"))
			}
		}
		rows(r.States)
		n := r.Summary
		fmt.Fprintf(&b, "\n%d full pushes, %d endpoint pushes; %d pushes reach every gateway; %d merged by debounce.\n\n",
			n.FullPushes, n.EndpointPushes, n.AllGatewayPushes, n.MergedPushes)
		if len(r.Abort) > 0 {
			fmt.Fprintf(&b, "Abort path (from %s):\n\n| step | action | weights | pods old/new | writes | pushes |\n|---|---|---|---|---|---|\n", stepLabel(r.States[r.AbortFrom].State))
			rows(r.Abort)
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdText escapes text outside code spans: the characters Markdown or HTML
// would read as markup render as themselves.
func mdText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

// codeSpan makes s a code span. Inside one nothing is escaped (an entity such
// as &lt; would show literally), so the fence is one backtick longer than the
// longest run in s, with a space of padding when s starts or ends with one.
func codeSpan(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// cell makes text safe in a GFM table cell: a pipe, even inside a code span,
// would end the cell unless escaped (GFM removes the backslash in code spans
// of table cells), and a newline would end the row.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
