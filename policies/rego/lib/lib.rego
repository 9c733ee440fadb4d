# METADATA
# title: rolloutlint shared policy library
# description: |
#   Helpers over the input document: resources by kind and identity, the
#   Rollouts' resolved references, field paths, and Argo CD Application
#   semantics (automated sync, ignoreDifferences coverage).
package rolloutlint.lib

# resources returns the items of a kind, in load order.
resources(kind) := object.get(input.kinds, kind, [])

# get returns the item with that identity (undefined when absent).
get(kind, ns, name) := input.objects[kind][ns][name]

# resource returns the item a ref designates.
resource(ref) := input.resources[ref.index]

# key appends a mapping key to a field path, quoting it like graph.Key does.
key(base, k) := sprintf("%s[%q]", [base, k]) if {
	regex.match(`[.\[\]"' /]`, k)
} else := k if {
	base == ""
} else := concat(".", [base, k])

# index appends a sequence index to a field path.
index(base, i) := sprintf("%s[%d]", [base, i])

# violation_item builds a violation in the shape the adapter expects.
violation_item(msg, ref, path) := {"msg": msg, "ref": ref, "path": path}

# Argo Rollouts' field manager name in managedFields.
rollouts_manager := "rollouts-controller"

# The label Argo Rollouts injects into selectors and subsets.
hash_label := "rollouts-pod-template-hash"

# --- Argo CD ---------------------------------------------------------------

# applications are the Argo CD Applications of the bundle.
applications contains app if {
	some app in resources("Application")
	startswith(app.apiVersion, "argoproj.io/")
}

# automated holds for an Application with automated sync (selfHeal or not):
# Argo CD applies git on its own, so git and the controller fight.
automated(app) if app.object.spec.syncPolicy.automated

self_heal(app) if app.object.spec.syncPolicy.automated.selfHeal == true

sync_options(app) := object.get(app.object, ["spec", "syncPolicy", "syncOptions"], [])

respects_ignore_differences(app) if "RespectIgnoreDifferences=true" in sync_options(app)

server_side(app) if "ServerSideApply=true" in sync_options(app)

server_side(app) if {
	opts := app.object.metadata.annotations["argocd.argoproj.io/compare-options"]
	contains(opts, "ServerSideDiff=true")
}

ignore_entries(app) := object.get(app.object, ["spec", "ignoreDifferences"], [])

# argocd_managed holds when the bundle is deployed by Argo CD: an
# Application is in it, or the config says so (argocd: true).
argocd_managed if count(applications) > 0

argocd_managed if input.globals.argocd

# config_only holds when only the config says Argo CD deploys the bundle, so
# the Application (and its ignoreDifferences) cannot be checked.
config_only if {
	input.globals.argocd
	count(applications) == 0
}

# entry_applies holds when an ignoreDifferences entry selects the object
# (group, kind, and name/namespace when the entry sets them).
entry_applies(entry, group, item) if {
	object.get(entry, "group", "") in {group, "*"}
	entry.kind in {item.ref.kind, "*"}
	object.get(entry, "name", item.ref.name) == item.ref.name
	object.get(entry, "namespace", item.ref.namespace) == item.ref.namespace
}

# managed_fields_ignored holds when the entry ignores every field the Rollouts
# controller owns on the live object.
managed_fields_ignored(entry) if rollouts_manager in object.get(entry, "managedFieldsManagers", [])

# ignored holds when an entry of the Application covers the field with one of
# the given jq expressions or JSON pointers, or by field manager.
ignored(app, group, item, jq, pointers) if {
	some entry in ignore_entries(app)
	entry_applies(entry, group, item)
	covers(entry, jq, pointers)
}

covers(entry, _, _) if managed_fields_ignored(entry)

covers(entry, jq, _) if {
	some e in object.get(entry, "jqPathExpressions", [])
	normalize_jq(e) in jq
}

covers(entry, _, pointers) if {
	some p in object.get(entry, "jsonPointers", [])
	trim_suffix(p, "/") in pointers
}

# normalize_jq drops spaces so `.spec.http[] .route[].weight` style variants compare.
normalize_jq(e) := replace(trim_space(e), " ", "")

# --- Rollout references --------------------------------------------------

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

# weights_ignored holds when the Application ignores the weights of a route:
# by a covering jq expression or pointer, or by pointers to every weight.
weights_ignored(app, route) if ignored(app, "networking.istio.io", resource(route.vs), weight_jq(route.kind), weight_pointers(route.kind, route.index))

weights_ignored(app, route) if {
	count(route.destinations) > 0
	every d in route.destinations {
		ignored(app, "networking.istio.io", resource(route.vs), set(), {
			sprintf("/spec/%s/%d/route/%d", [route.kind, route.index, d.index]),
			sprintf("/spec/%s/%d/route/%d/weight", [route.kind, route.index, d.index]),
		})
	}
}

# weights_snippet is the ignoreDifferences entry for the weights of a route kind.
weights_snippet(kind) := sprintf(`spec:
  ignoreDifferences:
  - group: networking.istio.io
    kind: VirtualService
    jqPathExpressions:
    - .spec.%s[].route[].weight
  syncPolicy:
    syncOptions:
    - RespectIgnoreDifferences=true`, [kind])

# describe names an object: Kind namespace/name.
describe(ref) := sprintf("%s %s/%s", [ref.kind, ref.namespace, ref.name])

# summarize lists up to three names and says how many more there are.
summarize(names) := concat(", ", names) if {
	count(names) <= 3
} else := sprintf("%s and %d more", [concat(", ", array.slice(names, 0, 3)), count(names) - 3])

# routes are the managed routes without the Rollout that manages them, so a
# route two Rollouts manage counts once: {vs, kind, index, vsPath, destinations}.
routes contains object.remove(r, ["rollout", "rolloutPath"]) if some r in managed_routes

# route_label names a route for messages: VirtualService ns/name http route
# "primary" when the route has a name, else VirtualService ns/name http[0].
route_label(r) := sprintf("VirtualService %s/%s %s route %q", [r.vs.namespace, r.vs.name, r.kind, r.name]) if {
	object.get(r, "name", "") != ""
} else := sprintf("VirtualService %s/%s %s[%d]", [r.vs.namespace, r.vs.name, r.kind, r.index])

# sync_mode describes an Application's automated sync for messages.
sync_mode(app) := "automated sync with selfHeal" if {
	self_heal(app)
} else := "automated sync"

# app_path is where an Application finding lands: its ignoreDifferences when
# it has some, else its automated sync policy.
app_path(app) := "spec.ignoreDifferences" if {
	app.object.spec.ignoreDifferences
} else := "spec.syncPolicy.automated"

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
