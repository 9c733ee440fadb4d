//go:build !unix

package fifo

// Make returns ErrUnsupported: this system has no named pipes in the file
// system.
func Make(string, uint32) error { return ErrUnsupported }
