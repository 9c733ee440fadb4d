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
		fmt.Fprintf(&b, "### Rollout `%s` (%s, %s, Istio %s model)\n\n", keyOf(r.Rollout), r.Strategy, splitName(r), doc.IstioVersion)
		b.WriteString("| step | action | weights | pods old/new | writes | pushes |\n|---|---|---|---|---|---|\n")
		rows := func(states []State) {
			for _, s := range states {
				var ws, ps []string
				for _, x := range s.Writes {
					ws = append(ws, "`"+mdEscape(writeText(x))+"`")
				}
				for _, p := range s.Pushes {
					ps = append(ps, mdEscape(fmt.Sprintf("%d. %s (%s)", p.Window, pushText(p), p.Scope)))
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %d/%d | %s | %s |\n", stepLabel(s.State), mdEscape(s.Action), mdEscape(weights(s.State)),
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

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}
