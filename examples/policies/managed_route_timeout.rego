# METADATA
# title: An HTTP route managed by a Rollout sets no timeout.
# description: |
#   Our platform standard: every HTTP route that a canary shifts traffic on sets an explicit
#   `timeout`, so that a slow canary shows up as errors in the analysis instead of holding
#   client connections open.
# related_resources:
# - ref: https://istio.io/latest/docs/reference/config/networking/virtual-service/#HTTPRoute
#   description: Istio HTTPRoute
# custom:
#   id: RL9001
#   severity: warning
#   kinds: [Rollout, VirtualService]
#   tags: [platform]
#   bad: |
#     http:
#     - name: primary
#       route: [...]
#   good: |
#     http:
#     - name: primary
#       timeout: 5s
#       route: [...]
package acme.managed_route_timeout

import data.rolloutlint.lib

violation contains v if {
	some route in lib.managed_routes
	route.kind == "http"
	vs := lib.resource(route.vs)
	not vs.object.spec.http[route.index].timeout
	v := {
		"msg": sprintf("http route %d of VirtualService %s carries canary traffic for Rollout %s but sets no timeout", [route.index, route.vs.name, route.rollout.name]),
		"ref": route.vs,
		"path": route.vsPath,
		"related": [{"ref": route.rollout, "path": route.rolloutPath, "msg": "the Rollout that manages the route"}],
	}
}
