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

// SuppressionUnused reports suppressions that suppress nothing.
var SuppressionUnused = &rules.Rule{
	ID: "RL0008", Name: "unused-suppression", Severity: rules.Warning, Source: rules.SourceGo, Tags: []string{"suppression"},
	Summary: "A suppression matches no finding, or names a rule that does not exist.",
	Doc: rules.Doc{
		Why: `A suppression that no longer suppresses anything hides the next real finding on that line or
object. Remove it. A suppression naming a rule ID that does not exist is usually a typo.
Suppressions of rules that are turned off in the configuration are not reported.`,
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

// Internal reports a rule or policy that failed while running.
var Internal = &rules.Rule{
	ID: "RL0009", Name: "internal-error", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"tool"},
	Summary: "A rule or policy failed (error, panic or time-out); its findings are missing.",
	Doc: rules.Doc{
		Why: `When a rule breaks — a Go rule panics, a Rego policy errors or runs past its time box — the
other rules still report, and this finding names the one that failed, so a broken policy can
never pass silently. For built-in rules, please report it with the input that caused it. For
your own policies, the message says what failed.`,
		BadNote: "a user policy that never finishes",
		Bad: `
violation contains v if {
	some i in numbers.range(1, 1000000000)
	v := {"msg": sprintf("%d", [i])}
}
`,
		GoodNote: "policies that compute findings from the input in bounded time.",
		Lang:     "rego",
	},
	Since: "v0.1.0",
	Run:   reportedByDriver,
}
