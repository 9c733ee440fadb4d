// Package golden holds the golden-output test: every bundle directory under
// testdata/bundles/ is linted through the real command line in text, json and
// sarif, and the output is compared with text.golden, json.golden and
// sarif.golden beside the bundle. `go test ./internal/golden -update`
// rewrites them. Golden files use the .golden extension so that linting a
// bundle directory does not read them as manifests. A bundle's own
// .rolloutlint.yaml is passed with --config, so it can enable opt-in rules and
// user policies.
//
// The SARIF rule descriptors of the built-in rules (tool.driver.rules, the
// rule catalogue with its help text) are compared once, with
// testdata/bundles/sarif-rules.golden; a bundle's sarif.golden lists those
// rules by ID only, and keeps its results and user-policy rules whole.
//
// The enabled-rule count at the end of the text and JSON outputs is written
// relative to the registry's default selection ("{default} rules",
// `"rules": "{default}+2"` where a bundle's config adds two rules), and that
// default is counted from the registry: a new rule changes only the goldens
// of the bundles where it fires, and the catalogue.
//
// TestEveryRuleFiresInBundles lints the same bundles and fails naming each
// registered rule that reports no active finding in any of them.
package golden
