package planreport

import (
	"fmt"
	"io"
	"strings"
)

// Mermaid writes one sequence diagram for the whole document: Argo's writes
// to the API server and istiod's pushes to the proxies, step by step. Each
// Rollout is a rect block headed by a note, and its abort path an opt block,
// so several Rollouts make one diagram that renders (Mermaid reads a single
// diagram per block).
func Mermaid(w io.Writer, doc *Document) error {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	fmt.Fprintf(&b, "    title rolloutlint plan (Istio %s model)\n", doc.IstioVersion)
	b.WriteString("    participant A as Argo Rollouts\n    participant K as Kubernetes API\n    participant I as istiod\n    participant P as Envoy proxies\n")
	if len(doc.Rollouts) == 0 {
		b.WriteString("    Note over A,P: no Rollout in the input\n")
	}
	for _, r := range doc.Rollouts {
		b.WriteString("    rect rgba(128, 128, 128, 0.08)\n")
		in := ""
		if r.Unit != nil {
			in = " in " + mmEscape(r.Unit.String())
		}
		fmt.Fprintf(&b, "    Note over A,P: Rollout %s%s (%s, %s)\n", mmEscape(keyOf(r.Rollout)), in, mmEscape(r.Strategy), splitName(r))
		for _, ref := range r.NotInBundle {
			fmt.Fprintf(&b, "    Note over A,K: not in the bundle: %s\n", mmEscape(refText(ref)))
		}
		if len(r.Rejected) > 0 {
			for _, rj := range r.Rejected {
				fmt.Fprintf(&b, "    Note over A,K: not played out, Argo Rollouts refuses the spec (InvalidSpec): %s %s\n", rj.RuleID, mmEscape(rj.Message))
			}
			b.WriteString("    end\n")
			continue
		}
		seq := func(states []State, indent string) {
			for _, s := range states {
				fmt.Fprintf(&b, "%sNote over A,P: %s: %s (%s)\n", indent, stepLabel(s.State), mmEscape(s.Action), mmEscape(weights(s.State)))
				for _, x := range s.Writes {
					fmt.Fprintf(&b, "%sA->>K: %s %s %s → %s\n", indent, mmEscape(x.Object.Kind+" "+x.Object.Name), mmEscape(x.Field), mmEscape(x.Old), mmEscape(x.New))
				}
				for _, p := range s.Pushes {
					fmt.Fprintf(&b, "%sI->>P: %s, changes %s (%s)\n", indent, p.Class, types(p.Effective), mmEscape(p.Scope.String()))
				}
			}
		}
		seq(r.States, "    ")
		if len(r.Abort) > 0 {
			from := r.States[r.AbortFrom]
			fmt.Fprintf(&b, "    opt abort from %s\n", stepLabel(from.State))
			seq(r.Abort, "        ")
			b.WriteString("    end\n")
		}
		b.WriteString("    end\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mmEscape removes what Mermaid reads as syntax in message and note text:
// ";" and newlines end a statement, "#" starts an entity, "<" ">" make tags.
func mmEscape(s string) string {
	return strings.NewReplacer(";", ",", "#", "", "<", "", ">", "", "\"", "'", "\n", " ").Replace(s)
}
