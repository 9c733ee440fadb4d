package units

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// templatePatch, as Argo CD's controller applies it to each generated
// Application: the patch text is rendered with the parameter set (Go
// template or fasttemplate, like the template), read as JSON when it
// starts with '{' and as YAML otherwise, checked against the Application
// type, and merged into the rendered Application with a strategic merge
// patch. Application declares no merge keys, so that is: mappings merged
// key by key, a null deleting its key, lists and scalars replaced, and
// the `$patch: replace|delete` directives. spec.project keeps the
// template's value (Argo CD ignores a patched project).

// patchError is a templatePatch that fails (an error Argo CD has too) or
// that rolloutlint does not apply (limit).
type patchError struct {
	pos   graph.Position
	msg   string
	limit bool
}

// applyTemplatePatch patches a rendered template (app) with the set's
// templatePatch node rendered with the parameters p.
func (x *expander) applyTemplatePatch(app, patch *yaml.Node, p map[string]any) (*yaml.Node, *patchError) {
	pos := graph.NodePos(x.set.file, patch)
	text, err := x.render(patch.Value, p)
	if err != nil {
		var ne *notEvaluated
		if errors.As(err, &ne) {
			return nil, &patchError{pos: pos, msg: "templatePatch: " + err.Error(), limit: true}
		}
		return nil, &patchError{pos: pos, msg: "error replacing values in templatePatch: " + err.Error()}
	}
	data := []byte(text)
	if t := strings.TrimSpace(text); t == "" || t[0] != '{' {
		if data, err = sigsyaml.YAMLToJSON([]byte(text)); err != nil {
			return nil, &patchError{pos: pos, msg: "templatePatch does not parse: " + strings.TrimPrefix(err.Error(), "error converting YAML to JSON: yaml: ")}
		}
	}
	var typed patchedApplication
	if err := json.Unmarshal(data, &typed); err != nil {
		return nil, &patchError{pos: pos, msg: "invalid templatePatch: " + err.Error()}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, &patchError{pos: pos, msg: "templatePatch does not parse: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	body := &doc
	if body.Kind == yaml.DocumentNode && len(body.Content) > 0 {
		body = body.Content[0]
	}
	if body.Kind == 0 || body.ShortTag() == "!!null" {
		return app, nil // an empty patch changes nothing
	}
	if body.Kind != yaml.MappingNode {
		return nil, &patchError{pos: pos, msg: "invalid templatePatch: it is not a mapping"}
	}
	x.placePatch(body, patch, text)
	out, perr := mergePatch(app, body)
	if perr != "" {
		return nil, &patchError{pos: pos, msg: "templatePatch: " + perr, limit: true}
	}
	if out == nil {
		return nil, &patchError{pos: pos, msg: "templatePatch deletes the whole Application ($patch: delete)"}
	}
	restoreProject(out, app)
	return out, nil
}

// patchedApplication is the part of Argo CD's Application type a
// templatePatch is checked against (json.Unmarshal's type errors: a list
// where a string goes, say): the fields rolloutlint reads.
type patchedApplication struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Finalizers  []string          `json:"finalizers"`
	} `json:"metadata"`
	Spec struct {
		Project     string          `json:"project"`
		Source      *patchedSource  `json:"source"`
		Sources     []patchedSource `json:"sources"`
		Destination struct {
			Server    string `json:"server"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"destination"`
	} `json:"spec"`
}

type patchedSource struct {
	RepoURL        string `json:"repoURL"`
	Path           string `json:"path"`
	Chart          string `json:"chart"`
	TargetRevision string `json:"targetRevision"`
	Ref            string `json:"ref"`
	Helm           *struct {
		ValueFiles  []string `json:"valueFiles"`
		ReleaseName string   `json:"releaseName"`
		Values      string   `json:"values"`
		Namespace   string   `json:"namespace"`
		Parameters  []struct {
			Name        string `json:"name"`
			Value       string `json:"value"`
			ForceString bool   `json:"forceString"`
		} `json:"parameters"`
	} `json:"helm"`
	Kustomize *struct {
		NamePrefix string `json:"namePrefix"`
		NameSuffix string `json:"nameSuffix"`
		Namespace  string `json:"namespace"`
	} `json:"kustomize"`
}

// mergePatch is a strategic merge patch of dst by patch (both mappings),
// for a type without merge keys. It returns nil when the patch deletes dst,
// and a reason when the patch uses a directive it does not apply.
func mergePatch(dst, patch *yaml.Node) (*yaml.Node, string) {
	directive := ""
	for i := 0; i+1 < len(patch.Content); i += 2 {
		k := patch.Content[i].Value
		switch {
		case k == "$patch":
			directive = patch.Content[i+1].Value
		case strings.HasPrefix(k, "$"):
			return nil, fmt.Sprintf("the %s directive is not applied", k)
		}
	}
	switch directive {
	case "":
	case "delete":
		return nil, ""
	case "replace":
		return withoutNulls(patch), ""
	default:
		return nil, fmt.Sprintf("$patch: %s is not applied", directive)
	}
	if dst == nil || dst.Kind != yaml.MappingNode {
		return withoutNulls(patch), ""
	}
	out := *dst
	out.Content = append([]*yaml.Node(nil), dst.Content...)
	for i := 0; i+1 < len(patch.Content); i += 2 {
		k, v := patch.Content[i], patch.Content[i+1]
		at := -1
		for j := 0; j+1 < len(out.Content); j += 2 {
			if out.Content[j].Value == k.Value {
				at = j
				break
			}
		}
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
			if at >= 0 {
				out.Content = append(out.Content[:at], out.Content[at+2:]...)
			}
			continue
		}
		var merged *yaml.Node
		if at >= 0 && v.Kind == yaml.MappingNode && out.Content[at+1].Kind == yaml.MappingNode {
			var why string
			if merged, why = mergePatch(out.Content[at+1], v); why != "" {
				return nil, why
			}
		} else if v.Kind == yaml.MappingNode {
			var why string
			if merged, why = mergePatch(nil, v); why != "" {
				return nil, why
			}
		} else {
			merged = v
		}
		switch {
		case merged == nil && at >= 0:
			out.Content = append(out.Content[:at], out.Content[at+2:]...)
		case merged == nil:
		case at >= 0:
			out.Content[at+1] = merged
		default:
			out.Content = append(out.Content, k, merged)
		}
	}
	return &out, ""
}

// withoutNulls is a patch's new mapping without its null fields (the
// strategic merge patch drops them).
func withoutNulls(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return n
	}
	out := *n
	out.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "$patch" || (v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null") {
			continue
		}
		out.Content = append(out.Content, k, withoutNulls(v))
	}
	return &out
}

// restoreProject gives the patched Application the template's spec.project
// (none when the template has none).
func restoreProject(patched, app *yaml.Node) {
	orig := child(child(app, "spec"), "project")
	spec := child(patched, "spec")
	if spec == nil || spec.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(spec.Content); i += 2 {
		if spec.Content[i].Value == "project" {
			if orig == nil {
				spec.Content = append(spec.Content[:i:i], spec.Content[i+2:]...)
			} else {
				spec.Content[i+1] = orig
			}
			return
		}
	}
}

// placePatch moves the positions of a rendered patch's nodes into the
// ApplicationSet's file. In a block scalar (templatePatch: |), a rendered
// line that is written as such in the patch is that line; one a template
// made is the first line after the last such one that holds a template
// and begins as it does (so a range's items land on the range's body);
// others, and patches written in a single string, are at the patch's
// first line.
func (x *expander) placePatch(body, patch *yaml.Node, rendered string) {
	start, indent := patch.Line, patch.Column
	var src []string
	if (patch.Style&(yaml.LiteralStyle)) != 0 && patch.Line < len(x.set.lines) {
		src = strings.Split(strings.TrimSuffix(patch.Value, "\n"), "\n")
		start = patch.Line + 1
		for _, l := range x.set.lines[patch.Line:] { // the line after the indicator on
			if strings.TrimSpace(l) != "" {
				indent = len(l) - len(strings.TrimLeft(l, " ")) + 1
				break
			}
		}
	}
	lineMap := map[int]int{} // rendered line (1-based) -> file line
	if src != nil {
		lastExact := -1
		for i, r := range strings.Split(rendered, "\n") {
			found := -1
			for k := lastExact + 1; k < len(src); k++ {
				if src[k] == r {
					found, lastExact = k, k
					break
				}
			}
			if found < 0 {
				for k := lastExact + 1; k < len(src); k++ {
					if j := strings.Index(src[k], "{{"); j >= 0 && strings.HasPrefix(r, src[k][:j]) && strings.TrimSpace(src[k][:j]) != "" {
						found = k
						break
					}
				}
			}
			if found >= 0 {
				lineMap[i+1] = start + found
			}
		}
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if l, ok := lineMap[n.Line]; ok {
			n.Line, n.Column = l, n.Column+indent-1
		} else {
			n.Line, n.Column = patch.Line, patch.Column
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(body)
}
