package cli

import (
	"bytes"
	"strings"
)

// runMain runs the command line with empty stdin and returns the exit code,
// stdout and stderr.
func runMain(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errw)
	return code, out.String(), errw.String()
}
