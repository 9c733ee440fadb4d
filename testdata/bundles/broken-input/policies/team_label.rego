# METADATA
# title: A Rollout carries no team label.
# description: |
#   Every Rollout names the owning team in metadata.labels.team, so that
#   alerts from its analysis runs reach the right on-call rotation.
#
#   Bad: a Rollout without metadata.labels.team.
#   Good: metadata.labels.team set to the owning team.
# custom:
#   id: RL9101
#   severity: warning
#   kinds: [Rollout]
#   tags: [ownership]
package inventory.team_label

# The violation object says "message" where the policy contract wants "msg":
# rolloutlint cannot turn it into a finding and reports the policy as failed.
violation contains v if {
	some item in input.kinds.Rollout
	not item.object.metadata.labels.team
	v := {
		"message": sprintf("Rollout %s has no team label", [item.ref.name]),
		"ref": item.ref,
		"path": "metadata.labels",
	}
}
