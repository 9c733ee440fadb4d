package tool

import "github.com/rolloutlint/rolloutlint/rules"

// SuppressionNoReason reports suppressions that do not say why.
var SuppressionNoReason = &rules.Rule{
	ID: "RL0007", Name: "suppression-without-reason", Severity: rules.Warning, Source: rules.SourceGo, Tags: []string{"suppression"},
	Summary: "A rolloutlint:ignore comment or rolloutlint.io/ignore annotation gives no reason.",
	Doc: rules.Doc{
		Why: `A suppression is a decision someone made; the next reader needs to know why. Write the reason
after \' -- \'. This applies to inline comments (which cover their own line when they trail code,
or the next line when they stand alone) and to the \'rolloutlint.io/ignore\' annotation (which
covers the whole object).`,
		Bad: `
      - setWeight: 100 # rolloutlint:ignore RL2010
`,
		Good: `
      - setWeight: 100 # rolloutlint:ignore RL2010 -- the legacy subset is drained before this step
`,
	},
	Since: "v0.1.0",
	Run:   reportedByDriver,
}
