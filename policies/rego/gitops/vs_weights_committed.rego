# METADATA
# title: A managed VirtualService route is committed with canary weight, not at stable 100 / canary 0.
# description: |
#   Argo Rollouts owns the weights of the VirtualService routes it manages. Between rollouts it
#   holds them at 100 for the stable destination and 0 for the canary; during a rollout it sets the
#   step's weight. A route committed with traffic on the canary (a weight left over from a manual
#   test or copied from a live object mid-rollout) is wrong at every moment: each `kubectl apply` or
#   Argo CD sync of the file moves live traffic to the committed split, and the controller, which
#   watches the VirtualService, writes its own weights straight back. The weights flap, Argo CD shows
#   the VirtualService OutOfSync for good, and a sync during a rollout can send canary traffic to a
#   version that analysis has not yet judged.
#
#   Commit the idle state (stable 100, canary 0) and let the controller move it. Additional
#   destinations (experiments, mirrors) are not judged by this rule.
# related_resources:
# - ref: https://argo-rollouts.readthedocs.io/en/stable/features/traffic-management/istio/#integrating-with-gitops
#   description: Argo Rollouts, Istio, integrating with GitOps
# custom:
#   id: RL5001
#   severity: warning
#   kinds: [Rollout, VirtualService, Service, DestinationRule]
#   requires: [Rollout, VirtualService]
#   tags: [gitops]
#   since: v0.1.0
#   bad: |2
#       http:
#       - name: primary
#         route:
#         - destination: {host: checkout-stable}
#           weight: 80
#         - destination: {host: checkout-canary}
#           weight: 20
#   good: |2
#       http:
#       - name: primary
#         route:
#         - destination: {host: checkout-stable}
#           weight: 100
#         - destination: {host: checkout-canary}
#           weight: 0
package rolloutlint.gitops.vs_weights_committed

import data.rolloutlint.lib

violation contains v if {
	# Walk the references directly (not lib.managed_routes): only routes with
	# a weighted canary need the rest of the body.
	some rr in input.rollouts
	some vs in rr.virtualServices
	some route in vs.routes
	route.index >= 0
	some canary in route.destinations
	canary.role == "canary"
	canary.weight > 0
	stable_weights := [d.weight | some d in route.destinations; d.role == "stable"]
	v := {
		"msg": sprintf(
			"%s route %s of VirtualService %s commits %d%% to the canary destination %s (stable: %s)",
			[route.kind, route_name(vs.target, route), vs.target.name, canary.weight, dest_name(canary), stable_text(stable_weights)],
		),
		"detail": sprintf(
			"Rollout %s manages this route and Argo Rollouts holds it at stable 100 / canary 0 between rollouts, so every apply or sync of this file moves live traffic and the controller writes it back.",
			[rr.rollout.name],
		),
		"ref": vs.target,
		"path": concat(".", [canary.path, "weight"]),
		"related": [{"ref": rr.rollout, "path": route.path, "msg": sprintf("Rollout %s manages the route", [rr.rollout.name])}],
		"fix": "Commit the idle state: weight 100 on the stable destination and 0 on the canary; Argo Rollouts sets the step weights at run time.",
	}
}

route_name(vs, route) := name if {
	name := vs_route_name(lib.resource(vs), route)
} else := sprintf("#%d", [route.index])

# vs_route_name is the name of the route in the VirtualService item. The
# route kind is spelled out (not spec[route.kind]) and the name read in the
# same reference: rolloutlint converts only the object fields the built-in
# policies name (see policies/fields.go), here the routes' names, not the
# routes whole.
vs_route_name(item, route) := item.object.spec.http[route.index].name if route.kind == "http"

vs_route_name(item, route) := item.object.spec.tls[route.index].name if route.kind == "tls"

vs_route_name(item, route) := item.object.spec.tcp[route.index].name if route.kind == "tcp"

dest_name(d) := sprintf("%s (subset %s)", [d.host, d.subset]) if {
	d.subset != ""
} else := d.host

stable_text(ws) := "no stable destination" if {
	count(ws) == 0
} else := sprintf("%d%%", [ws[0]]) if {
	count(ws) == 1
} else := sprintf("%v", [ws])
