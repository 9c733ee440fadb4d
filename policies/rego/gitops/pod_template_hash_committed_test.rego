package rolloutlint.gitops.pod_template_hash_committed_test

import data.rolloutlint.fixture_test as fx
import data.rolloutlint.gitops.pod_template_hash_committed as rule

with_hash := json.patch(fx.bundle(null, false), [{"op": "add", "path": "/resources/1/object/spec/selector/rollouts-pod-template-hash", "value": "6f9c7b7d4"}])

test_hash_in_stable_selector if {
	vs := rule.violation with input as with_hash
	count(vs) == 1
	some v in vs
	v.ref == fx.stable
	v.path == "spec.selector.rollouts-pod-template-hash"
	contains(v.msg, "stableService of Rollout checkout")
	contains(v.msg, "=6f9c7b7d4")
}

test_no_hash if {
	count(rule.violation) == 0 with input as fx.bundle(null, false)
}

test_hash_in_managed_subset if {
	dr := {"kind": "DestinationRule", "namespace": "shop", "name": "checkout", "index": 5}
	b := json.patch(fx.bundle(null, false), [
		{"op": "add", "path": "/resources/-", "value": {"ref": dr, "object": {"spec": {"subsets": [
			{"name": "stable", "labels": {"app": "checkout"}},
			{"name": "canary", "labels": {"app": "checkout", "rollouts-pod-template-hash": "abc"}},
		]}}}},
		{"op": "add", "path": "/rollouts/0/destinationRule", "value": {"name": "checkout", "path": "x", "target": dr, "stableSubset": "stable", "canarySubset": "canary"}},
	])
	vs := rule.violation with input as b
	some v in vs
	v.ref == dr
	v.path == "spec.subsets[1].labels.rollouts-pod-template-hash"
}
