# METADATA
# title: A Rollout scaled by an HPA commits spec.replicas under Argo CD selfHeal.
# description: |
#   A HorizontalPodAutoscaler that targets a Rollout owns its replica count: it writes
#   `spec.replicas` through the scale subresource as load changes. When git also sets
#   `spec.replicas` and Argo CD self-heals, Argo CD sees the HPA's count as drift and sets it back
#   to the committed number; the HPA raises it again at its next sync period. The Rollout's pods
#   churn, capacity drops under load, and Argo Rollouts recalculates canary and stable replica
#   counts at each change.
#
#   Expected behaviour: without selfHeal, Argo CD only shows OutOfSync and resets the count at the
#   next sync; with selfHeal it resets it within seconds, over and over. Remove `spec.replicas`
#   from git (the HPA's `minReplicas` sets the floor), or ignore it in the Application with
#   `RespectIgnoreDifferences=true`.
# related_resources:
# - ref: https://argo-rollouts.readthedocs.io/en/stable/features/hpa-support/
#   description: Argo Rollouts, HPA support
# custom:
#   id: RL5006
#   severity: warning
#   kinds: [Rollout, HorizontalPodAutoscaler, Application]
#   requires: [HorizontalPodAutoscaler, Rollout, [Application, globals.argocd]]
#   tags: [gitops, argocd]
#   since: v0.1.0
#   bad: |
#     kind: Rollout
#     spec:
#       replicas: 4
#     ---
#     kind: HorizontalPodAutoscaler
#     spec:
#       scaleTargetRef: {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: checkout}
#   good: |
#     kind: Rollout
#     spec:
#       # no replicas: the HPA owns the count
#       selector: {matchLabels: {app: checkout}}
package rolloutlint.gitops.replicas_fought_over

import data.rolloutlint.lib

replicas_jq := {".spec", ".spec.replicas"}

replicas_pointers := {"/spec", "/spec/replicas"}

snippet := "Remove spec.replicas from the Rollout in git (the HPA owns it), or ignore it:\nspec:\n  ignoreDifferences:\n  - group: argoproj.io\n    kind: Rollout\n    jsonPointers:\n    - /spec/replicas\n  syncPolicy:\n    syncOptions:\n    - RespectIgnoreDifferences=true"

scaled_rollouts contains {"hpa": hpa, "rollout": ro} if {
	some hpa in lib.resources("HorizontalPodAutoscaler")
	target := hpa.object.spec.scaleTargetRef
	target.kind == "Rollout"
	ro := lib.get("Rollout", hpa.ref.namespace, target.name)
	ro.object.spec.replicas
}

violation contains v if {
	some s in scaled_rollouts
	some app in lib.applications
	lib.self_heal(app)
	not ignores_replicas(app, s.rollout)
	v := {
		"msg": sprintf(
			"Rollout %s commits spec.replicas: %v and HorizontalPodAutoscaler %s scales it (%v..%v replicas)",
			[s.rollout.ref.name, s.rollout.object.spec.replicas, s.hpa.ref.name, object.get(s.hpa.object.spec, "minReplicas", 1), s.hpa.object.spec.maxReplicas],
		),
		"detail": sprintf(
			"Application %s self-heals, so Argo CD resets the count the HPA chose back to %v and the HPA raises it again: pods churn and capacity drops under load.",
			[app.ref.name, s.rollout.object.spec.replicas],
		),
		"ref": s.rollout.ref,
		"path": "spec.replicas",
		"related": [
			{"ref": s.hpa.ref, "path": "spec.scaleTargetRef.name", "msg": sprintf("HorizontalPodAutoscaler %s scales the Rollout", [s.hpa.ref.name])},
			{"ref": app.ref, "path": "spec.syncPolicy.automated.selfHeal", "msg": sprintf("Application %s self-heals", [app.ref.name])},
		],
		"fix": snippet,
	}
}

violation contains v if {
	lib.config_only
	some s in scaled_rollouts
	v := {
		"msg": sprintf(
			"Rollout %s commits spec.replicas: %v and HorizontalPodAutoscaler %s scales it",
			[s.rollout.ref.name, s.rollout.object.spec.replicas, s.hpa.ref.name],
		),
		"detail": "The bundle is deployed by Argo CD (config argocd: true), so unless the Application ignores /spec/replicas, each sync (or self-heal) resets the count the HPA chose.",
		"ref": s.rollout.ref,
		"path": "spec.replicas",
		"severity": "info",
		"related": [{"ref": s.hpa.ref, "path": "spec.scaleTargetRef.name", "msg": sprintf("HorizontalPodAutoscaler %s scales the Rollout", [s.hpa.ref.name])}],
		"fix": snippet,
	}
}

ignores_replicas(app, ro) if lib.ignored(app, "argoproj.io", ro, replicas_jq, replicas_pointers)

ignores_replicas(app, ro) if {
	some entry in lib.ignore_entries(app)
	lib.entry_applies(entry, "argoproj.io", ro)
	"kube-controller-manager" in object.get(entry, "managedFieldsManagers", [])
}
