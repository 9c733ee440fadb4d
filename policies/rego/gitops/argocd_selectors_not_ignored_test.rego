package rolloutlint.gitops.argocd_selectors_not_ignored_test

import data.rolloutlint.fixture_test as fx
import data.rolloutlint.gitops.argocd_selectors_not_ignored as rule

ssa := {"syncPolicy": {"automated": {"selfHeal": true}, "syncOptions": ["ServerSideApply=true", "RespectIgnoreDifferences=true"]}}

test_server_side_without_selector_ignore if {
	vs := rule.violation with input as fx.bundle(ssa, false)
	count(vs) == 1
	some v in vs
	v.ref == fx.app
	contains(v.msg, "2 Service(s) (shop/checkout-canary, shop/checkout-stable)")
	count(v.related) == 2
}

test_server_side_diff_annotation_counts if {
	md := {"annotations": {"argocd.argoproj.io/compare-options": "ServerSideDiff=true"}}
	b := json.patch(fx.bundle(fx.self_heal({}), false), [
		{"op": "add", "path": "/resources/5/object/metadata", "value": md},
		{"op": "add", "path": "/kinds/Application/0/object/metadata", "value": md},
	])
	count(rule.violation) == 1 with input as b
}

test_selector_pointer_covers if {
	spec := object.union(ssa, {"ignoreDifferences": [{"group": "", "kind": "Service", "jsonPointers": ["/spec/selector/rollouts-pod-template-hash"]}]})
	count(rule.violation) == 0 with input as fx.bundle(spec, false)
}

test_client_side_apply_is_not_judged if {
	count(rule.violation) == 0 with input as fx.bundle(fx.self_heal({}), false)
}
