# METADATA
# title: An Application ignores controller-managed fields but syncs without RespectIgnoreDifferences=true.
# description: |
#   `ignoreDifferences` only changes how Argo CD *compares*: the VirtualService weights, subset
#   labels or selectors it lists no longer show as OutOfSync. When Argo CD *syncs*, though (an
#   automated sync after any commit to the application), it still applies the whole manifest from
#   git, ignored fields included, unless the sync option `RespectIgnoreDifferences=true` is set.
#   Mid-rollout that resets the canary weight to git's value; the controller writes it back and
#   traffic flaps.
#
#   Add `RespectIgnoreDifferences=true` to `spec.syncPolicy.syncOptions`.
# related_resources:
# - ref: https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/#respect-ignore-difference-configs
#   description: Argo CD, Respect ignore difference configs
# custom:
#   id: RL5004
#   severity: warning
#   kinds: [Application, Rollout]
#   requires: [Application, Rollout]
#   tags: [gitops, argocd]
#   since: v0.1.0
#   bad: |
#     spec:
#       ignoreDifferences:
#       - group: networking.istio.io
#         kind: VirtualService
#         jqPathExpressions: [.spec.http[].route[].weight]
#       syncPolicy:
#         automated: {selfHeal: true}
#   good: |
#     spec:
#       ignoreDifferences:
#       - group: networking.istio.io
#         kind: VirtualService
#         jqPathExpressions: [.spec.http[].route[].weight]
#       syncPolicy:
#         automated: {selfHeal: true}
#         syncOptions:
#         - RespectIgnoreDifferences=true
package rolloutlint.gitops.respect_ignore_differences

import data.rolloutlint.lib

# Kinds whose fields Argo Rollouts writes at run time.
controller_kinds := {"VirtualService", "DestinationRule", "Service", "Rollout", "*"}

violation contains v if {
	count(input.rollouts) > 0
	some app in lib.applications
	lib.automated(app)
	not lib.respects_ignore_differences(app)
	kinds := sort({kind_label(e.kind) | some e in lib.ignore_entries(app); e.kind in controller_kinds})
	count(kinds) > 0
	v := {
		"msg": sprintf(
			"Application %s ignores differences on %s without RespectIgnoreDifferences=true",
			[app.ref.name, concat(", ", kinds)],
		),
		"detail": sprintf(
			"Its sync options lack RespectIgnoreDifferences=true, and ignoreDifferences alone only hides the diff: each %s still applies git's values over the fields Argo Rollouts writes, resetting them mid-rollout.",
			[lib.sync_mode(app)],
		),
		"ref": app.ref,
		"path": sync_options_path(app),
		"fix": "spec:\n  syncPolicy:\n    syncOptions:\n    - RespectIgnoreDifferences=true",
	}
}

sync_options_path(app) := "spec.syncPolicy.syncOptions" if {
	app.object.spec.syncPolicy.syncOptions
} else := "spec.syncPolicy"

kind_label(k) := "every kind (*)" if {
	k == "*"
} else := k
