package webhook

import (
	"context"
	"time"
)

// queue bounds how many reviews are linted at once. A review waits for a
// slot in arrival order (a goroutine blocked on a channel send is woken
// first-in, first-out) until its deadline; one that cannot get a slot in time
// is answered by the failure mode instead of slowing every other review down.
// A slot is given back when its lint has really ended, not when the review
// was answered, so that lints abandoned at their deadline never pile up
// beside new ones: the memory in use stays bounded by the slots.
type queue struct {
	slots   chan struct{}
	waiting chan struct{} // bounds the reviews waiting for a slot
	m       *Metrics
}

func newQueue(concurrent, maxWaiting int, m *Metrics) *queue {
	return &queue{slots: make(chan struct{}, concurrent), waiting: make(chan struct{}, maxWaiting), m: m}
}

// errQueueFull and errQueueTimeout say why a review got no slot.
type queueError string

func (e queueError) Error() string { return string(e) }

const (
	errQueueFull    = queueError("too many reviews waiting")
	errQueueTimeout = queueError("no lint slot free before the review's deadline")
)

// acquire waits for a slot until ctx is done. On success the caller owns the
// slot and must call release once the lint has ended.
func (q *queue) acquire(ctx context.Context) error {
	select {
	case q.slots <- struct{}{}: // a free slot: no wait
		q.m.queueWait.Observe(0)
		q.m.inFlight.Inc()
		return nil
	default:
	}
	select {
	case q.waiting <- struct{}{}:
	default:
		return errQueueFull
	}
	q.m.queued.Inc()
	began := time.Now()
	defer func() {
		<-q.waiting
		q.m.queued.Dec()
		q.m.queueWait.Observe(time.Since(began).Seconds())
	}()
	select {
	case q.slots <- struct{}{}:
		q.m.inFlight.Inc()
		return nil
	case <-ctx.Done():
		return errQueueTimeout
	}
}

func (q *queue) release() {
	q.m.inFlight.Dec()
	<-q.slots
}
