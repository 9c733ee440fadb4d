package policies

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// GlobalArgoCD is the custom.requires alternative that holds when the run's
// config says Argo CD deploys the bundle (argocd: true, input.globals.argocd).
const GlobalArgoCD = "globals.argocd"

// requirement is a policy's custom.requires: the conditions without which it
// cannot report anything, so that a bundle which fails one is not evaluated
// (and the policy not even compiled). It is a conjunction of clauses; a
// clause holds when one of its alternatives does: a kind holds when the
// bundle has an object of that kind (any apiVersion), GlobalArgoCD when the
// config sets argocd: true. A nil requirement always holds: a policy that
// declares nothing is never skipped.
//
// The declaration is the policy author's promise; for the built-in policies
// TestRequiresSkipsOnlyWhatCannotFire holds it to the findings on every test
// bundle, with the clause's kinds removed.
type requirement [][]string

// met reports whether the bundle and the run's globals satisfy every clause.
func (r requirement) met(g *graph.Graph, globals rules.Globals) bool {
	return r.metBy(func(kind string) bool { return len(g.OfKind(kind)) > 0 }, globals)
}

// metBy reports whether a bundle that has the kinds has says yes to, under
// the run's globals, satisfies every clause.
func (r requirement) metBy(has func(kind string) bool, globals rules.Globals) bool {
	for _, clause := range r {
		if !clauseMet(clause, has, globals) {
			return false
		}
	}
	return true
}

func clauseMet(clause []string, has func(kind string) bool, globals rules.Globals) bool {
	for _, alt := range clause {
		if alt == GlobalArgoCD {
			if globals.ArgoCD {
				return true
			}
		} else if has(alt) {
			return true
		}
	}
	return false
}

// String renders the requirement as it reads: "Rollout and (Service or
// DestinationRule)".
func (r requirement) String() string {
	parts := make([]string, len(r))
	for i, clause := range r {
		parts[i] = strings.Join(clause, " or ")
		if len(clause) > 1 && len(r) > 1 {
			parts[i] = "(" + parts[i] + ")"
		}
	}
	return strings.Join(parts, " and ")
}

// parseRequires reads custom.requires: a list whose entries are a kind, the
// word globals.argocd, or a list of those (one of which must hold). Every
// kind must be one the policy declares in custom.kinds (it can read no
// other). Absent, the policy has no requirement.
func parseRequires(v any, kinds []string) (requirement, error) {
	if v == nil {
		return nil, nil
	}
	raw, ok := v.([]any)
	if !ok || len(raw) == 0 {
		return nil, errors.New("custom.requires must be a non-empty list of kinds (each entry a kind, globals.argocd, or a list of those of which one must be present)")
	}
	declared := newKindSet(kinds)
	var out requirement
	for _, entry := range raw {
		var alts []any
		switch e := entry.(type) {
		case string:
			alts = []any{e}
		case []any:
			alts = e
		default:
			return nil, fmt.Errorf("custom.requires entry %v is not a kind or a list of kinds", entry)
		}
		if len(alts) == 0 {
			return nil, errors.New("custom.requires has an empty list of alternatives")
		}
		clause := make([]string, 0, len(alts))
		for _, a := range alts {
			s, ok := a.(string)
			switch {
			case !ok || s == "":
				return nil, fmt.Errorf("custom.requires entry %v is not a kind or a list of kinds", entry)
			case s == AllKinds:
				return nil, fmt.Errorf("custom.requires cannot name %q (it would hold for any bundle with an object: leave requires out)", AllKinds)
			case strings.HasPrefix(s, "globals."):
				if s != GlobalArgoCD {
					return nil, fmt.Errorf("custom.requires names %s; the only global it can name is %s", s, GlobalArgoCD)
				}
			case !declared.has(s):
				return nil, fmt.Errorf("custom.requires names kind %s, which custom.kinds does not declare (a policy can only need a kind it reads)", s)
			}
			clause = append(clause, s)
		}
		out = append(out, clause)
	}
	return out, nil
}
