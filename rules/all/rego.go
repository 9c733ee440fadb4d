package all

import "github.com/rolloutlint/rolloutlint/policies"

// The built-in Rego policies (RL5xxx GitOps ownership rules) join the
// registry through the extra seam; policies imports only rules and graph, so
// there is no cycle.
func init() { extra = policies.Builtin }
