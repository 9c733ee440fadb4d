package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// CertReloader serves a certificate and key from files and picks up new
// versions without a restart. Kubelet updates Secret volumes by swapping a
// symlink, which file-change notifications can miss, and a rewrite can keep a
// file's size and modification time, so it re-reads both files at most once
// per Interval on the TLS handshake path and reloads when their content
// differs; a pair that fails to load keeps the previous one in service.
type CertReloader struct {
	CertFile, KeyFile string
	// Interval is the least time between two checks of the files (default 2 s).
	Interval time.Duration
	Log      *slog.Logger

	mu       sync.Mutex
	cert     *tls.Certificate
	notAfter time.Time
	digest   [sha256.Size]byte
	checked  time.Time
}

// NewCertReloader loads the pair once and fails when it cannot.
func NewCertReloader(certFile, keyFile string, log *slog.Logger) (*CertReloader, error) {
	r := &CertReloader{CertFile: certFile, KeyFile: keyFile, Interval: 2 * time.Second, Log: log}
	if err := r.reload(time.Now()); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *CertReloader) reload(now time.Time) error {
	r.checked = now
	certPEM, err := os.ReadFile(r.CertFile)
	if err != nil {
		return fmt.Errorf("reading serving certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(r.KeyFile)
	if err != nil {
		return fmt.Errorf("reading serving key: %w", err)
	}
	h := sha256.New()
	h.Write(certPEM)
	h.Write([]byte{0})
	h.Write(keyPEM)
	var digest [sha256.Size]byte
	h.Sum(digest[:0])
	if r.cert != nil && bytes.Equal(digest[:], r.digest[:]) {
		return nil
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("loading serving certificate %s / %s: %w", r.CertFile, r.KeyFile, err)
	}
	leaf := c.Leaf
	if leaf == nil && len(c.Certificate) > 0 {
		if leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return fmt.Errorf("parsing serving certificate %s: %w", r.CertFile, err)
		}
	}
	first := r.cert == nil
	r.cert, r.digest = &c, digest
	if leaf != nil {
		r.notAfter = leaf.NotAfter
	}
	if !first && r.Log != nil {
		r.Log.Info("serving certificate reloaded", "cert", r.CertFile, "notAfter", r.notAfter)
	}
	return nil
}

// GetCertificate is the tls.Config hook.
func (r *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if now.Sub(r.checked) >= r.Interval {
		if err := r.reload(now); err != nil && r.Log != nil {
			r.Log.Warn("keeping the previous serving certificate", "err", err)
		}
	}
	return r.cert, nil
}

// NotAfter is the expiry of the certificate in service.
func (r *CertReloader) NotAfter() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notAfter
}

// ServeOptions shape the server's shutdown.
type ServeOptions struct {
	// Drain is called first when ctx is done (the handler's Drain: /readyz
	// turns 503, so the endpoint is withdrawn while requests still succeed).
	Drain func()
	// DrainDelay is how long the server keeps serving after Drain, so that
	// the API servers stop sending here before the listener closes.
	DrainDelay time.Duration
	// ShutdownTimeout bounds the wait for reviews in flight (default 10 s).
	ShutdownTimeout time.Duration
	// MaxHandshakes bounds the TLS handshakes in progress (0: four per CPU).
	MaxHandshakes int
	// WriteTimeout bounds a request from its headers to the end of the
	// answer (0: 10 s); keep it above the reviews' deadline.
	WriteTimeout time.Duration
}

// Serve runs the HTTPS server on addr until ctx is done, then drains and
// shuts it down gracefully. TLS 1.2 is the floor; the certificate comes from certs.
func Serve(ctx context.Context, addr string, h http.Handler, certs *CertReloader, log *slog.Logger, opts ServeOptions) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ServeListener(ctx, ln, h, certs, log, opts)
}

// ServeListener is Serve on an existing listener (tests pass one on port 0).
func ServeListener(ctx context.Context, ln net.Listener, h http.Handler, certs *CertReloader, log *slog.Logger, opts ServeOptions) error {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate, NextProtos: []string{"h2", "http/1.1"}}
	handshakes := opts.MaxHandshakes
	if handshakes <= 0 {
		handshakes = maxHandshakes()
	}
	tln := newHandshakeListener(ln, cfg, handshakes, 5*time.Second, log)
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         cfg,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      cmp.Or(opts.WriteTimeout, 10*time.Second),
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tln) }()
	log.Info("serving admission reviews", "addr", ln.Addr().String(), "path", ValidatePath)
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	if opts.Drain != nil {
		opts.Drain()
	}
	log.Info("draining: readiness withdrawn, still serving", "delay", opts.DrainDelay)
	if opts.DrainDelay > 0 {
		select {
		case err := <-errc:
			return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
		case <-time.After(opts.DrainDelay):
		}
	}
	grace := opts.ShutdownTimeout
	if grace <= 0 {
		grace = 10 * time.Second
	}
	shutdown, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	began := time.Now()
	err := srv.Shutdown(shutdown)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("server ended with an error", "err", err)
	}
	if err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	log.Info("shut down", "took", time.Since(began).Round(time.Millisecond))
	return nil
}
