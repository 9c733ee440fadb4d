package planreport

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// Write writes in the named format the document Build would assemble from
// the plans at(0), …, at(n-1), in that order (a nil plan is left out). Text
// and JSON are streamed: a bounded window of Rollouts is planned, predicted
// and formatted at a time, on every CPU, and written in order as each is
// done, so that memory does not grow with the bundle; the other formats
// assemble the document first. at must be safe to call concurrently; pl
// is a Planner of the calling goroutine's (nil for the other formats), in
// which at may plan: a plan is dropped once written (plan.EachIn). The
// bytes are those of the format's Writer on Build's document.
func Write(w io.Writer, format string, m *xds.Model, sc *xds.Scoper, n int, at func(i int, pl *plan.Planner) *plan.Plan, rejected map[plan.Object][]Rejection) error {
	return WriteBundles(w, format, m, []Bundle{{N: n, At: at, Scoper: sc, Rejected: rejected}})
}

// WriteBundles is Write over the Rollouts of several bundles, one after
// another in order: the document BuildBundles would assemble, streamed as
// Write streams one bundle.
func WriteBundles(w io.Writer, format string, m *xds.Model, bundles []Bundle) error {
	doc := head(m)
	var f streamFormat
	switch format {
	case "text":
		f = textStream(doc)
	case "json":
		f = jsonStream(doc)
	default:
		wr, ok := Formats[format]
		if !ok {
			return fmt.Errorf("unknown format %q", format)
		}
		return wr(w, BuildBundles(m, bundles))
	}
	// starts[k] is the index of bundle k's first Rollout among all.
	starts := make([]int, len(bundles)+1)
	for k := range bundles {
		starts[k+1] = starts[k] + bundles[k].N
	}
	n := starts[len(bundles)]
	// body formats the i-th Rollout with a formatter of its goroutine; ok
	// is false when it has no plan.
	body := func(w *worker, dst []byte, i int) ([]byte, bool) {
		k := 0
		if len(bundles) > 1 {
			k = sort.SearchInts(starts[1:], i+1)
		}
		b := &bundles[k]
		p := b.At(i-starts[k], &w.pl)
		if p == nil {
			return dst, false
		}
		r := b.rolloutOf(w.mem, m, p)
		return w.format(dst, &r), true
	}
	newWorker := func() *worker { return &worker{format: f.newBody(), mem: &reuse{}} }
	bw := bufio.NewWriterSize(w, 64<<10)
	k := 0 // Rollouts written
	emit := func(b []byte) error {
		if err := f.before(bw, k); err != nil {
			return err
		}
		k++
		_, err := bw.Write(b)
		return err
	}
	if err := stream(n, newWorker, body, emit); err != nil {
		return err
	}
	if err := f.end(bw, k); err != nil {
		return err
	}
	return bw.Flush()
}

// worker is the state of a goroutine of Write: its formatter, and the
// memory its Rollouts' plans, predictions and states reuse (each Rollout is
// formatted before the next is planned).
type worker struct {
	format func(dst []byte, r *Rollout) []byte
	pl     plan.Planner
	mem    *reuse
}

// streamFormat is a format written one Rollout at a time.
type streamFormat struct {
	// newBody returns a function appending one Rollout's bytes to dst;
	// each goroutine formatting Rollouts has its own.
	newBody func() func(dst []byte, r *Rollout) []byte
	// before writes what precedes the k-th Rollout written (from 0).
	before func(bw *bufio.Writer, k int) error
	// end writes what follows the last of n Rollouts.
	end func(bw *bufio.Writer, n int) error
}

func textStream(doc *Document) streamFormat {
	return streamFormat{
		newBody: func() func([]byte, *Rollout) []byte {
			t := newTextWriter(doc)
			return func(dst []byte, r *Rollout) []byte {
				b := bytes.NewBuffer(dst)
				t.rollout(b, r)
				return b.Bytes()
			}
		},
		before: func(bw *bufio.Writer, k int) error {
			if k > 0 {
				return bw.WriteByte('\n')
			}
			return nil
		},
		end: func(bw *bufio.Writer, n int) error {
			if n == 0 {
				_, err := bw.WriteString("no Rollout in the input\n")
				return err
			}
			return nil
		},
	}
}

func jsonStream(doc *Document) streamFormat {
	return streamFormat{
		newBody: func() func([]byte, *Rollout) []byte {
			// Indented with the prefix of an element of the top-level
			// "rollouts" array, the Rollout is what the Encoder's
			// indentation of the whole document writes there.
			enc := newJSONEnc("    ")
			return func(dst []byte, r *Rollout) []byte {
				enc.b = dst
				enc.rollout(r)
				b := enc.b
				enc.b = nil
				return b
			}
		},
		before: func(bw *bufio.Writer, k int) error {
			if k > 0 {
				_, err := bw.WriteString(",\n    ")
				return err
			}
			opening, err := jsonOpening(doc)
			if err != nil {
				return err
			}
			if _, err := bw.Write(opening); err != nil {
				return err
			}
			_, err = bw.WriteString("[\n    ")
			return err
		},
		end: func(bw *bufio.Writer, n int) error {
			if n == 0 {
				return JSON(bw, doc)
			}
			_, err := bw.WriteString("\n  ]\n}\n")
			return err
		},
	}
}

// minParallel is the fewest items stream spreads over goroutines: for a
// small bundle they would cost more than they save.
const minParallel = 8

// streamWindow is how many items per goroutine stream keeps in flight:
// enough that one slow item does not leave the others idle, few enough
// that memory stays that of a handful of Rollouts.
const streamWindow = 4

// stream calls body for every i in [0, n) and emit, in order of i, with
// the bytes of each call that returned ok. The calls of body run on up to
// GOMAXPROCS goroutines, each with its own state from newState, at most a
// window of items ahead of emit; emit runs on the caller's goroutine. The
// first error of emit stops the calls and is returned once the goroutines
// have stopped.
func stream[S any](n int, newState func() S, body func(s S, dst []byte, i int) ([]byte, bool), emit func([]byte) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || n < minParallel {
		s := newState()
		var buf []byte
		for i := range n {
			b, ok := body(s, buf[:0], i)
			buf = b
			if !ok {
				continue
			}
			if err := emit(b); err != nil {
				return err
			}
		}
		return nil
	}
	// Item i is made in slot i%window. A goroutine takes a token before it
	// claims an item, and emit returns one once it has written an item, so
	// the items in flight are at most window: a slot is free when claimed.
	window := workers * streamWindow
	type slot struct {
		buf  []byte
		done chan bool // ok, sent once the item's buf is ready
	}
	slots := make([]slot, window)
	tokens := make(chan struct{}, window)
	for i := range slots {
		slots[i].done = make(chan bool, 1)
		tokens <- struct{}{}
	}
	quit := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := newState()
			for {
				select {
				case <-quit:
					return
				case <-tokens:
				}
				select {
				case <-quit: // both were ready: stop rather than start an item
					return
				default:
				}
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				sl := &slots[i%window]
				b, ok := body(s, sl.buf[:0], i)
				sl.buf = b
				sl.done <- ok
			}
		})
	}
	var err error
	for i := range n {
		sl := &slots[i%window]
		if <-sl.done {
			if err = emit(sl.buf); err != nil {
				break
			}
		}
		tokens <- struct{}{}
	}
	close(quit)
	wg.Wait()
	return err
}
