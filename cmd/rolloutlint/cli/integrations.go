package cli

import (
	"github.com/spf13/cobra"
)

// The CI integrations' flags: where SARIF URIs (and GitHub annotation paths)
// are relative to, and the code scanning category of the run.
func init() {
	var root, category string
	lintHooks = append(lintHooks, LintHook{
		Flags: func(c *cobra.Command) {
			c.Flags().StringVar(&root, "sarif-root", "", "directory that SARIF URIs (%SRCROOT%) and --format github paths are relative to; use the repository root (default: the working directory)")
			c.Flags().StringVar(&category, "sarif-category", "", "SARIF runAutomationDetails.id: the code scanning category that tells this run apart from other rolloutlint runs on the same commit")
		},
		Before: func(r *LintRun) error {
			r.Report.SARIFRoot = root
			r.Report.SARIFCategory = category
			r.Report.Warnings = r.Streams.Err
			return nil
		},
	})
}
