// Package appsetconformance compares rolloutlint's offline expansion of
// ApplicationSets (model/units) with what Argo CD's own ApplicationSet
// code generates from the same files: the output of the conformance/appset
// harness, recorded under testdata/conformance/appset or run live by
// make conformance-appset (docs/repositories.md "How the expansion is
// judged").
package appsetconformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/units"
)

// Observation is what the harness prints: every ApplicationSet of the
// files it was given, and what Argo CD generated from it.
type Observation struct {
	ArgoCD string `json:"argocd"`
	// Repo and Files are where the harness read the sets: the repository
	// root relative to rolloutlint's, and the files relative to Repo.
	Repo  string   `json:"repo,omitempty"`
	Files []string `json:"files,omitempty"`
	Sets  []Set    `json:"sets"`
}

// Set is one ApplicationSet's outcome.
type Set struct {
	File         string `json:"file"`
	Name         string `json:"name"`
	Skipped      string `json:"skipped,omitempty"`
	Error        string `json:"error,omitempty"`
	Applications []App  `json:"applications"`
}

// App is a generated Application, as far as rolloutlint predicts it.
type App struct {
	Name        string      `json:"name"`
	Namespace   string      `json:"namespace"`
	Project     string      `json:"project"`
	Sources     []Source    `json:"sources"`
	Destination Destination `json:"destination"`
}

// Source is one source of an Application; Helm and Kustomize are compared
// on the fields rolloutlint reads (units.HelmSource, units.KustomizeSource).
type Source struct {
	RepoURL        string         `json:"repoURL"`
	Path           string         `json:"path,omitempty"`
	Chart          string         `json:"chart,omitempty"`
	TargetRevision string         `json:"targetRevision,omitempty"`
	Helm           map[string]any `json:"helm,omitempty"`
	Kustomize      map[string]any `json:"kustomize,omitempty"`
}

// Destination is where an Application deploys.
type Destination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Load reads a recorded observation.
func Load(file string) (*Observation, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read observation: %w", err)
	}
	var o Observation
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &o, nil
}

// Predicted is rolloutlint's expansion of the ApplicationSets of a tree,
// keyed like Set: the Applications each generates, and the info findings
// it reports on each (what it did not evaluate, or why a set generates
// nothing).
type Predicted struct {
	Apps     map[string][]App
	Problems map[string][]string
}

func setKey(file, name string) string { return file + "#" + name }

// Predict expands the ApplicationSets under repo (the repository root)
// with model/units, as a lint of the whole tree does.
func Predict(repo string) (*Predicted, error) {
	set, err := units.Discover([]string{repo}, units.Options{RepoRoot: repo})
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", repo, err)
	}
	p := &Predicted{Apps: map[string][]App{}, Problems: map[string][]string{}}
	byApp := map[string]*App{}
	var order []string
	for _, a := range set.Applications {
		if a.Origin == nil || a.Origin.Set == "" {
			continue
		}
		rel, err := filepath.Rel(repo, a.File)
		if err != nil {
			return nil, fmt.Errorf("relative path: %w", err)
		}
		key := setKey(filepath.ToSlash(rel), a.Origin.Set)
		id := key + "\x00" + a.Origin.Params + "\x00" + a.Name
		app := byApp[id]
		if app == nil {
			app = &App{Name: a.Name, Namespace: a.Namespace, Project: a.Project, Sources: []Source{},
				Destination: Destination{Server: a.Destination.Server, Name: a.Destination.Name, Namespace: a.Destination.Namespace}}
			byApp[id] = app
			order = append(order, id)
		}
		app.Sources = append(app.Sources, sourceOf(a.Source))
	}
	for _, id := range order {
		key := id[:strings.IndexByte(id, 0)]
		p.Apps[key] = append(p.Apps[key], *byApp[id])
	}
	for _, pr := range set.Problems {
		rel, err := filepath.Rel(repo, pr.Pos.File)
		if err != nil || !strings.HasPrefix(pr.Message, "ApplicationSet ") {
			continue
		}
		name := strings.TrimPrefix(pr.Message, "ApplicationSet ")
		if i := strings.IndexAny(name, " :"); i >= 0 {
			name = name[:i]
		}
		key := setKey(filepath.ToSlash(rel), name)
		if strings.Contains(pr.Message, "matches nothing in the linted tree") {
			continue // a hint; Argo CD generates nothing from it either
		}
		p.Problems[key] = append(p.Problems[key], pr.Message)
	}
	return p, nil
}

func sourceOf(s units.Source) Source {
	out := Source{RepoURL: s.RepoURL, Path: s.Path, Chart: s.Chart, TargetRevision: s.TargetRevision}
	if s.Helm != nil {
		out.Helm = asMap(s.Helm)
	}
	if s.Kustomize != nil {
		out.Kustomize = asMap(s.Kustomize)
	}
	return out
}

// asMap is a struct of model/units as the map of its YAML fields (their
// names are Argo CD's JSON names), empty fields left out.
func asMap(v any) map[string]any {
	data, err := yaml.Marshal(v)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return map[string]any{"error": err.Error()}
	}
	return prune(m).(map[string]any)
}

// prune drops empty values (rolloutlint's structs and Argo CD's JSON
// leave out different empty fields).
func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range t {
			c = prune(c)
			if c == nil || c == "" || c == false {
				continue
			}
			if m, ok := c.(map[string]any); ok && len(m) == 0 {
				continue
			}
			if l, ok := c.([]any); ok && len(l) == 0 {
				continue
			}
			out[k] = c
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, c := range t {
			out[i] = prune(c)
		}
		return out
	case float64:
		if t == float64(int64(t)) {
			return int(t)
		}
	}
	return v
}

// Row is the comparison of one ApplicationSet.
type Row struct {
	Set, File string
	// Verdict is "match", "mismatch", "skipped" (the harness did not run a
	// generator that needs more than the repository) or "limitation"
	// (rolloutlint reported what it did not evaluate, and generated
	// nothing).
	Verdict string
	Detail  string
}

// Compare compares an observation with rolloutlint's expansion of the
// same tree, one row per ApplicationSet.
func Compare(obs *Observation, p *Predicted) []Row {
	var rows []Row
	for _, s := range obs.Sets {
		key := setKey(s.File, s.Name)
		ours := p.Apps[key]
		problems := p.Problems[key]
		r := Row{Set: s.Name, File: s.File}
		switch {
		case s.Skipped != "":
			r.Verdict, r.Detail = "skipped", s.Skipped
		case s.Error != "":
			// Argo CD creates none of the set's Applications.
			if len(ours) == 0 && len(problems) > 0 {
				r.Verdict, r.Detail = "match", "no Application: "+s.Error
			} else {
				r.Verdict = "mismatch"
				r.Detail = fmt.Sprintf("Argo CD generates nothing (%s); rolloutlint %d Application(s) %s, findings %q", s.Error, len(ours), names(ours), problems)
			}
		case len(problems) > 0 && len(ours) == 0 && limitation(problems):
			r.Verdict, r.Detail = "limitation", strings.Join(problems, "; ")
		default:
			want, got := canonical(s.Applications), canonical(ours)
			if reflect.DeepEqual(want, got) && len(problems) == 0 {
				r.Verdict = "match"
				r.Detail = fmt.Sprintf("%d Application(s)", len(want))
				break
			}
			r.Verdict = "mismatch"
			r.Detail = diff(want, got)
			if len(problems) > 0 {
				r.Detail += fmt.Sprintf("; rolloutlint's findings %q", problems)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// limitation reports findings that say rolloutlint did not evaluate
// something (a documented limitation, docs/repositories.md), rather than
// that Argo CD would fail.
func limitation(problems []string) bool {
	for _, m := range problems {
		for _, s := range []string{"not defined", "is not applied", "is not evaluated", "needs the", "needs a", "is not one rolloutlint expands"} {
			if strings.Contains(m, s) {
				return true
			}
		}
	}
	return false
}

func names(apps []App) string {
	var n []string
	for _, a := range apps {
		n = append(n, a.Name)
	}
	sort.Strings(n)
	return "[" + strings.Join(n, " ") + "]"
}

// canonical is a list of Applications as comparable JSON texts, sorted.
func canonical(apps []App) []string {
	out := []string{}
	for _, a := range apps {
		for i := range a.Sources {
			if a.Sources[i].Helm != nil {
				a.Sources[i].Helm = normalised(a.Sources[i].Helm)
			}
			if a.Sources[i].Kustomize != nil {
				a.Sources[i].Kustomize = normalised(a.Sources[i].Kustomize)
			}
		}
		data, _ := json.Marshal(a)
		out = append(out, string(data))
	}
	sort.Strings(out)
	return out
}

// normalised keeps the fields both sides know, without empty values.
func normalised(m map[string]any) map[string]any {
	out := prune(m).(map[string]any)
	if len(out) == 0 {
		return nil
	}
	return out
}

func diff(want, got []string) string {
	var b strings.Builder
	in := func(l []string, s string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, w := range want {
		if !in(got, w) {
			fmt.Fprintf(&b, "\n    Argo CD only:     %s", w)
		}
	}
	for _, g := range got {
		if !in(want, g) {
			fmt.Fprintf(&b, "\n    rolloutlint only: %s", g)
		}
	}
	return b.String()
}
