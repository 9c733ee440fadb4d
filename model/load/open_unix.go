//go:build unix

package load

import (
	"os"
	"syscall"
)

// openNoWait opens a file for reading without waiting: opening a named pipe
// blocks until a writer opens it, and a lint named one hung forever. Opened
// non-blocking, a pipe with a writer is read through the runtime's poller as
// the writer goes, and one without a writer reads as empty.
func openNoWait(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
