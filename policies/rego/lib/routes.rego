package rolloutlint.lib

# The Rollouts' resolved references: the routes, Services and DestinationRules
# they manage.

# managed_routes are the VirtualService routes the Rollouts of the bundle
# manage, one entry per route and Rollout: {vs, kind, index, name, vsPath,
# destinations, rollout, rolloutPath} (name: the route name the Rollout gave, ""
# for an implicit or tls/tcp route; rolloutPath: where the Rollout names it).
managed_routes contains r if {
	some rr in input.rollouts
	some vs in rr.virtualServices
	vs.target
	some route in vs.routes
	route.index >= 0
	r := {
		"vs": vs.target, "kind": route.kind, "index": route.index, "name": object.get(route, "name", ""), "vsPath": route.vsPath,
		"destinations": route.destinations, "rollout": rr.rollout,
		"rolloutPath": route.path,
	}
}

# weight_jq are the jq expressions that cover the weights of a route kind.
weight_jq(kind) := {
	".spec",
	sprintf(".spec.%s", [kind]),
	sprintf(".spec.%s[]", [kind]),
	sprintf(".spec.%s[].route", [kind]),
	sprintf(".spec.%s[].route[]", [kind]),
	sprintf(".spec.%s[].route[].weight", [kind]),
}

# weight_pointers are the JSON pointers that cover every weight of one route.
weight_pointers(kind, i) := {"/spec", sprintf("/spec/%s", [kind]), sprintf("/spec/%s/%d", [kind, i]), sprintf("/spec/%s/%d/route", [kind, i])}

# routes are the managed routes without the Rollout that manages them, so a
# route two Rollouts manage counts once: {vs, kind, index, vsPath, destinations}.
routes contains object.remove(r, ["rollout", "rolloutPath"]) if some r in managed_routes

# route_label names a route for messages: VirtualService ns/name http route
# "primary" when the route has a name, else VirtualService ns/name http[0].
route_label(r) := sprintf("VirtualService %s/%s %s route %q", [r.vs.namespace, r.vs.name, r.kind, r.name]) if {
	object.get(r, "name", "") != ""
} else := sprintf("VirtualService %s/%s %s[%d]", [r.vs.namespace, r.vs.name, r.kind, r.index])

# managed_services are the Services whose selectors Rollouts manage (every
# role: stable, canary, active, preview, ping, pong), once each.
managed_services contains {"svc": svc.target, "rollout": rr.rollout, "role": svc.role, "rolloutPath": svc.path} if {
	some rr in input.rollouts
	some svc in rr.services
	svc.target
}

# managed_destination_rules are the DestinationRules whose subset labels Rollouts manage.
managed_destination_rules contains {"dr": rr.destinationRule.target, "rollout": rr.rollout, "rolloutPath": rr.destinationRule.path} if {
	some rr in input.rollouts
	rr.destinationRule.target
}
