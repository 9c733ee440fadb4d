package rolloutlint.gitops.respect_ignore_differences_test

import data.rolloutlint.fixture_test as fx
import data.rolloutlint.gitops.respect_ignore_differences as rule

test_ignore_without_respect if {
	vs := rule.violation with input as fx.bundle(fx.self_heal(fx.weights_ignored), false)
	count(vs) == 1
	some v in vs
	v.ref == fx.app
	v.path == "spec.syncPolicy"
	contains(v.msg, "ignores differences on VirtualService")
	contains(v.fix, "RespectIgnoreDifferences=true")
}

test_points_at_sync_options_when_present if {
	spec := object.union(fx.weights_ignored, {"syncPolicy": {"automated": {}, "syncOptions": ["ApplyOutOfSyncOnly=true"]}})
	vs := rule.violation with input as fx.bundle(spec, false)
	some v in vs
	v.path == "spec.syncPolicy.syncOptions"
	contains(v.detail, "automated sync")
}

test_respect_set if {
	count(rule.violation) == 0 with input as fx.bundle(object.union(fx.respect, fx.weights_ignored), false)
}

test_unrelated_kind_is_not_reliance if {
	spec := fx.self_heal({"ignoreDifferences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}]})
	count(rule.violation) == 0 with input as fx.bundle(spec, false)
}
