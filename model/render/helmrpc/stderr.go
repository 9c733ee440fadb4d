package helmrpc

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
)

// The companion's standard error carries two things: its log (Helm's
// warnings, such as a values file's "skipped value for …", which `helm
// template` prints too) and, when it fails, what the Go runtime or the
// companion says about the failure (a fatal error and its stacks). The
// client passes the log on to rolloutlint's standard error as it comes,
// and keeps the rest, bounded, for the finding that reports the failure,
// so that a crash is shown once. To tell them apart the client sets
// $ROLLOUTLINT_HELM_LOG=tagged, and the companion starts each log line
// with logTag; a companion that was not asked writes its log plain.

// EnvLog names the environment variable by which the client asks the
// companion to tag its log lines ("tagged").
const EnvLog = "ROLLOUTLINT_HELM_LOG"

// logTagged is the value of EnvLog that asks for tagged log lines.
const logTagged = "tagged"

// logTag starts each log line the companion writes when asked.
const logTag = "\x1frolloutlint-helm log\x1f"

// LogTo sends the log package's output (Helm's warnings, through
// log.Printf and slog's default handler, which writes through it) to
// stderr, each line tagged when the client asked for it. The companion
// calls it before Serve.
func LogTo(stderr io.Writer) {
	if os.Getenv(EnvLog) != logTagged {
		log.SetOutput(stderr)
		return
	}
	log.SetOutput(&taggedWriter{w: stderr})
}

// taggedWriter starts every line written to it with logTag.
type taggedWriter struct {
	mu sync.Mutex
	w  io.Writer
	// mid is set when the last write ended inside a line.
	mid bool
	buf []byte
}

func (t *taggedWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.buf[:0]
	for rest := b; len(rest) > 0; {
		if !t.mid {
			t.buf = append(t.buf, logTag...)
		}
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		t.buf = append(t.buf, line...)
		rest = rest[len(line):]
		t.mid = line[len(line)-1] != '\n'
	}
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Bounds of what a client keeps of a companion's standard error: the
// start (a fatal error's message and the failing goroutine's stack) and
// the end, so that a finding carries a few kilobytes, not megabytes.
const (
	stderrHead = 3 << 10
	stderrTail = 1 << 10
	// maxLine bounds the part of a line held back to see its start.
	maxLine = 64 << 10
)

// stderrSink is a companion's standard error, as the client takes it:
// tagged lines (its log) go to pass at once, without the tag; the rest
// is kept, bounded.
type stderrSink struct {
	mu   sync.Mutex
	pass io.Writer
	kept headTail
	line []byte // the start of a line not yet ended
	// cont is set while the rest of a line longer than maxLine goes on
	// where its start went (passed: contPass).
	cont, contPass bool
}

func (s *stderrSink) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i+1]
		}
		b = b[len(chunk):]
		ended := chunk[len(chunk)-1] == '\n'
		if s.cont {
			s.emit(chunk, s.contPass)
			s.cont = !ended
			continue
		}
		s.line = append(s.line, chunk...)
		if !ended && len(s.line) < maxLine {
			continue
		}
		tagged := bytes.HasPrefix(s.line, []byte(logTag))
		if tagged {
			s.emit(s.line[len(logTag):], true)
		} else {
			s.emit(s.line, false)
		}
		s.line = s.line[:0]
		s.cont, s.contPass = !ended, tagged
	}
	return n, nil
}

func (s *stderrSink) emit(b []byte, pass bool) {
	if pass {
		_, _ = s.pass.Write(b) // a warning lost to a closed stderr is no failure of the render
		return
	}
	_, _ = s.kept.Write(b)
}

// close keeps a last line that did not end, and returns what was kept.
func (s *stderrSink) close() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.line) > 0 {
		if b, ok := bytes.CutPrefix(s.line, []byte(logTag)); ok {
			s.emit(append(b, '\n'), true)
		} else {
			s.emit(s.line, false)
		}
		s.line = nil
	}
	return s.kept.String()
}

// headTail keeps the first stderrHead and the last stderrTail bytes
// written to it.
type headTail struct {
	head, tail []byte
	total      int64
}

func (h *headTail) Write(b []byte) (int, error) {
	n := len(b)
	h.total += int64(n)
	if room := stderrHead - len(h.head); room > 0 {
		take := min(room, len(b))
		h.head = append(h.head, b[:take]...)
		b = b[take:]
	}
	if len(b) == 0 {
		return n, nil
	}
	h.tail = append(h.tail, b...)
	if over := len(h.tail) - stderrTail; over > 0 {
		h.tail = append(h.tail[:0], h.tail[over:]...)
	}
	return n, nil
}

// String is the kept text, trimmed; when some was left out, the start
// ends and the end begins at a line, with a note of what is missing.
func (h *headTail) String() string {
	left := h.total - int64(len(h.head)) - int64(len(h.tail))
	if left == 0 {
		return strings.TrimSpace(string(h.head) + string(h.tail))
	}
	head, tail := string(h.head), string(h.tail)
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		left += int64(len(head) - i - 1)
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		left += int64(i + 1)
		tail = tail[i+1:]
	}
	return strings.TrimSpace(fmt.Sprintf("%s[… %d bytes left out …]\n%s", head, left, tail))
}
