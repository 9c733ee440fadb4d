package units

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A generator's selector and template, as Argo CD's generators.Transform
// applies them.

// paramSelector is a generator's selector: every requirement must hold.
type paramSelector []requirement

// requirement is one matchLabels entry (operator "=") or matchExpressions
// item.
type requirement struct {
	key, op string
	values  []string
}

// parseSelector reads a generator's selector as Argo CD does (its own
// copy of LabelSelectorAsSelector, without Kubernetes' limits on label
// values): keys must be qualified names, In and NotIn need values, Exists
// and DoesNotExist none. An empty selector selects everything.
func parseSelector(n *yaml.Node) (paramSelector, error) {
	var spec struct {
		MatchLabels      map[string]string `yaml:"matchLabels"`
		MatchExpressions []struct {
			Key      string   `yaml:"key"`
			Operator string   `yaml:"operator"`
			Values   []string `yaml:"values"`
		} `yaml:"matchExpressions"`
	}
	if err := n.Decode(&spec); err != nil {
		return nil, fmt.Errorf("the selector is not a label selector (%v)", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	sel := paramSelector{}
	keys := make([]string, 0, len(spec.MatchLabels))
	for k := range spec.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys) // Argo CD reports the first bad key of a Go map: any
	for _, k := range keys {
		r := requirement{key: k, op: "=", values: []string{spec.MatchLabels[k]}}
		if err := r.validate(); err != nil {
			return nil, err
		}
		sel = append(sel, r)
	}
	for _, e := range spec.MatchExpressions {
		r := requirement{key: e.Key, values: e.Values}
		switch e.Operator {
		case "In", "NotIn", "Exists", "DoesNotExist":
			r.op = e.Operator
		default:
			return nil, fmt.Errorf("selector: %q is not a valid pod selector operator", e.Operator)
		}
		if err := r.validate(); err != nil {
			return nil, err
		}
		sel = append(sel, r)
	}
	return sel, nil
}

func (r requirement) validate() error {
	if errs := validation.IsQualifiedName(r.key); len(errs) > 0 {
		return fmt.Errorf("selector key %q: %s", r.key, strings.Join(errs, "; "))
	}
	switch r.op {
	case "In", "NotIn":
		if len(r.values) == 0 {
			return fmt.Errorf("selector key %q: for 'In', 'NotIn' operators, values set can't be empty", r.key)
		}
	case "Exists", "DoesNotExist":
		if len(r.values) != 0 {
			return fmt.Errorf("selector key %q: values set must be empty for Exists and DoesNotExist", r.key)
		}
	}
	return nil
}

// matches reports whether a parameter set is selected. Argo CD matches
// the parameters flattened (selectorLabels).
func (s paramSelector) matches(labels map[string]string) bool {
	for _, r := range s {
		v, has := labels[r.key]
		in := false
		for _, w := range r.values {
			in = in || v == w
		}
		ok := true
		switch r.op {
		case "=", "In":
			ok = has && in
		case "NotIn":
			ok = !has || !in
		case "Exists":
			ok = has
		case "DoesNotExist":
			ok = !has
		}
		if !ok {
			return false
		}
	}
	return true
}

// selectorLabels are a parameter set as a selector sees it: nested maps'
// keys and lists' indexes joined with dots (path.basename, zones.0), every
// value printed with %v. A list that is not of JSON values (the git
// generator's path.segments, a []string) is one value, printed as Go
// prints it ("[apps web]"); an empty map or list is no label.
func selectorLabels(p map[string]any) map[string]string {
	flat := map[string]any{}
	flatten("", p, flat) // fasttemplate's flattening: every value a %v string
	out := make(map[string]string, len(flat))
	for k, v := range flat {
		out[k] = v.(string)
	}
	return out
}

// generatorKinds are the generators a template or selector can belong to
// (the others are not expanded).
var generatorKinds = map[string]bool{"list": true, "git": true, "matrix": true, "merge": true}

// generatorTemplate is a top-level generator's own template, nil when it
// has none.
func generatorTemplate(g *yaml.Node) *yaml.Node {
	if g == nil || g.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(g.Content); i += 2 {
		if generatorKinds[g.Content[i].Value] {
			if t := child(g.Content[i+1], "template"); t != nil && t.Kind == yaml.MappingNode && len(t.Content) > 0 {
				return t
			}
		}
	}
	return nil
}

// mergeTemplate is a generator's template with the set's template merged
// under it, as mergo.Merge (no override) merges Argo CD's typed templates:
// a field the generator's template sets keeps its value, one it leaves
// empty ("", false, 0, null, an empty list) or does not write takes the
// set's; mappings are merged key by key, lists are not. Nodes keep their
// lines, so findings point at the template that set the field.
func mergeTemplate(gen, set *yaml.Node) *yaml.Node {
	if gen == nil {
		return set
	}
	if set == nil {
		return gen
	}
	if gen.Kind == yaml.MappingNode && set.Kind == yaml.MappingNode {
		out := *gen
		out.Content = append([]*yaml.Node(nil), gen.Content...)
		for i := 0; i+1 < len(set.Content); i += 2 {
			k, v := set.Content[i], set.Content[i+1]
			found := false
			for j := 0; j+1 < len(out.Content); j += 2 {
				if out.Content[j].Value == k.Value {
					out.Content[j+1] = mergeTemplate(out.Content[j+1], v)
					found = true
					break
				}
			}
			if !found {
				out.Content = append(out.Content, k, v)
			}
		}
		return &out
	}
	if emptyNode(gen) {
		return set
	}
	return gen
}

// emptyNode reports a value mergo treats as empty (so the other
// template's value is taken).
func emptyNode(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.SequenceNode:
		return len(n.Content) == 0
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return true
		case "!!str":
			return n.Value == ""
		case "!!bool":
			return n.Value == "false"
		case "!!int", "!!float":
			f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
			if err != nil {
				if i, ierr := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); ierr == nil {
					return i == 0
				}
			}
			return err == nil && f == 0
		}
	}
	return false
}
