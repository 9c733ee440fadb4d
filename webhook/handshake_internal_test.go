package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/internal/testcert"
)

// TestIdleConnectionsHoldNoHandshakeSlot opens more connections that never
// send a ClientHello (or send only part of one) than there are handshake
// slots, and checks that a real client's handshake still completes: a slot
// is taken only once a whole ClientHello has arrived. Before, the idle
// connections held every slot until the handshake timeout (here an hour).
func TestIdleConnectionsHoldNoHandshakeSlot(t *testing.T) {
	pair, err := testcert.New(t.TempDir(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	certs, err := NewCertReloader(pair.CertFile, pair.KeyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}
	const slots = 2
	hl := newHandshakeListener(ln, cfg, slots, time.Hour, slog.New(slog.DiscardHandler))
	defer func() { _ = hl.Close() }()
	go func() {
		for {
			c, err := hl.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	hello := clientHello(t)
	for i := range 3 * slots {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		switch i % 3 {
		case 1: // the start of a ClientHello record, never finished
			_, err = c.Write(hello[:7])
		case 2: // a whole ClientHello, and then silence: the slot is kept slotGrace at most
			_, err = c.Write(hello)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pair.CAPEM)
	// A hang detector, not a speed bound: the listener's own timeout is an hour.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 2 * slots { // more handshakes than slots: each gives its slot back
		d := tls.Dialer{Config: &tls.Config{RootCAs: pool}}
		c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("handshake %d with %d idle connections open: %v", i, 3*slots, err)
		}
		_ = c.Close()
	}
}

// clientHello is the first record a TLS client sends.
func clientHello(t *testing.T) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer func() { _ = a.Close() }()
	go func() { _ = tls.Client(b, &tls.Config{ServerName: "x"}).Handshake() }()
	rec, err := readRecord(a)
	if err != nil || rec[0] != 0x16 || len(rec) < 100 {
		t.Fatalf("no ClientHello: %d bytes, %v", len(rec), err)
	}
	return rec
}

// TestReadRecord reads a connection's first TLS record whole, and hands
// back what is not a handshake record as it came.
func TestReadRecord(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want int
	}{
		{"handshake record", append([]byte{0x16, 0x03, 0x01, 0x00, 0x03}, 1, 2, 3, 4, 5), 8},
		{"not TLS", []byte("GET / HTTP/1.1\r\n"), 5},
		{"announces more than a record", []byte{0x16, 0x03, 0x01, 0xff, 0xff, 9}, 5},
	} {
		a, b := net.Pipe()
		go func() { _, _ = b.Write(c.in); _ = b.Close() }()
		got, err := readRecord(a)
		if err != nil || len(got) != c.want {
			t.Errorf("%s: read %d bytes (%v), want %d", c.name, len(got), err, c.want)
		}
		_ = a.Close()
	}
}
