//go:build !unix

package load

import "os"

// openNoWait opens a file for reading; systems without named pipes need no
// care.
func openNoWait(path string) (*os.File, error) { return os.Open(path) }
