package analysis

import (
	"fmt"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// AnalysisArgFieldRefUnresolved reports analysis arguments whose
// valueFrom.fieldRef the controller never resolves, or cannot.
var AnalysisArgFieldRefUnresolved = &rules.Rule{
	ID: "RL4026", Name: "analysis-arg-fieldref-unresolved", Severity: rules.Error, Source: rules.SourceGo,
	Kinds:   append([]string{kinds.AnalysisRun}, templateKinds...),
	Tags:    tags,
	Summary: "An analysis arg's valueFrom.fieldRef is never resolved (a template default, an AnalysisRun's arg) or cannot be (an unsupported fieldPath): the run fails.",
	Doc: rules.Doc{
		Why: `Argo Rollouts resolves \'valueFrom.fieldRef\' in one place only: a **Rollout's** analysis args, when
it builds the run (utils/analysis BuildArgumentsForRolloutAnalysisRun), from the Rollout object
(\'metadata.name\', \'metadata.namespace\', \'metadata.uid\', \'metadata.labels['key']\',
\'metadata.annotations['key']\', or a path into the Rollout's JSON). The analysis controller itself
resolves only \'secretKeyRef\' (analysis/analysis.go resolveArgs). So:

- an AnalysisTemplate arg whose **default** is \'valueFrom.fieldRef\' keeps it when the Rollout does
  not pass the arg: the run's metrics are resolved with no value and the run fails ("argument "x"
  was not supplied"), although the Rollout passes validation (it replaces every valueFrom with a
  placeholder there);
- an AnalysisRun committed with a \'fieldRef\' arg fails the same way;
- a Rollout arg whose \'fieldPath\' the controller does not support (\'metadata.generation\', a
  subscript on anything but labels and annotations, a path into the Rollout that does not exist
  or ends in a list or map) makes the controller fail to create the run; an unsupported
  \'metadata\' path in a canary step's analysis (or its experiment's) is caught earlier, by the
  Rollout's validation (pkg/apis/rollouts/validation ValidateRolloutStrategyCanary), and the
  Rollout is \'InvalidSpec\'.

Fix: pass the arg from the Rollout (there \'fieldRef\' works), or give the template a plain
\'value\'.`,
		Bad: `
kind: AnalysisTemplate
spec:
  args:
  - name: service
    valueFrom: {fieldRef: {fieldPath: metadata.name}}   # never resolved here
`,
		Good: `
# the Rollout step passes it
analysis:
  templates: [{templateName: error-rate}]
  args:
  - name: service
    valueFrom: {fieldRef: {fieldPath: metadata.name}}
`,
	},
	Since: "v0.1.0",
	// A run's or a query's findings depend on it and on lookups; a spot
	// several of them hit (a shared template) is merged across shards as
	// the collector merges it.
	Sharded:     true,
	MergeShards: mergeSameSpot,
	Run: func(p *rules.Pass) error {
		c := newCollector(p)
		for _, run := range scannedRuns(p) {
			for i := range run.Args {
				a, name := &run.Args[i], run.Args[i].Name
				switch {
				case a.FieldRefDefault:
					c.add(rules.Diagnostic{Resource: a.Template, Path: a.DeclPath() + ".valueFrom.fieldRef",
						Message: fmt.Sprintf("args.%s of %s defaults to valueFrom.fieldRef, never resolved in a template", name, templateName(a.Template)),
						Detail: fmt.Sprintf("Argo Rollouts resolves only secretKeyRef there, and %s passes no value for it: the run fails (argument %q was not supplied).",
							run.Describe(), name),
						Related: []rules.Related{trigger(run, "passes no value for args."+name)}})
				case a.Problem != "":
					// Validation reads a metadata fieldPath of canary step and
					// step experiment analyses (validation.go ValidateRolloutStrategyCanary);
					// any other failure surfaces only when the run is built.
					outcome := "The controller fails to create the AnalysisRun."
					if (run.Use == graph.UseStep || run.Use == graph.UseExperiment) && strings.HasPrefix(a.Source, "metadata") {
						outcome = "Argo Rollouts' validation rejects it: the Rollout is InvalidSpec and runs no step."
					}
					c.add(rules.Diagnostic{Resource: run.Refs.Rollout, Path: a.RolloutPath() + ".valueFrom.fieldRef.fieldPath",
						Message: fmt.Sprintf("arg %s of %s: %s", name, run.Describe(), a.Problem), Detail: outcome})
				}
			}
		}
		for _, r := range p.OfKind(kinds.AnalysisRun) {
			ar := r.AnalysisRun()
			if ar == nil {
				continue
			}
			for i, a := range ar.Spec.Args {
				if a.ValueFrom == nil || a.ValueFrom.SecretKeyRef != nil || a.ValueFrom.FieldRef == nil {
					continue
				}
				c.add(rules.Diagnostic{Resource: r, Path: graph.Index("spec.args", i) + ".valueFrom.fieldRef",
					Message: fmt.Sprintf("args.%s of AnalysisRun %s takes valueFrom.fieldRef, which is never resolved there", a.Name, ar.Name),
					Detail:  fmt.Sprintf("The analysis controller resolves only secretKeyRef: the run fails (argument %q was not supplied).", a.Name)})
			}
		}
		c.flush()
		return nil
	},
}
