//go:build unix

package fifo

import "syscall"

// Make creates a named pipe at path with the permission bits mode.
func Make(path string, mode uint32) error {
	return syscall.Mkfifo(path, mode)
}
