package rolloutlint.lib

# Argo CD Application semantics: automated sync, ignoreDifferences coverage,
# the weights of managed routes.

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

# sync_mode describes an Application's automated sync for messages.
sync_mode(app) := "automated sync with selfHeal" if {
	self_heal(app)
} else := "automated sync"

# app_path is where an Application finding lands: its ignoreDifferences when
# it has some, else its automated sync policy.
app_path(app) := "spec.ignoreDifferences" if {
	app.object.spec.ignoreDifferences
} else := "spec.syncPolicy.automated"
