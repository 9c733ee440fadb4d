package tool

import "github.com/rolloutlint/rolloutlint/rules"

// Syntax reports files that are not valid YAML or JSON.
var Syntax = &rules.Rule{
	ID: "RL0001", Name: "yaml-syntax", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "The file is not valid YAML or JSON.",
	Doc: rules.Doc{
		Why: `A document that does not parse is not applied by \'kubectl\' or Argo CD, and nothing in it
can be checked. The finding points at the line the YAML parser stopped on; other documents of
the same file (separated by \'---\') are still read and linted.

Common causes: a tab used for indentation, a key and value on misaligned columns, an unquoted
value starting with \'{\', \'*\' or \'&\', a duplicate key in one mapping.`,
		Bad: `
spec:
  strategy:
    canary:
     steps:          # one space less than its siblings
      - setWeight: 20
    maxSurge: 1
  bad: [unclosed
`,
		Good: `
spec:
  strategy:
    canary:
      steps:
      - setWeight: 20
`,
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}

// NoKind reports documents that are not Kubernetes objects.
var NoKind = &rules.Rule{
	ID: "RL0002", Name: "not-an-object", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "A document has no apiVersion, kind or metadata.name, or is not a mapping.",
	Doc: rules.Doc{
		Why: `Every document must be a Kubernetes object: a mapping with \'apiVersion\', \'kind\' and
\'metadata.name\'. Without them the API server rejects it and no other object can reference it.
Documents that are only comments, and empty documents, are fine.`,
		Bad: `
metadata:
  name: checkout
spec:
  replicas: 3
`,
		Good: `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  replicas: 3
`,
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}

// Schema reports unknown fields and mistyped values in known kinds.
var Schema = &rules.Rule{
	ID: "RL0003", Name: "schema", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "A field is unknown to the kind's API, or a value has the wrong type.",
	Doc: rules.Doc{
		Why: `Rollouts, AnalysisTemplates, Services and Istio objects are checked against their real API
types (Argo Rollouts v1alpha1, Kubernetes core v1, Istio networking v1). A misspelt field is
not an error for \'kubectl apply\' with a lenient server: it is dropped, and the setting you
wrote silently does nothing. A value of the wrong type is rejected at apply time. The finding
is at the field's own line and suggests the closest known name. The object is still decoded
(without the bad field), so every other rule runs on it.`,
		Bad: `
    canary:
      steps:
      - setWieght: 20       # ignored: the step has no action
      - pause: {duration: 1h}
`,
		Good: `
    canary:
      steps:
      - setWeight: 20
      - pause: {duration: 1h}
`,
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}

// NotManifest reports template files (Helm, Go templates) given as manifests.
var NotManifest = &rules.Rule{
	ID: "RL0004", Name: "template-not-manifest", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "The file is a Helm or Go template, not a rendered manifest.",
	Doc: rules.Doc{
		Why: `rolloutlint checks what the cluster will receive, so templates must be rendered first. A file
with \'{{ … }}\' actions that does not parse as YAML gets this one finding instead of a cascade of
syntax errors; the rest of the file is skipped. Render it and lint the output:

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

// Limit reports inputs beyond the configured limits.
var Limit = &rules.Rule{
	ID: "RL0005", Name: "input-limit", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "An input exceeds a size, document-count or alias-expansion limit and was not fully read.",
	Doc: rules.Doc{
		Why: `To stay fast and safe on hostile input (for example in the admission webhook), rolloutlint
bounds how much it reads: file size (\'--max-file-size\', 32 MiB), documents per file
(\'--max-documents\', 20,000) and nodes visited while expanding YAML aliases (1,000,000 per
document, which defuses "billion laughs" alias bombs). What lies beyond a limit is not linted,
so this is an error: raise the limit, or split the file.`,
		BadNote: "an alias bomb",
		Bad: `
a: &a ["x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
# ... nine levels expand to billions of nodes
`,
		GoodNote: "plain manifests, split into files of reasonable size.",
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}

// APIVersion reports known kinds at versions rolloutlint does not model.
var APIVersion = &rules.Rule{
	ID: "RL0006", Name: "unsupported-api-version", Severity: rules.Warning, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "A known kind uses an apiVersion that rolloutlint does not model; the object is not checked.",
	Doc: rules.Doc{
		Why: `rolloutlint checks Rollouts and AnalysisTemplates at \'argoproj.io/v1alpha1\', Services at \'v1\',
and Istio networking objects at \'v1\', \'v1beta1\' and \'v1alpha3\'. Any other version of those kinds
is most likely a typo that the API server will reject; the object is kept for references but
its fields are not checked.`,
		Bad: `
apiVersion: networking.istio.io/v2
kind: VirtualService
`,
		Good: `
apiVersion: networking.istio.io/v1
kind: VirtualService
`,
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}
