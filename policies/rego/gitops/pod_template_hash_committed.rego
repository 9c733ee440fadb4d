# METADATA
# title: rollouts-pod-template-hash is committed in a Service selector or DestinationRule subset.
# description: |
#   Argo Rollouts injects the `rollouts-pod-template-hash` label into the selectors of the
#   Services and the labels of the DestinationRule subsets a Rollout uses, and rewrites it at
#   every rollout with the hash of the new ReplicaSet. A hash committed to git names a ReplicaSet
#   that is gone after the next rollout: each apply or Argo CD sync points the Service or subset
#   at no pods (503 `no healthy upstream` for the stable traffic) until the controller writes the
#   current hash back, and Argo CD shows the object OutOfSync for good.
#
#   Leave the label out of git; the controller adds it.
# related_resources:
# - ref: https://argo-rollouts.readthedocs.io/en/stable/features/traffic-management/
#   description: Argo Rollouts, traffic management
# custom:
#   id: RL5002
#   severity: warning
#   kinds: [Rollout, Service, DestinationRule]
#   requires: [Rollout, [Service, DestinationRule]]
#   tags: [gitops]
#   since: v0.1.0
#   bad: |
#     kind: Service
#     spec:
#       selector:
#         app: checkout
#         rollouts-pod-template-hash: 6f9c7b7d4
#   good: |
#     kind: Service
#     spec:
#       selector:
#         app: checkout
package rolloutlint.gitops.pod_template_hash_committed

import data.rolloutlint.lib

violation contains v if {
	some rr in input.rollouts
	some svc in rr.services
	item := rolloutlint.resource(input, svc.target.index)
	hash := item.object.spec.selector["rollouts-pod-template-hash"]
	v := {
		"msg": sprintf(
			"Service %s (the %s of Rollout %s) commits selector %s=%v",
			[svc.name, svc.role, rr.rollout.name, lib.hash_label, hash],
		),
		"detail": "Argo Rollouts writes the hash of the current ReplicaSet here, so each apply or sync points the Service at pods of an old ReplicaSet until the controller rewrites it.",
		"ref": svc.target,
		"path": lib.key("spec.selector", lib.hash_label),
		"related": [{"ref": rr.rollout, "path": svc.path, "msg": sprintf("Rollout %s manages this Service's selector", [rr.rollout.name])}],
		"fix": sprintf("Remove %s from the committed selector; the controller adds it.", [lib.hash_label]),
	}
}

violation contains v if {
	some rr in input.rollouts
	dr := rr.destinationRule
	item := rolloutlint.resource(input, dr.target.index)

	# Each field in its own reference, so that only these are converted
	# (see policies/fields.go).
	some i
	hash := item.object.spec.subsets[i].labels["rollouts-pod-template-hash"]
	name := item.object.spec.subsets[i].name
	name in managed_subsets(dr)
	v := {
		"msg": sprintf("subset %s of DestinationRule %s commits label %s=%v", [name, dr.name, lib.hash_label, hash]),
		"detail": sprintf(
			"Rollout %s writes the hash of the current ReplicaSet into its stable and canary subsets, so each apply or sync sends the subset's traffic to pods of an old ReplicaSet until the controller rewrites it.",
			[rr.rollout.name],
		),
		"ref": dr.target,
		"path": lib.key(sprintf("spec.subsets[%d].labels", [i]), lib.hash_label),
		"related": [{"ref": rr.rollout, "path": dr.path, "msg": sprintf("Rollout %s manages this DestinationRule's subsets", [rr.rollout.name])}],
		"fix": sprintf("Remove %s from the committed subset labels; the controller adds it.", [lib.hash_label]),
	}
}

managed_subsets(dr) := {s | some s in array.concat([dr.stableSubset, dr.canarySubset], object.get(dr, "additionalSubsets", []))}
