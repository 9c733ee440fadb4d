package acme.managed_route_timeout_test

import data.acme.managed_route_timeout

vs_ref := {"kind": "VirtualService", "namespace": "shop", "name": "checkout", "index": 1}

ro_ref := {"kind": "Rollout", "namespace": "shop", "name": "checkout", "index": 0}

bundle(route) := {
	"resources": [{"ref": ro_ref, "object": {}}, {"ref": vs_ref, "object": {"spec": {"http": [route]}}}],
	"rollouts": [{"rollout": ro_ref, "virtualServices": [{"target": vs_ref, "routes": [
		{"kind": "http", "index": 0, "vsPath": "spec.http[0]", "path": "spec.strategy.canary.trafficRouting.istio.virtualService", "destinations": []},
	]}]}],
}

test_route_without_timeout if {
	vs := managed_route_timeout.violation with input as bundle({"name": "primary"})
	count(vs) == 1
	some v in vs
	v.path == "spec.http[0]"
}

test_route_with_timeout if {
	count(managed_route_timeout.violation) == 0 with input as bundle({"name": "primary", "timeout": "5s"})
}
