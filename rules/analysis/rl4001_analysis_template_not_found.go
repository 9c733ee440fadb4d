package analysis

import (
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// TemplateNotFound reports analysis references to templates the bundle lacks.
var TemplateNotFound = &rules.Rule{
	ID: "RL4001", Name: "analysis-template-not-found", Severity: rules.Error, Source: rules.SourceGo,
	Kinds: append([]string{kinds.Experiment}, templateKinds...), Tags: tags,
	Summary: "A Rollout runs an AnalysisTemplate or ClusterAnalysisTemplate that is not in the bundle.",
	Doc: rules.Doc{
		Why: `A Rollout's analysis names templates by \'templateName\'; with \'clusterScope: true\' the name is a
ClusterAnalysisTemplate, otherwise an AnalysisTemplate in the Rollout's own namespace. When the template
does not exist, Argo Rollouts marks the Rollout \'InvalidSpec\' and runs no step. The rule also says when
the name exists in the other scope (the usual mistake is a missing or extra \'clusterScope\').

In the admission webhook, where objects arrive in any order, the finding is a warning.`,
		Bad: `
steps:
      - analysis:
          templates:
          - templateName: success-rate   # only a ClusterAnalysisTemplate has this name
`,
		Good: `
steps:
      - analysis:
          templates:
          - templateName: success-rate
            clusterScope: true
`,
	},
	Since: "v0.1.0",
	// A Rollout's or an Experiment's findings depend on it and on lookups only.
	Sharded: true,
	Run: func(p *rules.Pass) error {
		for _, rr := range p.Rollouts() {
			for i := range rr.Templates {
				t := &rr.Templates[i]
				if t.Target != nil || t.Name == "" {
					continue
				}
				var msg string
				detail := "Argo Rollouts marks the Rollout InvalidSpec."
				if t.Cluster {
					msg = fmt.Sprintf("ClusterAnalysisTemplate %q is not in the bundle", t.Name)
					if p.Graph.Get(kinds.AnalysisTemplate, rr.Rollout.Namespace, t.Name) != nil {
						detail += fmt.Sprintf(" An AnalysisTemplate %s exists in namespace %s: drop clusterScope.", t.Name, rr.Rollout.Namespace)
					}
				} else {
					msg = fmt.Sprintf("AnalysisTemplate %q is not in namespace %s of the bundle", t.Name, rr.Rollout.Namespace)
					if p.Graph.Get(kinds.ClusterAnalysisTemplate, "", t.Name) != nil {
						detail += fmt.Sprintf(" A ClusterAnalysisTemplate %s exists: set clusterScope: true.", t.Name)
					}
				}
				d := rules.Diagnostic{Resource: rr.Rollout, Path: t.Path, Message: msg, Detail: detail}
				if p.Mode == rules.ModeWebhook {
					d.Severity = rules.Warning
				}
				p.ReportDiag(d)
			}
		}
		// Experiment objects verify their analyses' templates before they
		// start them (experiments/experiment.go verifyAnalysisTemplate).
		for _, r := range p.OfKind(kinds.Experiment) {
			ex := r.Experiment()
			if ex == nil {
				continue
			}
			for i := range ex.Spec.Analyses {
				a := &ex.Spec.Analyses[i]
				if a.TemplateName == "" {
					continue
				}
				kind, ns := kinds.AnalysisTemplate, r.Namespace
				if a.IsClusterScope() {
					kind, ns = kinds.ClusterAnalysisTemplate, ""
				}
				if p.Graph.Get(kind, ns, a.TemplateName) != nil {
					continue
				}
				where := "in namespace " + r.Namespace + " of the bundle"
				if a.IsClusterScope() {
					where = "in the bundle"
				}
				d := rules.Diagnostic{Resource: r, Path: graph.Index("spec.analyses", i) + ".templateName",
					Message: fmt.Sprintf("analysis %q of Experiment %s runs %s %q, which is not %s: the analysis errors (\"%s verification failed\") and so does the Experiment",
						a.Name, ex.Name, kind, a.TemplateName, where, kind)}
				if p.Mode == rules.ModeWebhook {
					d.Severity = rules.Warning
				}
				p.ReportDiag(d)
			}
		}
		return nil
	},
}
