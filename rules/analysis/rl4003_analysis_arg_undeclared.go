package analysis

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// ArgUndeclared reports `{{...}}` tags in metrics that the template cannot resolve.
var ArgUndeclared = &rules.Rule{
	ID: "RL4003", Name: "analysis-arg-undeclared", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: templateKinds, Tags: tags,
	Summary: "A metric uses {{args.x}} but the AnalysisTemplate declares no arg x.",
	Doc: rules.Doc{
		Why: `Argo Rollouts resolves every \'{{...}}\' tag anywhere in a metric (query, address, headers, job spec,
conditions) against the template's own \'spec.args\'. A tag naming an arg the template does not declare,
even one a sibling template or the Rollout declares, fails with "failed to resolve {{args.x}}": the
Rollout is marked \'InvalidSpec\' (step and pre/post-promotion analysis) or the AnalysisRun errors.
Tags other than \'args.*\' resolve only in experiments (\'templates.*\', \'experiment.*\').`,
		Bad: `
spec:
  args:
  - name: service-name
  metrics:
  - name: errors
    provider:
      prometheus:
        query: sum(rate(istio_requests_total{destination_service_name="{{args.service}}"}[1m]))
`,
		Good: `
spec:
  args:
  - name: service-name
  metrics:
  - name: errors
    provider:
      prometheus:
        query: sum(rate(istio_requests_total{destination_service_name="{{args.service-name}}"}[1m]))
`,
	},
	Since: "v0.1.0",
	// A template's findings depend on it and on lookups (its users) only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		templateSpecs(p, func(t *graph.Resource, spec *v1alpha1.AnalysisTemplateSpec) {
			declared := map[string]bool{}
			for _, a := range spec.Args {
				declared[a.Name] = true
			}
			if data := t.FastSource(); data != nil && tagsResolve(data, declared) {
				return // every tag of the document names a declared arg
			}
			t.WithObjectFields(metricsField, func(obj map[string]any) {
				generic, _ := obj["spec"].(map[string]any)
				metrics, ok := generic["metrics"]
				if !ok {
					return
				}
				eachString(metrics, "spec.metrics", func(path, value string) {
					for _, ph := range promql.AllPlaceholders(value) {
						var msg string
						switch {
						case ph.Arg != "" && !declared[ph.Arg]:
							msg = fmt.Sprintf("{{%s}} names an arg %s does not declare", ph.Tag, templateName(t))
							if d := nearest(ph.Arg, spec.Args); d != "" {
								msg += fmt.Sprintf(" (declared: %q)", d)
							}
						case ph.Arg == "" && !strings.HasPrefix(ph.Tag, "templates.") && !strings.HasPrefix(ph.Tag, "experiment."):
							msg = fmt.Sprintf("{{%s}} is not an args.<name> tag", ph.Tag)
						default:
							continue
						}
						p.ReportDiag(rules.Diagnostic{Resource: t, Path: path, Message: msg,
							Detail: fmt.Sprintf("Argo Rollouts fails with \"failed to resolve {{%s}}\".", ph.Tag),
							Pos:    p.Graph.PosInScalar(t, path, ph.Start, ph.End), Related: users(p.Graph, t)})
					}
				})
			})
		})
		return nil
	},
}

// tagsResolve reports whether every `{{...}}` of a fast-decoded document's
// text is `{{args.<declared>}}` on one line in plain characters, so that no
// string of its object holds a tag RL4003 reports, without decoding it. The
// fast decoder takes a scalar's text as written but for folding line breaks
// (into spaces or newlines), a doubled quote in single quotes and backslash
// escapes: in a text without backslashes every `{{` of a decoded string is a
// `{{` of the text, followed by the same plain characters up to the same `}}`.
func tagsResolve(data []byte, declared map[string]bool) bool {
	if bytes.IndexByte(data, '\\') >= 0 {
		return false
	}
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte("{{"))
		if i < 0 {
			return true
		}
		start := off + i + 2
		j := bytes.Index(data[start:], []byte("}}"))
		if j < 0 {
			return false
		}
		tag := data[start : start+j]
		for _, c := range tag {
			if !plainTagByte(c) {
				return false
			}
		}
		arg, ok := bytes.CutPrefix(bytes.TrimSpace(tag), []byte("args."))
		if !ok || !declared[string(arg)] {
			return false
		}
		off = start + j + 2
	}
}

// plainTagByte reports whether c may be part of a tag tagsResolve reads as
// written: a letter, a digit, a space, '-', '_' or '.'.
func plainTagByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == ' ' || c == '-' || c == '_' || c == '.'
}

// nearest returns the declared arg closest to name, if it is close.
func nearest(name string, args []v1alpha1.Argument) string {
	best, bestD := "", -1
	for _, a := range args {
		if d := textdist.Distance(a.Name, name); similar(a.Name, name) && (bestD < 0 || d < bestD) {
			best, bestD = a.Name, d
		}
	}
	return best
}

// metricsField selects spec.metrics, the part of a template eachString walks.
var metricsField = &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{
	"spec": {Sub: map[string]*fastyaml.Fields{"metrics": nil}},
}}

// eachString calls fn for every string under a decoded value that holds a
// `{{` (where a placeholder can be) with its field path, visiting mapping
// keys in sorted order so output does not depend on map iteration. The path
// is built only for such strings: most strings of a template hold none.
func eachString(v any, path string, fn func(path, value string)) {
	var steps []pathStep
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			if strings.Contains(t, "{{") {
				p := path
				for _, s := range steps {
					if s.index < 0 {
						p = graph.Key(p, s.key)
					} else {
						p = graph.Index(p, s.index)
					}
				}
				fn(p, t)
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				steps = append(steps, pathStep{key: k, index: -1})
				walk(t[k])
				steps = steps[:len(steps)-1]
			}
		case []any:
			for i, c := range t {
				steps = append(steps, pathStep{index: i})
				walk(c)
				steps = steps[:len(steps)-1]
			}
		}
	}
	walk(v)
}

// pathStep is one step below eachString's base path: a key, or an index.
type pathStep struct {
	key   string
	index int // < 0 for a key
}
