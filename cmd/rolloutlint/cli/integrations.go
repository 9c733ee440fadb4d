package cli

import (
	"github.com/spf13/pflag"
)

// sarifOptions are the CI integrations' flags of `lint`: where SARIF URIs (and
// GitHub annotation paths) are relative to, and the code scanning category of
// the run.
type sarifOptions struct {
	root, category string
}

func (o *sarifOptions) bind(fl *pflag.FlagSet) {
	fl.StringVar(&o.root, "sarif-root", "", "directory that SARIF URIs (%SRCROOT%) and --format github paths are relative to; use the repository root (default: the working directory)")
	fl.StringVar(&o.category, "sarif-category", "", "SARIF runAutomationDetails.id: the code scanning category that tells this run apart from other rolloutlint runs on the same commit")
}
