# METADATA
# title: A policy whose evaluation never finishes in practice.
# description: |
#   Test fixture for RL0009: ten billion iterations stand for a policy that loops or explodes.
#   The adapter stops it at the time limit and the lint reports RL0009 naming it.
#
#   Bad: this policy. Good: a policy that iterates over the bundle once.
# custom:
#   id: RL9009
#   severity: error
#   kinds: [Rollout]
package example.runaway # want "rule RL9009 \\(runaway\\) failed: policy example\\.runaway \\(.*runaway\\.rego:1\\) was stopped after 300ms"

violation contains v if {
	some ro in input.rollouts
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i * j == -1
	v := {"msg": "unreachable", "ref": ro.rollout, "path": "spec"}
}
