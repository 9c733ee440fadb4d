package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"runtime"
	"sync"
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
		// Waiting for a slot here, in the accept loop, keeps the arrival order.
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			_ = raw.Close()
			return
		}
		go l.handshake(raw)
	}
}

func (l *handshakeListener) handshake(raw net.Conn) {
	defer func() { <-l.slots }()
	conn := tls.Server(raw, l.cfg)
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	if err := conn.HandshakeContext(ctx); err != nil {
		l.log.Debug("TLS handshake failed", "remote", raw.RemoteAddr().String(), "err", err)
		_ = raw.Close()
		return
	}
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
