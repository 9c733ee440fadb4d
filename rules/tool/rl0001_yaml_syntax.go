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
