// Command appset is the ApplicationSet conformance harness: it runs Argo
// CD's own ApplicationSet code (the list, git, matrix and merge generators,
// generators.Transform and the template renderer utils.Render, through the
// controller's template.GenerateApplications) on the ApplicationSets of a
// repository's working tree, and prints what they generate as JSON. It is a
// module of its own, so that rolloutlint's go.mod never gains Argo CD's
// dependencies; internal/appsetconformance (main module) compares its
// output with rolloutlint's expansion (make conformance-appset).
//
//	appset -repo DIR [-argocd VERSION] FILE...
//
// FILE is an ApplicationSet manifest, relative to DIR (the repository
// root). The git generator reads DIR as the repository whatever its repoURL
// and revision: directories are listed as the repo server lists them (every
// directory of the checkout but hidden ones), files are listed by Argo CD's
// git client (`git ls-files`, the default globbing) on a git index of DIR's
// files, made in a temporary directory.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	log "github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	"github.com/argoproj/argo-cd/v3/applicationset/utils"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// Output is what the harness prints.
type Output struct {
	// ArgoCD is the github.com/argoproj/argo-cd/v3 version the harness was
	// built with.
	ArgoCD string `json:"argocd"`
	// Repo and Files are the arguments: the repository root and the
	// ApplicationSet files, relative to it.
	Repo  string   `json:"repo"`
	Files []string `json:"files"`
	Sets  []Set    `json:"sets"`
}

// Set is one ApplicationSet and what Argo CD generated from it.
type Set struct {
	File string `json:"file"`
	Name string `json:"name"`
	// Skipped says why the set was not run (a generator that needs a
	// cluster or a network).
	Skipped string `json:"skipped,omitempty"`
	// Error is GenerateApplications' error: the controller then creates
	// none of the set's Applications.
	Error        string `json:"error,omitempty"`
	Applications []App  `json:"applications"`
}

// App is the part of a generated Application that rolloutlint's expansion
// predicts.
type App struct {
	Name        string      `json:"name"`
	Namespace   string      `json:"namespace"`
	Project     string      `json:"project"`
	Sources     []Source    `json:"sources"`
	Destination Destination `json:"destination"`
}

// Source is one source of an Application.
type Source struct {
	RepoURL        string `json:"repoURL"`
	Path           string `json:"path,omitempty"`
	Chart          string `json:"chart,omitempty"`
	TargetRevision string `json:"targetRevision,omitempty"`
	// Helm and Kustomize are the source's options as JSON objects (the
	// fields Argo CD's types serialise), compared as data.
	Helm      map[string]any `json:"helm,omitempty"`
	Kustomize map[string]any `json:"kustomize,omitempty"`
}

// Destination is where an Application deploys.
type Destination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

func main() {
	repo := flag.String("repo", ".", "repository root: the git generator's tree, and what FILE arguments are relative to")
	version := flag.String("argocd", "", "Argo CD version to name in the output")
	flag.Parse()
	log.SetOutput(io.Discard) // the controller's logs are not the output
	out, err := run(*repo, *version, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "appset:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "appset:", err)
		os.Exit(1)
	}
}

func run(repo, version string, files []string) (*Output, error) {
	if len(files) == 0 {
		return nil, errors.New("no ApplicationSet file given")
	}
	checkout, cleanup, err := newCheckout(repo)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	out := &Output{ArgoCD: version, Repo: filepath.ToSlash(repo), Files: files, Sets: []Set{}}
	for _, f := range files {
		sets, err := readSets(filepath.Join(repo, f))
		if err != nil {
			return nil, err
		}
		for _, s := range sets {
			out.Sets = append(out.Sets, generate(filepath.ToSlash(f), s, checkout))
		}
	}
	return out, nil
}

// readSets reads the ApplicationSets of a manifest file.
func readSets(file string) ([]*v1alpha1.ApplicationSet, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read ApplicationSets: %w", err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*v1alpha1.ApplicationSet
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		var head metav1.TypeMeta
		if yaml.Unmarshal(doc, &head) != nil || head.Kind != "ApplicationSet" || !strings.HasPrefix(head.APIVersion, "argoproj.io/") {
			continue
		}
		var s v1alpha1.ApplicationSet
		if err := yaml.Unmarshal(doc, &s); err != nil {
			return nil, fmt.Errorf("%s: ApplicationSet: %w", file, err)
		}
		out = append(out, &s)
	}
}

// offline are the generators that read only the ApplicationSet and the
// repository (the JSON keys of ApplicationSetGenerator).
var offline = map[string]bool{"list": true, "git": true, "matrix": true, "merge": true}

// needsMore names a generator of the set that needs a cluster, a network or
// a plugin, "" when there is none.
func needsMore(gens []map[string]json.RawMessage) string {
	for _, g := range gens {
		for k, v := range g {
			if k == "selector" {
				continue
			}
			if !offline[k] {
				return k
			}
			if k == "matrix" || k == "merge" {
				var nested struct {
					Generators []map[string]json.RawMessage `json:"generators"`
				}
				if json.Unmarshal(v, &nested) == nil {
					if n := needsMore(nested.Generators); n != "" {
						return n
					}
				}
			}
		}
	}
	return ""
}

func generate(file string, s *v1alpha1.ApplicationSet, checkout *checkout) Set {
	res := Set{File: file, Name: s.Name, Applications: []App{}}
	raw, err := json.Marshal(s.Spec.Generators)
	if err == nil {
		var gens []map[string]json.RawMessage
		if json.Unmarshal(raw, &gens) == nil {
			if n := needsMore(gens); n != "" {
				res.Skipped = "the " + n + " generator needs more than the repository"
				return res
			}
		}
	}
	c := projectClient(s)
	repos := &localRepos{checkout: checkout}
	terminal := map[string]generators.Generator{
		"List": generators.NewListGenerator(),
		"Git":  generators.NewGitGenerator(repos, ""),
	}
	nested := map[string]generators.Generator{
		"List":   terminal["List"],
		"Git":    terminal["Git"],
		"Matrix": generators.NewMatrixGenerator(terminal),
		"Merge":  generators.NewMergeGenerator(terminal),
	}
	top := map[string]generators.Generator{
		"List":   terminal["List"],
		"Git":    terminal["Git"],
		"Matrix": generators.NewMatrixGenerator(nested),
		"Merge":  generators.NewMergeGenerator(nested),
	}
	apps, _, err := template.GenerateApplications(log.NewEntry(log.StandardLogger()), *s, top, &utils.Render{}, c)
	if err != nil {
		res.Error = err.Error()
		return res // the controller creates none of the set's Applications
	}
	for _, a := range apps {
		res.Applications = append(res.Applications, appOf(a))
	}
	sort.SliceStable(res.Applications, func(i, j int) bool { return res.Applications[i].Name < res.Applications[j].Name })
	return res
}

// projectClient is a controller-runtime client holding the AppProject the
// set's template names (the git generator reads it for its signature keys),
// in the set's namespace.
func projectClient(s *v1alpha1.ApplicationSet) client.Client {
	scheme := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(scheme)
	b := fake.NewClientBuilder().WithScheme(scheme)
	if p := s.Spec.Template.Spec.Project; !strings.Contains(p, "{{") {
		b = b.WithObjects(&v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: p, Namespace: s.Namespace}})
	}
	return b.Build()
}

func appOf(a v1alpha1.Application) App {
	out := App{Name: a.Name, Namespace: a.Namespace, Project: a.Spec.Project, Sources: []Source{},
		Destination: Destination{Server: a.Spec.Destination.Server, Name: a.Spec.Destination.Name, Namespace: a.Spec.Destination.Namespace}}
	var srcs []v1alpha1.ApplicationSource
	if a.Spec.Source != nil {
		srcs = append(srcs, *a.Spec.Source)
	}
	srcs = append(srcs, a.Spec.Sources...)
	for _, s := range srcs {
		src := Source{RepoURL: s.RepoURL, Path: s.Path, Chart: s.Chart, TargetRevision: s.TargetRevision}
		if s.Helm != nil {
			src.Helm = asObject(s.Helm)
		}
		if s.Kustomize != nil {
			src.Kustomize = asObject(s.Kustomize)
		}
		out.Sources = append(out.Sources, src)
	}
	return out
}

func asObject(v any) map[string]any {
	data, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return map[string]any{"error": err.Error()}
	}
	return m
}
