// Command gendocs writes docs/rules/<ID>.md for every rule and the rules table
// of README.md (between the rules-table markers). `make docs` runs it; a test
// fails when the committed files are stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rolloutlint/rolloutlint/internal/docgen"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := docgen.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
