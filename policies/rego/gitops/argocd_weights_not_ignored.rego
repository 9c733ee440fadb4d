# METADATA
# title: An automatically syncing Argo CD Application does not ignore the weights Argo Rollouts manages.
# description: |
#   During a canary, Argo Rollouts rewrites the weights of the VirtualService routes it manages
#   (`setWeight`). To Argo CD that is drift from git: the VirtualService shows OutOfSync for the
#   whole rollout, and an automated sync (any commit, or selfHeal on its own) applies the git
#   weights again: the canary's traffic snaps back to 100/0 until the controller, which watches
#   the VirtualService, re-applies the step's weight. Traffic flaps and the analysis measures a
#   canary that is not getting the traffic the step says.
#
#   Tell Argo CD the weights are not its business: an `ignoreDifferences` entry for the
#   VirtualService covering the weights of every managed route kind (http, tls, tcp), e.g. the
#   jq path `.spec.http[].route[].weight`, a JSON pointer to the route, or
#   `managedFieldsManagers: [rollouts-controller]`, together with the sync option
#   `RespectIgnoreDifferences=true` (RL5004). When only the config says the bundle is Argo CD
#   managed (`argocd: true`) and no Application is in it, the rule reminds, at info level, on
#   each managed route.
# related_resources:
# - ref: https://argo-rollouts.readthedocs.io/en/stable/features/traffic-management/istio/#integrating-with-gitops
#   description: Argo Rollouts, Istio, integrating with GitOps
# - ref: https://argo-cd.readthedocs.io/en/stable/user-guide/diffing/
#   description: Argo CD, diffing customization
# custom:
#   id: RL5003
#   severity: warning
#   kinds: [Application, Rollout, VirtualService]
#   requires: [[Application, globals.argocd], Rollout, VirtualService]
#   tags: [gitops, argocd]
#   since: v0.1.0
#   bad: |
#     kind: Application
#     spec:
#       syncPolicy:
#         automated: {selfHeal: true}
#   good: |
#     kind: Application
#     spec:
#       ignoreDifferences:
#       - group: networking.istio.io
#         kind: VirtualService
#         jqPathExpressions:
#         - .spec.http[].route[].weight
#       syncPolicy:
#         automated: {selfHeal: true}
#         syncOptions:
#         - RespectIgnoreDifferences=true
package rolloutlint.gitops.argocd_weights_not_ignored

import data.rolloutlint.lib

violation contains v if {
	some app in lib.applications
	lib.automated(app)
	some kind in {r.kind | some r in lib.routes}
	uncovered := sort([lib.route_label(r) | some r in lib.routes; r.kind == kind; not lib.weights_ignored(app, r)])
	count(uncovered) > 0
	related := [{"ref": r.vs, "path": r.vsPath, "msg": sprintf("%s route managed by Argo Rollouts", [kind])} |
		some r in lib.routes
		r.kind == kind
		not lib.weights_ignored(app, r)
	]
	v := {
		"msg": sprintf(
			"Application %s does not ignore the weights of %d %s route(s) Argo Rollouts manages",
			[app.ref.name, count(uncovered), kind],
		),
		"detail": sprintf(
			"It uses %s: during a canary Argo CD shows %s OutOfSync and each sync resets the canary weight to git's until the controller writes it back.",
			[lib.sync_mode(app), lib.summarize(uncovered)],
		),
		"ref": app.ref,
		"path": lib.app_path(app),
		"related": array.slice(related, 0, 3),
		"fix": lib.weights_snippet(kind),
	}
}

violation contains v if {
	lib.config_only
	some r in lib.routes
	v := {
		"msg": sprintf("Argo Rollouts manages the weights of %s, and Argo CD deploys the bundle", [lib.route_label(r)]),
		"detail": "The config says argocd: true. Make sure the Application ignores the weights (ignoreDifferences with RespectIgnoreDifferences=true), or each sync resets the canary weight mid-rollout.",
		"ref": r.vs,
		"path": r.vsPath,
		"severity": "info",
		"fix": lib.weights_snippet(r.kind),
	}
}
