// Package heapsize measures how much heap a value keeps alive, for
// benchmarks that report retained bytes.
package heapsize

import "runtime"

// Retained returns the bytes of heap that what f returns keeps alive: the
// live heap after a full collection, after f, minus before it.
func Retained(f func() any) int64 {
	before := live()
	v := f()
	after := live()
	runtime.KeepAlive(v)
	return after - before
}

// live is the heap in use after full collections. Two: what sync.Pools hold
// survives one collection (OPA pools its evaluation state, which refers to
// the last input it evaluated), and a lint measured after another must not
// count the earlier one's input as already there.
func live() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
