// Package fifo makes named pipes for tests of what reads or writes them.
package fifo

import "errors"

// ErrUnsupported is returned where the system has no named pipes that a
// path can name; tests skip then.
var ErrUnsupported = errors.New("named pipes are not supported here")
