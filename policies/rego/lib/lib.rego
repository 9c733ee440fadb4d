# METADATA
# title: rolloutlint shared policy library
# description: |
#   Helpers over the input document: resources by kind and identity, field
#   paths and messages here; the Rollouts' resolved references in
#   routes.rego; Argo CD Application semantics (automated sync,
#   ignoreDifferences coverage) in argocd.rego. The files are one package:
#   a lint parses only those its policies reach (policies/builtin.json).
package rolloutlint.lib

# resources returns the items of a kind, in load order.
resources(kind) := object.get(input.kinds, kind, [])

# get returns the item with that identity (undefined when absent).
get(kind, ns, name) := input.objects[kind][ns][name]

# resource returns the item a ref designates, input.resources[ref.index]: on
# a lint's input it builds that item alone, so a policy that only follows
# refs does not make the whole list (policies/parts.go).
resource(ref) := rolloutlint.resource(input, ref.index)

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

# describe names an object: Kind namespace/name.
describe(ref) := sprintf("%s %s/%s", [ref.kind, ref.namespace, ref.name])

# summarize lists up to three names and says how many more there are.
summarize(names) := concat(", ", names) if {
	count(names) <= 3
} else := sprintf("%s and %d more", [concat(", ", array.slice(names, 0, 3)), count(names) - 3])
