package tool

import "github.com/rolloutlint/rolloutlint/rules"

// RenderFailed reports deployable units that could not be rendered.
var RenderFailed = &rules.Rule{
	ID: "RL0010", Name: "render-failed", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "A Kustomize root, Helm chart or Argo CD Application source could not be rendered.",
	Doc: rules.Doc{
		Why: `rolloutlint lints what Kustomize, Helm and Argo CD would apply, rendered with their own
libraries: Kustomize in process, Helm in rolloutlint-helm, the companion binary rolloutlint starts
when a lint holds a chart. When a unit does not render, Argo CD fails to sync it too, and nothing
in it is checked. The finding is at the file and line that caused the failure (a kustomization
entry, a template line, a Chart.yaml dependency) with the renderer's reason.

A chart is also reported, at its Chart.yaml, when rolloutlint-helm is not installed (rolloutlint
looks at $ROLLOUTLINT_HELM, beside its own binary, then on PATH) or speaks another protocol: the
message gives the command that installs the matching one, go install
github.com/rolloutlint/rolloutlint/cmd/rolloutlint-helm@VERSION; the release archives and the
container image ship both binaries. A companion of another release that speaks the same protocol
renders the charts, and rolloutlint notes it once on standard error instead (see
docs/repositories.md). A companion that crashes is reported at the chart it crashed on, with
the start and end of what it wrote to its standard error.

rolloutlint never fetches or executes anything while rendering, so these are findings as well:
remote bases and resources (vendor them into the repository), kustomize exec, container and Go
plugins, kustomize helmCharts (which run the helm binary), chart dependencies that are not
vendored under charts/ (run helm dependency build and commit charts/; one that its condition or
tags disable is not needed, and a file:// one is rendered from its directory), and value files of another
source of a multi-source Application. To lint such a unit, render it yourself and pipe the output:

~~~sh
kustomize build overlays/prod | rolloutlint lint -
~~~

What rolloutlint does not render by design is an info finding, not a failure: an Application
rendered by a Config Management Plugin (source.plugin), at its plugin field, and Jsonnet
(*.jsonnet files, which Argo CD evaluates in a directory source), at the first such file of each
directory. Nothing they make is linted; pipe their output to rolloutlint lint - to lint it.

A kustomization field that kustomize deprecates (bases, commonLabels, imageTags,
patchesJson6902, patchesStrategicMerge, vars) is an info finding at the field, naming what
replaces it: kustomize still builds it, and prints its own warning to stderr without the file,
which rolloutlint keeps off the terminal.`,
		BadNote: "a strategic merge patch naming an object the build does not have",
		Bad: `
# overlays/prod/kustomization.yaml
resources:
- ../../base
patches:
- path: replicas.yaml   # metadata.name: chekout; the base's Rollout is checkout
`,
		Good: `
# overlays/prod/replicas.yaml
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  replicas: 6
`,
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}
