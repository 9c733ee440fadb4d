package tool

import "github.com/rolloutlint/rolloutlint/rules"

// Limit reports inputs beyond the configured limits.
var Limit = &rules.Rule{
	ID: "RL0005", Name: "input-limit", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "An input exceeds a size, document-count or alias-expansion limit and was not fully read.",
	Doc: rules.Doc{
		Why: `To stay fast and safe on hostile input (for example in the admission webhook), rolloutlint
bounds how much it reads: file size (\'--max-file-size\', 32 MiB), documents per file
(\'--max-documents\', 20,000) and the nodes YAML aliases add when expanded (1,000,000 per file,
all its documents together, which defuses "billion laughs" alias bombs, a thousand small ones
included; an alias that refers to a node containing it never ends and is refused too). What lies
beyond a limit is not linted, so this is an error: raise the limit, or split the file.`,
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
