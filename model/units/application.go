package units

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// Application is an Argo CD Application found in the tree, with the source
// it deploys (one per source of a multi-source Application).
type Application struct {
	Name, Namespace string
	// Project is spec.project.
	Project string
	// File is where the Application is written; Doc its document index.
	File string
	Doc  int
	// Source is the source this unit renders; SourcePath is the field path
	// of it in the Application (spec.source or spec.sources[i]).
	Source     Source
	SourcePath string
	// Destination is where the Application deploys.
	Destination Destination
	// Origin is set for an Application no file holds as written: one a
	// render made (an app of apps) or an ApplicationSet generated.
	Origin *Origin
	// node is the Application's top-level mapping, for positions.
	node *yaml.Node
}

// Origin says how an Application that is not written as such came to be.
type Origin struct {
	// Rendered: File names a renderer's output (not a file on disk), Data
	// is that output's text, and the parent unit's render maps positions
	// in it into the user's files.
	Rendered bool
	Data     []byte
	// Parent is the unit whose render made the Application (Rendered).
	Parent *Unit
	// Set names the ApplicationSet that generated the Application (File is
	// the ApplicationSet's file, and positions are in its template), and
	// Params the parameter set it was generated with.
	Set, Params string
	// Chain lists what deploys the Application, outermost first (units and
	// Applications, as Unit.Name and "Application NS/NAME" give them).
	Chain []string
}

// Key is the Application's identity: namespace and name.
func (a *Application) Key() string { return a.Namespace + "/" + a.Name }

// Destination is an Application's target cluster and namespace.
type Destination struct {
	Server, Name, Namespace string
}

// Key identifies the destination: the cluster (server URL or name) and
// the namespace.
func (d Destination) Key() string {
	cluster := d.Server
	if cluster == "" {
		cluster = "name:" + d.Name
	}
	return cluster + "|" + d.Namespace
}

// Source is one source of an Application, as Argo CD reads it.
type Source struct {
	RepoURL, Path, Chart, TargetRevision, Ref string
	Helm                                      *HelmSource
	Kustomize                                 *KustomizeSource
	Directory                                 *DirectorySource
	// Plugin is source.plugin: a Config Management Plugin renders the
	// source, which rolloutlint does not run.
	Plugin *PluginSource
}

// PluginSource is source.plugin (its name may be empty: Argo CD then
// finds the plugin by its discovery rules).
type PluginSource struct {
	Name string `yaml:"name"`
}

// HelmSource is source.helm.
type HelmSource struct {
	ReleaseName string   `yaml:"releaseName"`
	ValueFiles  []string `yaml:"valueFiles"`
	// Values is the inline values YAML (source.helm.values, a string).
	Values string `yaml:"values"`
	// ValuesObject is source.helm.valuesObject; it wins over Values.
	ValuesObject map[string]any  `yaml:"valuesObject"`
	Parameters   []HelmParameter `yaml:"parameters"`
	// IgnoreMissingValueFiles skips valueFiles that do not exist.
	IgnoreMissingValueFiles bool     `yaml:"ignoreMissingValueFiles"`
	Namespace               string   `yaml:"namespace"`
	KubeVersion             string   `yaml:"kubeVersion"`
	APIVersions             []string `yaml:"apiVersions"`
}

// HelmParameter is one --set (or --set-string when ForceString).
type HelmParameter struct {
	Name        string `yaml:"name"`
	Value       string `yaml:"value"`
	ForceString bool   `yaml:"forceString"`
}

// KustomizeSource is source.kustomize: Argo CD applies these with
// `kustomize edit` on the root kustomization before building it.
type KustomizeSource struct {
	NamePrefix        string            `yaml:"namePrefix"`
	NameSuffix        string            `yaml:"nameSuffix"`
	Namespace         string            `yaml:"namespace"`
	Images            []string          `yaml:"images"`
	CommonLabels      map[string]string `yaml:"commonLabels"`
	CommonAnnotations map[string]string `yaml:"commonAnnotations"`
	Replicas          []struct {
		Name  string `yaml:"name"`
		Count any    `yaml:"count"`
	} `yaml:"replicas"`
	Components []string `yaml:"components"`
	Patches    []any    `yaml:"patches"`
}

// DirectorySource is source.directory.
type DirectorySource struct {
	Recurse bool   `yaml:"recurse"`
	Include string `yaml:"include"`
	Exclude string `yaml:"exclude"`
}

// Node returns the Application's top-level mapping (lines of its file).
func (a *Application) Node() *yaml.Node { return a.node }

// Pos returns the position of a field of the Application (a field path such
// as spec.source.helm.parameters[0].value), or of the nearest field above
// it that is written.
func (a *Application) Pos(path string) graph.Position {
	cur := a.node
	best := cur
	for _, e := range graph.ParsePath(path) {
		var next *yaml.Node
		switch {
		case cur == nil:
		case e.IsKey && cur.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(cur.Content); i += 2 {
				if cur.Content[i].Value == e.Key {
					best, next = cur.Content[i], cur.Content[i+1]
					if next.Kind == yaml.ScalarNode {
						best = next
					}
					break
				}
			}
		case !e.IsKey && cur.Kind == yaml.SequenceNode && e.Index >= 0 && e.Index < len(cur.Content):
			next = cur.Content[e.Index]
			best = next
		}
		if next == nil {
			break
		}
		cur = next
	}
	return graph.NodePos(a.File, best)
}

// ApplicationsIn reads the Argo CD Applications of a manifest's text (a
// render's output, for an app of apps), with lines of that text.
func ApplicationsIn(file string, data []byte) []*Application { return applicationsIn(file, data) }

// applicationsIn reads the Argo CD Applications of a manifest file. Files
// without the word Application are not parsed; documents that do not parse
// are left to the lint, which reports them.
func applicationsIn(file string, data []byte) []*Application {
	if !bytes.Contains(data, []byte("Application")) {
		return nil
	}
	var out []*Application
	mappingDocuments(data, func(doc int, body *yaml.Node) {
		out = append(out, applicationFrom(file, doc, body, false)...)
	})
	return out
}

// mappingDocuments calls f with each document of data whose top is a
// mapping, and the document's index. It stops at the first document that
// does not parse: the lint reports it.
func mappingDocuments(data []byte, f func(doc int, body *yaml.Node)) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for doc := 0; ; doc++ {
		var root yaml.Node
		if err := dec.Decode(&root); err != nil {
			return // io.EOF, or a syntax error
		}
		body := &root
		if body.Kind == yaml.DocumentNode && len(body.Content) > 0 {
			body = body.Content[0]
		}
		if body.Kind == yaml.MappingNode {
			f(doc, body)
		}
	}
}

// applicationFrom reads the Application a mapping node holds (one per
// source): a document of File, or (template) an ApplicationSet's
// template after substitution, which has no apiVersion and kind of its own.
func applicationFrom(file string, doc int, body *yaml.Node, template bool) []*Application {
	var out []*Application
	var head struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name      string `yaml:"name"`
			Namespace string `yaml:"namespace"`
		} `yaml:"metadata"`
		Spec struct {
			Project     string `yaml:"project"`
			Destination struct {
				Server    string `yaml:"server"`
				Name      string `yaml:"name"`
				Namespace string `yaml:"namespace"`
			} `yaml:"destination"`
		} `yaml:"spec"`
	}
	if body.Decode(&head) != nil {
		return nil
	}
	if !template && (head.Kind != "Application" || !strings.HasPrefix(head.APIVersion, "argoproj.io/")) {
		return nil
	}
	d := head.Spec.Destination
	dest := Destination{Server: strings.TrimSpace(d.Server), Name: strings.TrimSpace(d.Name), Namespace: strings.TrimSpace(d.Namespace)}
	add := func(n *yaml.Node, path string) {
		var src struct {
			RepoURL        string           `yaml:"repoURL"`
			Path           string           `yaml:"path"`
			Chart          string           `yaml:"chart"`
			TargetRevision string           `yaml:"targetRevision"`
			Ref            string           `yaml:"ref"`
			Helm           *HelmSource      `yaml:"helm"`
			Kustomize      *KustomizeSource `yaml:"kustomize"`
			Directory      *DirectorySource `yaml:"directory"`
			Plugin         *PluginSource    `yaml:"plugin"`
		}
		if n == nil || n.Decode(&src) != nil {
			return
		}
		out = append(out, &Application{
			Name: head.Metadata.Name, Namespace: head.Metadata.Namespace, Project: head.Spec.Project, File: file, Doc: doc,
			Source: Source{RepoURL: src.RepoURL, Path: src.Path, Chart: src.Chart, TargetRevision: src.TargetRevision,
				Ref: src.Ref, Helm: src.Helm, Kustomize: src.Kustomize, Directory: src.Directory, Plugin: src.Plugin},
			SourcePath: path, Destination: dest, node: body,
		})
	}
	spec := child(body, "spec")
	if src := child(spec, "source"); src != nil {
		add(src, "spec.source")
	}
	if srcs := child(spec, "sources"); srcs != nil && srcs.Kind == yaml.SequenceNode {
		for i, n := range srcs.Content {
			add(n, fmt.Sprintf("spec.sources[%d]", i))
		}
	}
	return out
}

// child is the value of a key of a mapping node, or nil.
func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
