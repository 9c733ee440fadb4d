package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxHandshakes bounds the TLS handshakes in progress: a few per CPU keep
// the CPU busy while handshakes wait on the network.
func maxHandshakes() int { return 4 * max(runtime.GOMAXPROCS(0), 1) }

// handshakeListener completes TLS handshakes before handing connections to
// the HTTP server, a bounded number at a time, in the order the connections
// arrived. A burst of new connections (the API servers restarting, a
// connection pool dropped) then completes its handshakes one after the other
// and each review is served as soon as its own handshake is done, instead of
// every handshake sharing the CPU until all of them finish late together.
type handshakeListener struct {
	net.Listener
	cfg     *tls.Config
	slots   chan struct{}
	timeout time.Duration
	log     *slog.Logger

	ready     chan net.Conn
	done      chan struct{}
	closeOnce sync.Once
}

func newHandshakeListener(ln net.Listener, cfg *tls.Config, concurrent int, timeout time.Duration, log *slog.Logger) *handshakeListener {
	l := &handshakeListener{Listener: ln, cfg: cfg, slots: make(chan struct{}, concurrent), timeout: timeout, log: log,
		ready: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

func (l *handshakeListener) acceptLoop() {
	var backoff time.Duration
	for {
		raw, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				l.close()
				return
			}
			// A passing failure (too many open files, a connection reset
			// before it was accepted): retry, as net/http's accept loop does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			l.log.Warn("accepting a connection failed; retrying", "err", err, "in", backoff)
			select {
			case <-l.done:
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		go l.handshake(raw)
	}
}

// slotGrace is how long a handshake keeps its slot after the server's first
// flight is written, waiting for the client's answer. A handshake that ends
// within it (the normal case) keeps the burst paced: a client's own CPU then
// finishes a few handshakes at a time instead of all of them late together.
// A client slower than that (or one that stalls on purpose) goes on without
// the slot, so it holds none longer than the server's work and this.
const slotGrace = 200 * time.Millisecond

// handshake completes one connection's TLS handshake. The slot is taken only
// once the client's whole first record (its ClientHello) has arrived, and
// given back when the handshake ends or slotGrace after the server's first
// flight was written: a slot bounds the handshakes computing at once, and a
// connection that sends nothing, or trickles its ClientHello, waits holding
// none (eight idle TCP connections used to hold every slot for the handshake
// timeout, so that no new connection was served). Slots are taken in the
// order ClientHellos complete.
func (l *handshakeListener) handshake(raw net.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	_ = raw.SetReadDeadline(deadline)
	hello, err := readRecord(raw)
	_ = raw.SetReadDeadline(time.Time{})
	if err != nil {
		l.log.Debug("no TLS ClientHello", "remote", raw.RemoteAddr().String(), "err", err)
		_ = raw.Close()
		return
	}
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		_ = raw.Close()
		return
	case <-l.done:
		_ = raw.Close()
		return
	}
	held := &slotConn{Conn: raw, pending: hello, release: func() { <-l.slots }}
	defer held.handshakeDone()
	conn := tls.Server(held, l.cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		l.log.Debug("TLS handshake failed", "remote", raw.RemoteAddr().String(), "err", err)
		_ = raw.Close()
		return
	}
	held.handshakeDone()
	select {
	case l.ready <- conn:
	case <-l.done:
		_ = conn.Close()
	}
}

// Accept returns the next connection whose handshake is complete.
func (l *handshakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handshakeListener) close() { l.closeOnce.Do(func() { close(l.done) }) }

// Close stops accepting; handshakes in progress are dropped.
func (l *handshakeListener) Close() error {
	l.close()
	return l.Listener.Close()
}

// maxRecord is the largest TLS record a ClientHello can come in: 16 KiB of
// plaintext and the 2 KiB of expansion TLS allows.
const maxRecord = 16<<10 + 2048

// readRecord reads the connection's first TLS record: its 5-byte header and
// the body the header announces. Bytes that are not a handshake record, or
// announce more than a record holds, are returned as read, for the TLS
// handshake to reject.
func readRecord(c net.Conn) ([]byte, error) {
	head := make([]byte, 5, 5+512)
	if _, err := io.ReadFull(c, head); err != nil {
		return nil, err
	}
	n := int(head[3])<<8 | int(head[4])
	if head[0] != 0x16 || n > maxRecord {
		return head, nil
	}
	rec := append(head, make([]byte, n)...)
	if _, err := io.ReadFull(c, rec[5:]); err != nil {
		return nil, err
	}
	return rec, nil
}

// slotConn is a server connection that first replays the bytes read before
// its handshake began, and gives its handshake slot back
// slotGrace after its first write (the server's first flight: the costly part
// of a handshake is done), or when the handshake ends, whichever is first.
type slotConn struct {
	net.Conn
	pending  []byte
	release  func()
	released atomic.Bool
	timer    *time.Timer // started by the first write; written only by the handshake's goroutine
}

func (c *slotConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

func (c *slotConn) Write(p []byte) (int, error) {
	if !c.released.Load() && c.timer == nil {
		c.timer = time.AfterFunc(slotGrace, c.releaseSlot)
	}
	return c.Conn.Write(p)
}

// handshakeDone gives the slot back when the handshake has ended; it runs on
// the handshake's goroutine, the one that started the timer.
func (c *slotConn) handshakeDone() {
	if c.timer != nil {
		c.timer.Stop()
	}
	c.releaseSlot()
}

// releaseSlot gives the handshake slot back, once.
func (c *slotConn) releaseSlot() {
	if !c.released.Load() && c.released.CompareAndSwap(false, true) {
		c.release()
	}
}
