package tool

import "github.com/rolloutlint/rolloutlint/rules"

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
