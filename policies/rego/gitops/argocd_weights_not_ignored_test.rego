package rolloutlint.gitops.argocd_weights_not_ignored_test

import data.rolloutlint.fixture_test as fx
import data.rolloutlint.gitops.argocd_weights_not_ignored as rule

test_self_heal_without_ignore if {
	vs := rule.violation with input as fx.bundle(fx.self_heal({}), false)
	count(vs) == 1
	some v in vs
	v.ref == fx.app
	v.path == "spec.syncPolicy.automated"
	contains(v.detail, "automated sync with selfHeal")
	contains(v.detail, "VirtualService shop/checkout http[0]")
	contains(v.fix, ".spec.http[].route[].weight")
	v.related[0].path == "spec.http[0]"
}

test_jq_weights_cover if {
	count(rule.violation) == 0 with input as fx.bundle(object.union(fx.respect, fx.weights_ignored), false)
}

test_pointer_to_route_covers if {
	spec := fx.self_heal({"ignoreDifferences": [{"group": "networking.istio.io", "kind": "VirtualService", "jsonPointers": ["/spec/http/0"]}]})
	count(rule.violation) == 0 with input as fx.bundle(spec, false)
}

test_pointer_to_other_route_does_not_cover if {
	spec := fx.self_heal({"ignoreDifferences": [{"group": "networking.istio.io", "kind": "VirtualService", "jsonPointers": ["/spec/http/1"]}]})
	vs := rule.violation with input as fx.bundle(spec, false)
	some v in vs
	v.path == "spec.ignoreDifferences"
}

test_pointers_to_every_weight_cover if {
	spec := fx.self_heal({"ignoreDifferences": [{"group": "networking.istio.io", "kind": "VirtualService", "jsonPointers": [
		"/spec/http/0/route/0/weight",
		"/spec/http/0/route/1/weight",
	]}]})
	count(rule.violation) == 0 with input as fx.bundle(spec, false)
}

test_tls_expression_does_not_cover_http if {
	spec := fx.self_heal({"ignoreDifferences": [{"group": "networking.istio.io", "kind": "VirtualService", "jqPathExpressions": [".spec.tls[].route[].weight"]}]})
	count(rule.violation) == 1 with input as fx.bundle(spec, false)
}

test_other_vs_name_does_not_cover if {
	spec := fx.self_heal({"ignoreDifferences": [{"group": "networking.istio.io", "kind": "VirtualService", "name": "search", "jqPathExpressions": [".spec.http[].route[].weight"]}]})
	count(rule.violation) == 1 with input as fx.bundle(spec, false)
}

test_managed_fields_manager_covers if {
	spec := fx.self_heal({"ignoreDifferences": [{"group": "*", "kind": "*", "managedFieldsManagers": ["rollouts-controller"]}]})
	count(rule.violation) == 0 with input as fx.bundle(spec, false)
}

test_manual_sync_is_not_judged if {
	count(rule.violation) == 0 with input as fx.bundle({"project": "default"}, false)
}

test_config_only_reminds_at_info_on_the_route if {
	vs := rule.violation with input as fx.bundle(null, true)
	count(vs) == 1
	some v in vs
	v.severity == "info"
	v.ref == fx.vs
	v.path == "spec.http[0]"
}

test_not_argocd_managed if {
	count(rule.violation) == 0 with input as fx.bundle(null, false)
}
