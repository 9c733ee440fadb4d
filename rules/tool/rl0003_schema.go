package tool

import "github.com/rolloutlint/rolloutlint/rules"

// Schema reports unknown fields and mistyped values in known kinds.
var Schema = &rules.Rule{
	ID: "RL0003", Name: "schema", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Kinds:   []string{"*"},
	Summary: "A field is unknown to the kind's API, a value has the wrong type, or istiod's webhook rejects it.",
	Doc: rules.Doc{
		Why: `Rollouts, AnalysisTemplates, Services and Istio objects are checked against their real API
types (Argo Rollouts v1alpha1, Kubernetes core v1, Istio networking v1). A misspelt field is
not an error for \'kubectl apply\' with a lenient server: it is dropped, and the setting you
wrote silently does nothing. A value of the wrong type is rejected at apply time. The finding
is at the field's own line and suggests the closest known name. The object is still decoded
(without the bad field), so every other rule runs on it.

Values are read as \'kubectl\', Helm and Argo CD read them: with YAML 1.1, where unquoted
\'yes\', \'no\', \'on\', \'off\', \'y\' and \'n\' are booleans. A label \'canary: yes\' is rejected
("cannot unmarshal bool into ... of type string"); \'canary: "yes"\' is the text. kustomize
reads YAML 1.2 and quotes these words in its output, so a kustomize build keeps them text.

Istio objects are also checked against the part of istiod's validating webhook that a canary's
VirtualService and DestinationRule run into and that their types do not express, so that the
apply is not refused: match regular expressions must be RE2 (no lookaround, no backreferences)
of at most 1024 characters, header match names must be header tokens (or a pseudo-header, or
\'@request.auth.claims.<claim>\'), a prefix match may be empty only for the URI, every route
entry needs a destination and a weight of 0 or more, subset names (in a DestinationRule, unique
there, and in a destination) must be DNS labels (capitals allowed), port numbers must be in
1..65535, and a ServiceEntry host may not be \'*\'. The rest of istiod's validation (delegate rules, rewrites,
retries, TLS settings, ...) is not reproduced.`,
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
	// The loader's problems are reported once, with the first shard; the
	// Istio checks of an object depend on it alone.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		if p.Shard().Index == 0 {
			if err := fromProblems(p); err != nil {
				return err
			}
		}
		validateIstio(p)
		return nil
	},
}
