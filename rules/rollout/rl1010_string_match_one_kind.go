package rollout

import (
	"fmt"
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// StringMatch reports header, method and path matches of route steps that do
// not set exactly one of exact, regex and prefix.
var StringMatch = &rules.Rule{
	ID: "RL1010", Name: "string-match-one-kind", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"rollout", "traffic"},
	Summary: "A setHeaderRoute/setMirrorRoute match value sets none or several of exact, regex and prefix.",
	Doc: rules.Doc{
		Why: `Each match value of a \'setHeaderRoute\' (\'headerValue\') or \'setMirrorRoute\' (\'method\',
\'path\') is one comparison: exactly one of \'exact\', \'regex\' or \'prefix\' (a mirror
\'headers\' entry may also be empty, Istio's "header present", but not set several). Argo
Rollouts rejects none ("StringMatch value missed") and several ("StringMatch match value
must have exactly one of the following") and marks the Rollout \'InvalidSpec\'. With ALB
header routes only \'exact\' is supported.`,
		Bad: `
      - setHeaderRoute:
          name: header-canary
          match:
          - headerName: x-canary
            headerValue: {exact: "true", prefix: "t"}
`,
		Good: `
      - setHeaderRoute:
          name: header-canary
          match:
          - headerName: x-canary
            headerValue: {exact: "true"}
`,
	},
	Since:   "v0.1.0",
	Sharded: true,
	Run: func(p *rules.Pass) error {
		eachStep(p, func(r *graph.Resource, ro *v1alpha1.Rollout, i int, s *v1alpha1.CanaryStep, path string) {
			check := func(at, what string, m *v1alpha1.StringMatch, albOnlyExact, allowNone bool) {
				var set []string
				if m != nil {
					for _, f := range []struct{ name, val string }{{"exact", m.Exact}, {"regex", m.Regex}, {"prefix", m.Prefix}} {
						if f.val != "" {
							set = append(set, f.name)
						}
					}
				}
				switch {
				case len(set) == 0 && !allowNone:
					p.ReportDetail(r, at, fmt.Sprintf("step %d: %s sets none of exact, regex and prefix", i, what),
						"Argo Rollouts marks the Rollout InvalidSpec.")
				case len(set) > 1:
					// Point at the second kind: the first one is presumably meant.
					second := at + "." + laterOf(r, at, set)
					p.ReportDetail(r, second, fmt.Sprintf("step %d: %s sets %s", i, what, strings.Join(set, " and ")),
						"A match value takes exactly one of exact, regex and prefix.")
				case albOnlyExact && set[0] != "exact":
					p.Reportf(r, at+"."+set[0], "step %d: %s uses %s, but ALB header routes support only exact", i, what, set[0])
				}
			}
			if h := s.SetHeaderRoute; h != nil {
				alb := anyRouter(routingOf(ro), "alb")
				for j, m := range h.Match {
					mp := graph.Index(path+".setHeaderRoute.match", j)
					check(mp+".headerValue", "header match "+quoteName(m.HeaderName), m.HeaderValue, alb, false)
				}
			}
			if mr := s.SetMirrorRoute; mr != nil {
				for j, m := range mr.Match {
					mp := graph.Index(path+".setMirrorRoute.match", j)
					if m.Method != nil {
						check(mp+".method", "mirror match method", m.Method, false, false)
					}
					if m.Path != nil {
						check(mp+".path", "mirror match path", m.Path, false, false)
					}
					keys := make([]string, 0, len(m.Headers))
					for k := range m.Headers {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						v := m.Headers[k]
						// An empty header match is Istio's "header present".
						check(graph.Key(mp+".headers", k), "mirror match header "+quoteName(k), &v, false, true)
					}
				}
			}
		})
		return nil
	},
}

// laterOf returns which of the keys under base appears last in the file.
func laterOf(r *graph.Resource, base string, keys []string) string {
	best := keys[0]
	for _, k := range keys[1:] {
		if a, _ := later(r, base+"."+k, base+"."+best); a == base+"."+k {
			best = k
		}
	}
	return best
}

// quoteName quotes a name for a message, or says it is empty.
func quoteName(s string) string {
	if s == "" {
		return "(no name)"
	}
	return "\"" + s + "\""
}
