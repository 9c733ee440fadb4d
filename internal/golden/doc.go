// Package golden holds the golden-output test: every bundle directory under
// testdata/bundles/ is linted through the real command line in text, json and
// sarif, and the output is compared with text.golden, json.golden and
// sarif.golden beside the bundle. `go test ./internal/golden -update`
// rewrites them. Golden files use the .golden extension so that linting a
// bundle directory does not read them as manifests.
package golden
