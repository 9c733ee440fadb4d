# METADATA
# title: A server-side-applying Argo CD Application does not ignore the selectors and subset labels Argo Rollouts manages.
# description: |
#   Argo Rollouts adds `rollouts-pod-template-hash` to the selectors of the Services a Rollout
#   uses (stable, canary, active, preview) and to the labels of its DestinationRule's stable and
#   canary subsets, and changes the value at every rollout. With Argo CD's default client-side
#   diff, keys git never had are not drift. With server-side apply or server-side diff
#   (`ServerSideApply=true`, `compare-options: ServerSideDiff=true`) Argo CD compares the fields
#   themselves: the Services and the DestinationRule show OutOfSync during every rollout, and an
#   automated sync fights the controller over them.
#
#   Ignore them in the Application, with `RespectIgnoreDifferences=true`.
# related_resources:
# - ref: https://argo-cd.readthedocs.io/en/stable/user-guide/diffing/
#   description: Argo CD, diffing customization
# custom:
#   id: RL5005
#   severity: warning
#   kinds: [Application, Rollout, Service, DestinationRule]
#   requires: [Application, Rollout, [Service, DestinationRule]]
#   tags: [gitops, argocd]
#   since: v0.1.0
#   bad: |
#     spec:
#       syncPolicy:
#         automated: {selfHeal: true}
#         syncOptions: [ServerSideApply=true]
#   good: |
#     spec:
#       ignoreDifferences:
#       - group: ""
#         kind: Service
#         jsonPointers:
#         - /spec/selector/rollouts-pod-template-hash
#       - group: networking.istio.io
#         kind: DestinationRule
#         jqPathExpressions:
#         - .spec.subsets[].labels["rollouts-pod-template-hash"]
#       syncPolicy:
#         automated: {selfHeal: true}
#         syncOptions: [ServerSideApply=true, RespectIgnoreDifferences=true]
package rolloutlint.gitops.argocd_selectors_not_ignored

import data.rolloutlint.lib

selector_jq := {".spec", ".spec.selector", `.spec.selector["rollouts-pod-template-hash"]`, `.spec.selector."rollouts-pod-template-hash"`}

selector_pointers := {"/spec", "/spec/selector", "/spec/selector/rollouts-pod-template-hash"}

subset_jq := {
	".spec", ".spec.subsets", ".spec.subsets[]", ".spec.subsets[].labels",
	`.spec.subsets[].labels["rollouts-pod-template-hash"]`, `.spec.subsets[].labels."rollouts-pod-template-hash"`,
}

subset_pointers := {"/spec", "/spec/subsets"}

service_snippet := "spec:\n  ignoreDifferences:\n  - group: \"\"\n    kind: Service\n    jsonPointers:\n    - /spec/selector/rollouts-pod-template-hash\n  syncPolicy:\n    syncOptions:\n    - RespectIgnoreDifferences=true"

subset_snippet := "spec:\n  ignoreDifferences:\n  - group: networking.istio.io\n    kind: DestinationRule\n    jqPathExpressions:\n    - .spec.subsets[].labels[\"rollouts-pod-template-hash\"]\n  syncPolicy:\n    syncOptions:\n    - RespectIgnoreDifferences=true"

violation contains v if {
	some app in lib.applications
	lib.automated(app)
	lib.server_side(app)
	uncovered := {s.svc | some s in lib.managed_services; not lib.ignored(app, "", lib.resource(s.svc), selector_jq, selector_pointers)}
	count(uncovered) > 0
	names := sort([sprintf("%s/%s", [s.namespace, s.name]) | some s in uncovered])
	v := {
		"msg": sprintf(
			"Application %s does not ignore the rollouts-pod-template-hash selector of %d Service(s) (%s)",
			[app.ref.name, count(names), lib.summarize(names)],
		),
		"detail": sprintf(
			"It applies server-side (%s), and Argo Rollouts writes that selector: each rollout makes the Services OutOfSync and a sync fights the controller over which pods receive traffic.",
			[lib.sync_mode(app)],
		),
		"ref": app.ref,
		"path": lib.app_path(app),
		"related": [{"ref": s, "path": "spec.selector", "msg": "selector managed by Argo Rollouts"} | some s in uncovered],
		"fix": service_snippet,
	}
}

violation contains v if {
	some app in lib.applications
	lib.automated(app)
	lib.server_side(app)
	uncovered := {d.dr | some d in lib.managed_destination_rules; not lib.ignored(app, "networking.istio.io", lib.resource(d.dr), subset_jq, subset_pointers)}
	count(uncovered) > 0
	names := sort([sprintf("%s/%s", [d.namespace, d.name]) | some d in uncovered])
	v := {
		"msg": sprintf(
			"Application %s does not ignore the subset labels of %d DestinationRule(s) (%s)",
			[app.ref.name, count(names), lib.summarize(names)],
		),
		"detail": sprintf(
			"It applies server-side (%s), and Argo Rollouts writes these labels: each rollout makes the DestinationRules OutOfSync and a sync points the stable or canary subset at the wrong pods.",
			[lib.sync_mode(app)],
		),
		"ref": app.ref,
		"path": lib.app_path(app),
		"related": [{"ref": d, "path": "spec.subsets", "msg": "subset labels managed by Argo Rollouts"} | some d in uncovered],
		"fix": subset_snippet,
	}
}
