package webhook

import (
	"context"
	"crypto/tls"
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
// symlink, which file-change notifications can miss, so it compares the files'
// size and modification time at most once per Interval on the TLS handshake
// path; a pair that fails to load keeps the previous one in service.
type CertReloader struct {
	CertFile, KeyFile string
	// Interval is the least time between two checks of the files (default 2 s).
	Interval time.Duration
	Log      *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string
	checked time.Time
}

// NewCertReloader loads the pair once and fails when it cannot.
func NewCertReloader(certFile, keyFile string, log *slog.Logger) (*CertReloader, error) {
	r := &CertReloader{CertFile: certFile, KeyFile: keyFile, Interval: 2 * time.Second, Log: log}
	if err := r.reload(time.Now()); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *CertReloader) fileStamp() (string, error) {
	var s string
	for _, f := range []string{r.CertFile, r.KeyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf("%d/%d;", st.Size(), st.ModTime().UnixNano())
	}
	return s, nil
}

func (r *CertReloader) reload(now time.Time) error {
	stamp, err := r.fileStamp()
	if err != nil {
		return fmt.Errorf("reading serving certificate: %w", err)
	}
	r.checked = now
	if stamp == r.stamp && r.cert != nil {
		return nil
	}
	c, err := tls.LoadX509KeyPair(r.CertFile, r.KeyFile)
	if err != nil {
		return fmt.Errorf("loading serving certificate %s / %s: %w", r.CertFile, r.KeyFile, err)
	}
	first := r.cert == nil
	r.cert, r.stamp = &c, stamp
	if !first && r.Log != nil {
		r.Log.Info("serving certificate reloaded", "cert", r.CertFile)
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

// Serve runs the HTTPS server on addr until ctx is done, then shuts it down
// gracefully. TLS 1.2 is the floor; the certificate comes from certs.
func Serve(ctx context.Context, addr string, h http.Handler, certs *CertReloader, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ServeListener(ctx, ln, h, certs, log)
}

// ServeListener is Serve on an existing listener (tests pass one on port 0).
func ServeListener(ctx context.Context, ln net.Listener, h http.Handler, certs *CertReloader, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	log.Info("serving admission reviews", "addr", ln.Addr().String(), "path", ValidatePath)
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}
