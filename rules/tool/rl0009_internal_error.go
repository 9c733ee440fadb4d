package tool

import "github.com/rolloutlint/rolloutlint/rules"

// Internal reports a rule or policy that failed while running.
var Internal = &rules.Rule{
	ID: "RL0009", Name: "internal-error", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"tool"},
	Summary: "A rule or policy failed (error, panic, time-out, memory bound or sandbox); its findings are missing.",
	Doc: rules.Doc{
		Why: `When a rule breaks — a Go rule panics, a Rego policy errors, runs past its time box, grows
the heap past its memory bound, or calls a built-in with arguments the sandbox refuses (a
schema '$ref' to a file, a JWT check against the clock) — the other rules still report, and
this finding names the one that failed, so a broken policy can never pass silently. For
built-in rules, please report it with the input that caused it. For your own policies, the
message says what failed; the rule options 'timeout' and 'memory' raise the bounds (see
docs/policies.md, The sandbox).`,
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
