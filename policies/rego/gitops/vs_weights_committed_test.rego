package rolloutlint.gitops.vs_weights_committed_test

import data.rolloutlint.gitops.vs_weights_committed

vs_ref := {"kind": "VirtualService", "namespace": "shop", "name": "checkout", "index": 1}

ro_ref := {"kind": "Rollout", "namespace": "shop", "name": "checkout", "index": 0}

bundle(canary_weight) := {
	"resources": [
		{"ref": ro_ref, "object": {}},
		{"ref": vs_ref, "object": {"spec": {"http": [{"name": "primary"}]}}},
	],
	"rollouts": [{
		"rollout": ro_ref,
		"virtualServices": [{"target": vs_ref, "routes": [{
			"kind": "http", "index": 0, "vsPath": "spec.http[0]", "path": "spec.strategy.canary.trafficRouting.istio.virtualService.routes[0]",
			"destinations": [
				{"index": 0, "path": "spec.http[0].route[0]", "host": "checkout-stable", "subset": "", "weight": 100 - canary_weight, "role": "stable"},
				{"index": 1, "path": "spec.http[0].route[1]", "host": "checkout-canary", "subset": "", "weight": canary_weight, "role": "canary"},
			],
		}]}],
	}],
	"globals": {"argocd": false},
}

test_canary_weight_committed if {
	vs := vs_weights_committed.violation with input as bundle(20)
	count(vs) == 1
	some v in vs
	v.ref == vs_ref
	v.path == "spec.http[0].route[1].weight"
	contains(v.msg, "commits 20% to the canary destination checkout-canary (stable: 80%)")
	contains(v.msg, "route primary")
}

test_idle_state_is_clean if {
	count(vs_weights_committed.violation) == 0 with input as bundle(0)
}

test_unmanaged_route_is_ignored if {
	b := json.patch(bundle(30), [{"op": "replace", "path": "/rollouts/0/virtualServices/0/routes/0/index", "value": -1}])
	count(vs_weights_committed.violation) == 0 with input as b
}

test_tls_route_name_read_from_tls_list if {
	b := json.patch(bundle(20), [
		{"op": "replace", "path": "/resources/1/object", "value": {"spec": {"http": [{"name": "primary"}], "tls": [{"name": "secure"}]}}},
		{"op": "replace", "path": "/rollouts/0/virtualServices/0/routes/0/kind", "value": "tls"},
	])
	vs := vs_weights_committed.violation with input as b
	count(vs) == 1
	some v in vs
	contains(v.msg, "tls route secure of VirtualService checkout")
}
