package tool

import (
	"fmt"
	"path/filepath"
	"reflect"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// DuplicateObject reports an object the bundle defines more than once.
var DuplicateObject = &rules.Rule{
	ID: "RL0013", Name: "duplicate-object", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Kinds:   []string{"*"},
	Summary: "The bundle defines the same object (API group, kind, namespace and name) twice.",
	Doc: rules.Doc{
		Why: `An object is named by its API group, kind, namespace and name; its apiVersion is only the
form it is written in. Two documents that name the same object are one object to the
cluster: \'kubectl apply\' applies both, in file order, and the later replaces the earlier;
kustomize refuses to build ("already registered id"); Argo CD reports a repeated resource,
or, when two Applications deploy it, a resource both of them manage. rolloutlint checks
references against the first definition, which is not what the cluster ends up with.

The usual cause is a copied file: a second Rollout or VirtualService pasted from the first
and not renamed, two scenarios kept in one directory, or one manifest listed by two units
that deploy to the same namespace. The finding is on each later definition, with the first
as its related location. Two identical copies are a warning: the cluster gets the same
object, but the tools above still stop or warn on it. In a repository lint, the same object in
two directories of plain manifests is not reported: such directories are variants applied one
at a time (examples, environments), though they are linted together for their references.`,
		Bad: `
apiVersion: v1
kind: Service
metadata:
  name: checkout-canary
spec:
  selector: {app: checkout}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata:
  name: checkout-canary   # pasted, not renamed
spec:
  selector: {app: checkout}
  ports: [{port: 80}]
`,
		Good: `
apiVersion: v1
kind: Service
metadata:
  name: checkout-canary
spec:
  selector: {app: checkout}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata:
  name: checkout-stable
spec:
  selector: {app: checkout}
  ports: [{port: 80}]
`,
	},
	Since: "v0.1.0",
	Run:   runDuplicateObject,
}

func runDuplicateObject(p *rules.Pass) error {
	for _, r := range p.Graph.Duplicates() { // every other object is the first of its key
		if r.Name == "" {
			continue
		}
		all := p.Graph.All(r.Kind, r.Namespace, r.Name)
		if len(all) < 2 {
			continue
		}
		if p.Globals.DuplicatesByDirectory {
			all = sameDirectory(all, r)
		}
		first := firstOfGroup(all, r.Group)
		if first == r || first == nil {
			continue // reported on the later definitions
		}
		d := rules.Diagnostic{Resource: r, Path: "metadata.name",
			Related: []rules.Related{rules.RelatedAt(first, "metadata.name", "the first definition")}}
		what := r.Kind + " " + name(r)
		if sameContent(r, first) {
			d.Severity = rules.Warning
			d.Message = fmt.Sprintf("%s is defined again, identically", what)
			d.Detail = "The cluster gets the same object, but kustomize refuses to build a bundle that holds it twice and Argo CD reports a repeated resource. Keep one of them."
		} else {
			d.Message = fmt.Sprintf("%s is defined again, differently", what)
			d.Detail = "Applied together, the later definition replaces the earlier, while references are checked against the first. Rename one of them, or keep one."
		}
		p.ReportDiag(d)
	}
	return nil
}

// sameContent reports whether two definitions of one object say the same,
// whatever apiVersion each is written in.
func sameContent(a, b *graph.Resource) bool {
	oa, ob := a.Object(), b.Object()
	if len(oa) != len(ob) {
		return false
	}
	for k, v := range oa {
		if w, ok := ob[k]; !ok || k != "apiVersion" && !reflect.DeepEqual(v, w) {
			return false
		}
	}
	return true
}

// firstOfGroup is the first of the objects of one key that belongs to the
// API group: kinds of one name in two groups (Istio's Gateway and the
// Gateway API's) are different objects.
// sameDirectory keeps the definitions in r's directory.
func sameDirectory(all []*graph.Resource, r *graph.Resource) []*graph.Resource {
	var out []*graph.Resource
	for _, o := range all {
		if filepath.Dir(o.File) == filepath.Dir(r.File) {
			out = append(out, o)
		}
	}
	return out
}

func firstOfGroup(all []*graph.Resource, group string) *graph.Resource {
	for _, o := range all {
		if o.Group == group {
			return o
		}
	}
	return nil
}

// name is an object's namespace/name, or its name when cluster-scoped.
func name(r *graph.Resource) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}
