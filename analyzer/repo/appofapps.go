package repo

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/internal/parallel"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/model/render"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// maxAppDepth bounds an app of apps: Applications a render makes, whose
// sources render Applications, and so on, this many levels below the
// first render.
const maxAppDepth = 5

// expandChildren renders the units of the Applications that rendered units
// make (an app-of-apps chart whose templates are Applications), level by
// level up to maxAppDepth, and returns them, with the units of the first
// discovery they replace (a chart or kustomization a child Application
// deploys is linted as it deploys it, not a second time with its
// defaults). results gets the new units' renders. An Application that is
// already in its own chain (a cycle, or a root deploying itself) is not
// expanded again: an info finding says so, at the Application.
//
// Only Helm renders are searched: the Applications of a kustomization or
// directory are files, which discovery reads as such.
func expandChildren(set *units.Set, first []*units.Unit, results map[*units.Unit]*render.Result, r *render.Renderer, ropts render.Options) (children []*units.Unit, dropped map[*units.Unit]bool) {
	dropped = map[*units.Unit]bool{}
	seen := map[string]bool{} // Application key and source path: one unit each
	for _, u := range first {
		if u.App != nil {
			seen[u.App.Key()+" "+u.App.SourcePath] = true
		}
	}
	pending := first
	for depth := 1; len(pending) > 0; depth++ {
		var next []*units.Unit
		for _, u := range pending {
			res := results[u]
			if res == nil || u.Kind != units.Helm {
				continue
			}
			chain := chainOf(u)
			for _, in := range res.Inputs {
				if in.Role != load.RoleRendered {
					continue
				}
				for _, a := range units.ApplicationsIn(in.Path, in.Data) {
					a.Origin = &units.Origin{Rendered: true, Data: in.Data, Parent: u, Chain: chain}
					name := "Application " + a.Key()
					if i := indexOf(chain, name); i >= 0 {
						res.Problems = append(res.Problems, graph.Problem{RuleID: render.RuleRender, Info: true, Pos: a.Pos("metadata.name"),
							Message: fmt.Sprintf("Application %s deploys itself again (%s): not expanded again", a.Name, strings.Join(append(chain[i:], name), " → ")),
							Detail: "An app of apps whose source renders an Application above it deploys it again; rolloutlint renders each " +
								"Application's source once in a chain, so the cycle ends here."})
						continue
					}
					if depth > maxAppDepth {
						res.Problems = append(res.Problems, graph.Problem{RuleID: render.RuleRender, Info: true, Pos: a.Pos("metadata.name"),
							Message: fmt.Sprintf("Application %s is %d levels below %s: its source is not rendered", a.Name, depth, chain[0]),
							Detail:  fmt.Sprintf("rolloutlint renders the Applications an app of apps makes, %d levels deep at most.", maxAppDepth)})
						continue
					}
					key := a.Key() + " " + a.SourcePath
					if seen[key] {
						continue
					}
					seen[key] = true
					cu := set.Deploy(a)
					if cu == nil {
						continue
					}
					next = append(next, cu)
				}
			}
		}
		if len(next) == 0 {
			break
		}
		// The units of the first discovery these replace.
		for _, cu := range next {
			for _, u := range first {
				if u.App != nil || dropped[u] {
					continue
				}
				if u.Dir == cu.Dir || cu.Kind == units.Directory && cu.App.Source.Directory != nil && cu.App.Source.Directory.Recurse && units.Within(u.Dir, cu.Dir) {
					dropped[u] = true
				}
			}
		}
		for _, cu := range next {
			if cu.Kind == units.Helm {
				r.StartHelm()
				break
			}
		}
		rendered := make([]*render.Result, len(next))
		parallel.For(len(next), 1, func(i int) {
			if ropts.Context != nil && ropts.Context.Err() != nil {
				return
			}
			rendered[i] = r.Render(next[i])
		})
		for i, cu := range next {
			if rendered[i] != nil {
				results[cu] = rendered[i]
			}
		}
		children = append(children, next...)
		pending = next
	}
	return children, dropped
}

// chainOf is what deploys a unit's objects, outermost first.
func chainOf(u *units.Unit) []string {
	if u.App == nil {
		return []string{u.Name()}
	}
	var chain []string
	if u.App.Origin != nil {
		chain = append(chain, u.App.Origin.Chain...)
	}
	return append(chain, "Application "+u.App.Key())
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// addSetProblems puts discovery's findings (ApplicationSet generators not
// expanded) into the render of a unit whose bundle holds their file; those
// of files the lint does not load (a discovery of the whole repository for
// files given alone) are dropped.
func addSetProblems(problems []graph.Problem, order []string, byGroup map[string]*bundleWork, results map[*units.Unit]*render.Result) {
	for _, p := range problems {
		var target *render.Result
		for _, g := range order {
			for _, u := range byGroup[g].units {
				res := results[u]
				if res == nil {
					continue
				}
				for _, in := range res.Inputs {
					if in.Path == p.Pos.File {
						target = res
					}
				}
				if target != nil {
					break
				}
			}
			if target != nil {
				break
			}
		}
		if target != nil {
			target.Problems = append(target.Problems, p)
		}
	}
}

// originInput is the document of an Application no file holds as written,
// for the bundle it deploys: the Application's document of its parent's
// render (mapped by the parent's mapper), or the Application an
// ApplicationSet generated, written out and mapped to the template's
// fields. The mapper to add is returned with it.
func originInput(a *units.Application, results map[*units.Unit]*render.Result, m *render.Mapper) (load.Input, bool) {
	o := a.Origin
	if o.Rendered {
		if pr := results[o.Parent]; pr != nil && m != nil {
			m.Merge(pr.Mapper)
		}
		line := 1
		if n := a.Node(); n != nil {
			line = n.Line
		}
		return load.Input{Path: a.File, Data: keepDocumentAt(o.Data, line), Role: load.RoleRendered}, true
	}
	if m == nil || a.Node() == nil {
		return load.Input{}, false
	}
	doc := &yaml.Node{Kind: yaml.MappingNode}
	doc.Content = append(doc.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "apiVersion"}, &yaml.Node{Kind: yaml.ScalarNode, Value: "argoproj.io/v1alpha1"},
		&yaml.Node{Kind: yaml.ScalarNode, Value: "kind"}, &yaml.Node{Kind: yaml.ScalarNode, Value: "Application"})
	for i := 0; i+1 < len(a.Node().Content); i += 2 {
		k, v := a.Node().Content[i], a.Node().Content[i+1]
		if k.Value == "metadata" && a.Namespace != "" && v.Kind == yaml.MappingNode && !hasKey(v, "namespace") {
			v = &yaml.Node{Kind: yaml.MappingNode, Content: append(append([]*yaml.Node{}, v.Content...),
				&yaml.Node{Kind: yaml.ScalarNode, Value: "namespace"}, &yaml.Node{Kind: yaml.ScalarNode, Value: a.Namespace})}
		}
		doc.Content = append(doc.Content, k, v)
	}
	data, err := yaml.Marshal(plain(doc))
	if err != nil {
		return load.Input{}, false
	}
	path := fmt.Sprintf("%s (ApplicationSet %s: Application %s)", a.File, o.Set, a.Name)
	m.AddDocument(path, data, a.Node(), a.File)
	return load.Input{Path: path, Data: data, Role: load.RoleRendered}, true
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// plain copies a node tree without its positions, comments and styles,
// so it is written out as plain block YAML.
func plain(n *yaml.Node) *yaml.Node {
	c := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Value: n.Value}
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		c.Style = n.Style
	}
	for _, k := range n.Content {
		c.Content = append(c.Content, plain(k))
	}
	return c
}

// keepDocumentAt blanks every line of a multi-document text but those of
// the document holding line, keeping each line where it is.
func keepDocumentAt(data []byte, line int) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	start, end := 0, len(lines) // the document's lines, 0-based, [start, end)
	for i, l := range lines {
		t := bytes.TrimRight(l, "\r\n")
		if !bytes.HasPrefix(t, []byte("---")) || len(t) > 3 && t[3] != ' ' && t[3] != '\t' {
			continue
		}
		if i < line-1 {
			start = i + 1
		} else {
			end = i
			break
		}
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i >= start && i < end {
			out.Write(l)
		} else if bytes.HasSuffix(l, []byte("\n")) {
			out.WriteString("\n")
		}
	}
	return out.Bytes()
}
