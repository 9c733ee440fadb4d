// Package helmengine renders a Helm chart in process, with Helm's own
// library, as `helm template` does client-only: the chart and the
// dependencies vendored under charts/ are loaded, dependency conditions,
// tags and import-values processed, the values checked against
// values.schema.json, and the templates rendered with Helm's engine and
// default capabilities. Nothing is downloaded and no cluster is asked.
//
// It is what rolloutlint-helm runs for each request; rolloutlint itself
// does not link it (Helm's package initialisers would run on every lint).
// Tests that want Helm in process use InProcess.
package helmengine

import (
	"fmt"
	"sort"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"

	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// Render renders one request. A failure is in the response (its stage and
// Helm's error text); Helm panicking is StagePanic.
func Render(req *helmrpc.Request) (resp *helmrpc.Response) {
	resp = &helmrpc.Response{ID: req.ID}
	defer func() {
		// Helm's value copy panics on a time.Time (a YAML !!timestamp).
		if p := recover(); p != nil {
			resp = &helmrpc.Response{ID: req.ID, ChartName: resp.ChartName, ChartKubeVersion: resp.ChartKubeVersion,
				Stage: helmrpc.StagePanic, Error: fmt.Sprint(p)}
		}
	}()
	fail := func(stage helmrpc.Stage, err error) *helmrpc.Response {
		resp.Stage = stage
		if err != nil {
			resp.Error = err.Error()
		}
		return resp
	}
	ch, err := loader.Load(req.ChartDir)
	if err != nil {
		return fail(helmrpc.StageLoad, err)
	}
	resp.ChartName = ch.Name()
	resp.ChartKubeVersion = ch.Metadata.KubeVersion
	addLocalDependencies(ch, req.ChartDir)
	vals := req.Values
	if vals == nil {
		vals = map[string]any{}
	}
	if resp.Missing = missingDependencies(ch, vals); len(resp.Missing) > 0 || req.CheckOnly {
		return resp
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return fail(helmrpc.StageDependencies, err)
	}
	caps := common.DefaultCapabilities.Copy()
	caps.APIVersions = append(caps.APIVersions, req.APIVersions...)
	if req.KubeVersion != "" {
		if kv, err := common.ParseKubeVersion(req.KubeVersion); err == nil {
			caps.KubeVersion = *kv
		}
	}
	resp.KubeVersion = caps.KubeVersion.Version
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return fail(helmrpc.StageKubeVersion, nil)
	}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, vals,
		common.ReleaseOptions{Name: req.ReleaseName, Namespace: req.Namespace, Revision: 1, IsInstall: true}, caps, false)
	if err != nil {
		return fail(helmrpc.StageValues, err)
	}
	out, err := engine.Render(ch, top)
	if err != nil {
		return fail(helmrpc.StageRender, err)
	}
	resp.Files = make([]helmrpc.File, 0, len(out))
	for name, text := range out {
		resp.Files = append(resp.Files, helmrpc.File{Name: name, Text: text})
	}
	sort.Slice(resp.Files, func(i, j int) bool { return resp.Files[i].Name < resp.Files[j].Name })
	return resp
}

// addLocalDependencies loads the dependencies Chart.yaml names with a
// file:// repository that are not vendored under charts/ from that
// directory, as `helm dependency build` (and Argo CD, which runs it) would
// package them: the chart there, when its name and version are the
// dependency's. Nothing is fetched; a dependency that does not match
// stays missing.
func addLocalDependencies(ch *chart.Chart, dir string) {
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		local, ok := units.LocalDependencyDir(dir, d.Repository)
		if have[d.Name] || !ok {
			continue
		}
		sub, err := loader.Load(local)
		if err != nil || sub.Name() != d.Name || d.Version != "" && !chartutil.IsCompatibleRange(d.Version, sub.Metadata.Version) {
			continue
		}
		ch.AddDependency(sub)
		have[d.Name] = true
	}
}

// missingDependencies lists the Chart.yaml dependencies with no chart
// under charts/ (the check `helm template` makes before rendering) that
// the values enable.
func missingDependencies(ch *chart.Chart, vals map[string]any) []string {
	have := map[string]bool{}
	for _, d := range ch.Dependencies() {
		have[d.Name()] = true
	}
	var out []string
	for _, d := range ch.Metadata.Dependencies {
		if !have[d.Name] {
			out = append(out, d.Name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	// A dependency its condition or tags disable adds nothing to the
	// render (Helm removes it before coalescing the values): `helm
	// template` still refuses the chart without it, but what `helm
	// dependency build` then `helm template` (or Argo CD, which builds the
	// dependencies) renders is this chart without it. Helm decides which
	// are enabled on a copy of the chart whose dependencies are all
	// present: those vendored, with their values, and a stub for the rest.
	probe := &chart.Chart{Metadata: &chart.Metadata{Name: ch.Metadata.Name, Version: ch.Metadata.Version, APIVersion: ch.Metadata.APIVersion}, Values: ch.Values}
	byName := map[string]*chart.Chart{}
	for _, d := range ch.Dependencies() {
		byName[d.Name()] = d
	}
	var stubs []*chart.Chart
	for _, d := range ch.Metadata.Dependencies {
		c := *d
		c.ImportValues = nil // the stubs have none to give
		probe.Metadata.Dependencies = append(probe.Metadata.Dependencies, &c)
		stub := &chart.Chart{Metadata: &chart.Metadata{Name: d.Name, Version: d.Version, APIVersion: chart.APIVersionV2}}
		if real := byName[d.Name]; real != nil {
			stub.Metadata.Version, stub.Values = real.Metadata.Version, real.Values
		}
		stubs = append(stubs, stub)
	}
	probe.SetDependencies(stubs...)
	if chartutil.ProcessDependencies(probe, vals) != nil {
		return out // Helm's own processing reports the error after the dependencies are vendored
	}
	enabled := map[string]bool{}
	for _, d := range probe.Metadata.Dependencies {
		if d.Enabled {
			enabled[d.Name] = true
		}
	}
	var missing []string
	for _, d := range ch.Metadata.Dependencies {
		name := d.Name
		if d.Alias != "" {
			name = d.Alias
		}
		if !have[d.Name] && enabled[name] {
			missing = append(missing, d.Name)
		}
	}
	return missing
}

// InProcess renders with Helm in the calling process: an engine for
// model/render's Options.Helm where Helm may be linked (tests, and
// programs other than rolloutlint).
type InProcess struct{}

// Render renders req in process; the values are used as they are, not
// copied.
func (InProcess) Render(req *helmrpc.Request) (*helmrpc.Response, error) {
	return Render(req), nil
}
