# A Rego policy set equivalent to a few rolloutlint rules, so `conftest test
# --combine` does comparable cross-object work on the same corpus. It is a
# benchmark fixture, not part of rolloutlint.
package main

import rego.v1

rollouts contains r if {
	some doc in input
	doc.contents.kind == "Rollout"
	r := doc.contents
}

virtualservices[key] := vs if {
	some doc in input
	doc.contents.kind == "VirtualService"
	vs := doc.contents
	key := sprintf("%s/%s", [object.get(vs.metadata, "namespace", "default"), vs.metadata.name])
}

deny contains msg if {
	some r in rollouts
	some i, step in r.spec.strategy.canary.steps
	w := step.setWeight
	not w >= 0
	msg := sprintf("%s: step %d setWeight %d below 0", [r.metadata.name, i, w])
}

deny contains msg if {
	some r in rollouts
	some i, step in r.spec.strategy.canary.steps
	step.setWeight > 100
	msg := sprintf("%s: step %d setWeight %d above 100", [r.metadata.name, i, step.setWeight])
}

# Every referenced VirtualService route must exist.
deny contains msg if {
	some r in rollouts
	ref := r.spec.strategy.canary.trafficRouting.istio.virtualService
	key := sprintf("%s/%s", [object.get(r.metadata, "namespace", "default"), ref.name])
	vs := virtualservices[key]
	some route in ref.routes
	not route_exists(vs, route)
	msg := sprintf("%s: route %s not in VirtualService %s", [r.metadata.name, route, key])
}

route_exists(vs, name) if {
	some h in vs.spec.http
	h.name == name
}

# Two Rollouts managing the same route.
deny contains msg if {
	some a in rollouts
	some b in rollouts
	a.metadata.name < b.metadata.name
	object.get(a.metadata, "namespace", "default") == object.get(b.metadata, "namespace", "default")
	a.spec.strategy.canary.trafficRouting.istio.virtualService.name == b.spec.strategy.canary.trafficRouting.istio.virtualService.name
	msg := sprintf("%s and %s share a VirtualService", [a.metadata.name, b.metadata.name])
}
