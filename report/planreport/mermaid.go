package planreport

import (
	"fmt"
	"io"
	"strings"
)

// Mermaid writes a sequence diagram per Rollout: Argo's writes to the API
// server and istiod's pushes to the proxies, step by step.
func Mermaid(w io.Writer, doc *Document) error {
	var b strings.Builder
	for _, r := range doc.Rollouts {
		b.WriteString("sequenceDiagram\n")
		fmt.Fprintf(&b, "    title Rollout %s (Istio %s model)\n", mmEscape(keyOf(r.Rollout)), doc.IstioVersion)
		b.WriteString("    participant A as Argo Rollouts\n    participant K as Kubernetes API\n    participant I as istiod\n    participant P as Envoy proxies\n")
		seq := func(states []State, prefix string) {
			for _, s := range states {
				fmt.Fprintf(&b, "    Note over A,P: %s%s: %s (%s)\n", prefix, stepLabel(s.State), mmEscape(s.Action), mmEscape(weights(s.State)))
				for _, x := range s.Writes {
					fmt.Fprintf(&b, "    A->>K: %s %s %s → %s\n", mmEscape(x.Object.Kind+" "+x.Object.Name), mmEscape(x.Field), mmEscape(x.Old), mmEscape(x.New))
				}
				for _, p := range s.Pushes {
					fmt.Fprintf(&b, "    I->>P: %s, changes %s (%s)\n", p.Class, types(p.Effective), mmEscape(p.Scope.String()))
				}
			}
		}
		seq(r.States, "")
		seq(r.Abort, "abort ")
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mmEscape removes characters Mermaid treats as syntax in messages.
func mmEscape(s string) string {
	return strings.NewReplacer(";", ",", "#", "", "<", "", ">", "", "\"", "'", ":", " ").Replace(s)
}
