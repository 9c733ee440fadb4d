package tool

import "github.com/rolloutlint/rolloutlint/rules"

// SuppressionUnused reports suppressions that suppress nothing.
var SuppressionUnused = &rules.Rule{
	ID: "RL0008", Name: "unused-suppression", Severity: rules.Warning, Source: rules.SourceGo, Tags: []string{"suppression"},
	Summary: "A suppression matches no finding, names a rule that does not exist, or is misspelt.",
	Doc: rules.Doc{
		Why: `A suppression that no longer suppresses anything hides the next real finding on that line or
object. Remove it. A suppression naming a rule ID that does not exist is usually a typo.
Suppressions of rules that are turned off in the configuration are not reported. A comment
\'rolloutlint:WORD\' other than \'rolloutlint:ignore\' (\'rolloutlint:ignroe\', \'rolloutlint:disable\')
and an annotation key under \'rolloutlint.io/\' other than \'rolloutlint.io/ignore\' suppress
nothing either, and are reported, so that a typo does not leave the finding it meant to hide
unexplained.`,
		Bad: `
metadata:
  annotations:
    rolloutlint.io/ignore: "RL2999 -- old exception"   # no such rule
`,
		GoodNote: "delete the annotation, or name the rule that actually fires.",
	},
	Since: "v0.1.0",
	Run:   reportedByDriver,
}
