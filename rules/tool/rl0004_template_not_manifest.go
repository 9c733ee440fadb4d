package tool

import "github.com/rolloutlint/rolloutlint/rules"

// NotManifest reports template files (Helm, Go templates) given as manifests.
var NotManifest = &rules.Rule{
	ID: "RL0004", Name: "template-not-manifest", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "The file is a Helm or Go template, not a rendered manifest.",
	Doc: rules.Doc{
		Why: `rolloutlint checks what the cluster will receive, so templates must be rendered first. A file
with \'{{ … }}\' actions that does not parse as YAML gets this one finding instead of a cascade of
syntax errors; the rest of the file is skipped. Argo Rollouts' own placeholders
(\'{{args.name}}\', \'{{templates.name.podTemplateHash}}\') are not template actions: they are text
the controller substitutes, and a file holding them is linted as a manifest. Render it and lint
the output:

~~~sh
helm template my-release ./chart | rolloutlint lint -
~~~`,
		BadNote: "a chart template",
		Bad: `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: {{ .Release.Name }}
`,
		GoodNote: "the rendered output",
		Good: `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
`,
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}
