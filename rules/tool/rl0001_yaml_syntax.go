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
value starting with \'{\', \'*\' or \'&\', a duplicate key in one mapping.

Some documents parse as YAML and are still not Kubernetes objects: a mapping key that is a list,
a mapping or null. \'kubectl\' cannot convert them to JSON and rejects the document ("invalid
map key"), so rolloutlint reports it here and does not lint it. The common case is an Argo
Rollouts placeholder left unquoted: \'inject: {{args.enabled}}\' is a mapping whose key is a
mapping; \'inject: "{{args.enabled}}"\' is the text Argo Rollouts substitutes into. Placeholders
are not Go templates (RL0004): a syntax error in a file that holds them is reported as one.`,
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
