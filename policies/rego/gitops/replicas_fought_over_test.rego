package rolloutlint.gitops.replicas_fought_over_test

import data.rolloutlint.fixture_test as fx
import data.rolloutlint.gitops.replicas_fought_over as rule

test_hpa_and_replicas_under_self_heal if {
	vs := rule.violation with input as fx.bundle(fx.self_heal({}), false)
	count(vs) == 1
	some v in vs
	v.ref == fx.ro
	v.path == "spec.replicas"
	contains(v.msg, "commits spec.replicas: 4 and HorizontalPodAutoscaler checkout scales it (2..10 replicas)")
	v.related[0].ref == fx.hpa
}

test_without_self_heal_only_out_of_sync if {
	count(rule.violation) == 0 with input as fx.bundle({"syncPolicy": {"automated": {}}}, false)
}

test_replicas_ignored if {
	spec := fx.self_heal({"ignoreDifferences": [{"group": "argoproj.io", "kind": "Rollout", "jsonPointers": ["/spec/replicas"]}]})
	count(rule.violation) == 0 with input as fx.bundle(spec, false)
}

test_no_replicas_in_git if {
	b := json.patch(fx.bundle(fx.self_heal({}), false), [{"op": "remove", "path": "/resources/0/object/spec/replicas"}])
	b2 := json.patch(b, [{"op": "remove", "path": "/objects/Rollout/shop/checkout/object/spec/replicas"}])
	count(rule.violation) == 0 with input as b2
}

test_config_only_info if {
	vs := rule.violation with input as fx.bundle(null, true)
	some v in vs
	v.severity == "info"
}
