// Package tool holds the RL0xxx rules: problems with the input itself (found
// by the loader) and with suppressions and rules (found by the driver). They
// are rules like any other so config, suppression and every output format
// treat them alike.
package tool

import (
	"github.com/rolloutlint/rolloutlint/rules"
)

// fromProblems reports the loader's problems that carry the rule's ID.
func fromProblems(p *rules.Pass) error {
	for _, pr := range p.Graph.Problems {
		if pr.RuleID != p.Rule.ID {
			continue
		}
		d := rules.Diagnostic{Pos: pr.Pos, Resource: pr.Resource, Path: pr.Path, Message: pr.Message, Detail: pr.Detail}
		if pr.Info {
			d.Severity = rules.Info
		}
		p.ReportDiag(d)
	}
	return nil
}

// reportedByDriver is the Run of rules whose findings the analyzer driver
// produces itself (suppression checks, rule failures).
func reportedByDriver(*rules.Pass) error { return nil }
