package helmrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EnvPath names the environment variable that gives the companion's path
// (it wins over the one beside the executable and PATH).
const EnvPath = "ROLLOUTLINT_HELM"

// NotFoundError is a companion that is not installed where rolloutlint
// looks for it.
type NotFoundError struct {
	// Looked lists where it was looked for, in order.
	Looked []string
}

func (e *NotFoundError) Error() string {
	return Name + " is not installed (looked " + strings.Join(e.Looked, ", then ") + ")"
}

// ProtocolError is a companion that speaks another protocol version (one
// of another rolloutlint release).
type ProtocolError struct {
	// Path is the companion run; Protocol and Version are what it said.
	Path     string
	Protocol int
	Version  string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%s (%s) speaks protocol %d, and this rolloutlint speaks protocol %d", e.Path, e.Version, e.Protocol, ProtocolVersion)
}

// FailedError is a companion that did not start, crashed, or wrote what
// is not the protocol.
type FailedError struct {
	// Path is the companion run.
	Path string
	// Reason says what happened (exit status 2, an unreadable response).
	Reason string
	// Stderr is what the companion wrote to its standard error besides
	// its log: the first 3 KiB and the last 1 KiB, when it wrote more.
	Stderr string
}

func (e *FailedError) Error() string {
	msg := e.Path + " " + e.Reason
	if e.Stderr != "" {
		msg += "; its standard error:\n" + e.Stderr
	}
	return msg
}

// exeSuffix is what executables' names end with.
func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// Locate finds the companion: $ROLLOUTLINT_HELM if set, else
// rolloutlint-helm beside the running executable (symbolic links
// resolved), else on PATH.
func Locate() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		if isFile(p) {
			return p, nil
		}
		return "", &NotFoundError{Looked: []string{fmt.Sprintf("at $%s, %s", EnvPath, p)}}
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), Name+exeSuffix())
		if isFile(p) {
			return p, nil
		}
		looked = append(looked, "at "+p)
	}
	if p, err := exec.LookPath(Name); err == nil {
		return p, nil
	}
	return "", &NotFoundError{Looked: append(looked, "on PATH")}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Client runs one companion process, started at the first request, and
// sends it the requests of every goroutine; it is safe for concurrent use.
// A companion that dies is started again for the next request, and a
// request in flight when it died is sent again alone, so that a chart
// that crashes the companion fails by itself and the others render.
type Client struct {
	ctx        context.Context
	locate     func() (string, error)
	stderr     io.Writer
	version    string
	onMismatch func(Mismatch)
	mismatch   sync.Once

	// solo is held shared by each request, exclusively by a request sent
	// again after a crash.
	solo sync.RWMutex

	mu     sync.Mutex // guards the fields below
	path   string
	proc   *process
	spawns int
	broken error // the companion cannot be started: every request fails so
	closed bool
	nextID atomic.Uint64
	// unwatch stops watching the context.
	unwatch func() bool
}

// maxSpawns bounds how often one client starts the companion (each crash
// costs a start).
const maxSpawns = 32

// helloTimeout bounds the wait for the hello line of a starting companion.
const helloTimeout = time.Minute

// ClientOptions configure a Client.
type ClientOptions struct {
	// Context stops the companion when done (nil: never).
	Context context.Context
	// Locate finds the companion (nil: Locate).
	Locate func() (string, error)
	// Stderr receives the companion's log (Helm's warnings), as they
	// reached rolloutlint's own standard error when Helm ran in process,
	// and what else it wrote there when it ends well (nil: os.Stderr).
	// What a companion that fails wrote is in the error instead.
	Stderr io.Writer
	// Version is the version of the rolloutlint the client runs in, and
	// OnMismatch is called, once, when a companion that speaks the
	// protocol is of another release (both versions release versions;
	// see IsRelease): it renders, with the Helm library of its own
	// release. Nil OnMismatch compares nothing.
	Version    string
	OnMismatch func(Mismatch)
}

// Mismatch is a companion of another release than the client's that
// speaks the client's protocol.
type Mismatch struct {
	// Path and Version are the companion's; Want is the client's version.
	Path, Version, Want string
}

// NewClient returns a client; the companion starts at the first Render.
func NewClient(opts ClientOptions) *Client {
	c := &Client{ctx: opts.Context, locate: opts.Locate, stderr: opts.Stderr, version: opts.Version, onMismatch: opts.OnMismatch}
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	if c.locate == nil {
		c.locate = Locate
	}
	if c.stderr == nil {
		c.stderr = os.Stderr
	}
	c.unwatch = context.AfterFunc(c.ctx, func() { c.shut(true) })
	return c
}

// Start starts the companion in the background, if it is not running,
// so that its start overlaps the caller's other work; a failure to start
// is the error of the next Render.
func (c *Client) Start() {
	go func() { _, _ = c.process() }()
}

// Render sends a request and waits for its response. The error is a
// *NotFoundError, *ProtocolError or *FailedError when the companion could
// not answer, else a problem with the request itself (values of a type
// the protocol does not carry) or the context's error.
func (c *Client) Render(req *Request) (*Response, error) {
	r := *req
	r.ID = c.nextID.Add(1)
	r.Protocol = ProtocolVersion
	wr, err := toWire(&r)
	if err != nil {
		return nil, fmt.Errorf("sending the values of chart %s to %s: %w", req.ChartDir, Name, err)
	}
	c.solo.RLock()
	resp, died, err := c.try(wr)
	c.solo.RUnlock()
	if !died {
		return resp, err
	}
	c.solo.Lock()
	defer c.solo.Unlock()
	resp, _, err = c.try(wr)
	return resp, err
}

// try sends a request to the current companion, started if need be; died
// is set when the companion died before it answered.
func (c *Client) try(wr *wireRequest) (resp *Response, died bool, err error) {
	p, err := c.process()
	if err != nil {
		return nil, false, err
	}
	c.checkRelease(p)
	ch := make(chan *Response, 1)
	if !p.register(wr.ID, ch) {
		<-p.dead
		return nil, true, p.deadErr
	}
	if err := p.send(wr); err != nil {
		p.kill(fmt.Sprintf("could not be sent a request: %v", err))
	}
	select {
	case resp := <-ch:
		return resp, false, nil
	case <-p.dead:
		select {
		case resp := <-ch: // answered just before it died
			return resp, false, nil
		default:
		}
		if err := c.ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("rendering chart %s: %w", wr.ChartDir, err)
		}
		return nil, true, p.deadErr
	}
}

// checkRelease reports, once, a companion of another release.
func (c *Client) checkRelease(p *process) {
	if c.onMismatch == nil || p.version == c.version || !IsRelease(p.version) || !IsRelease(c.version) {
		return
	}
	c.mismatch.Do(func() { c.onMismatch(Mismatch{Path: p.path, Version: p.version, Want: c.version}) })
}

// IsRelease tells whether v is the version of a release (v1.2.3, or a
// pre-release such as v1.2.3-rc.1), not that of a development build:
// "dev", a Go pseudo-version (v0.0.0-20261202150405-0123456789ab, what
// `go install …@COMMIT` reports) or one with build metadata (+dirty).
// Two development builds render the same only if built from the same
// tree, which their versions do not tell, so they are not compared.
func IsRelease(v string) bool {
	m := releaseRe().FindStringSubmatch(v)
	return m != nil && !pseudoRe().MatchString(m[1])
}

var (
	releaseRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^v(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	})
	// pseudoRe matches the pre-release part of a pseudo-version: a UTC
	// time stamp and a 12-digit commit prefix.
	pseudoRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^-|\.)[0-9]{14}-[0-9a-f]{12}$`)
	})
)

// process returns the running companion, starting one if there is none.
func (c *Client) process() (*process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s stopped: %w", Name, err)
	}
	if c.closed {
		if err := c.ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s stopped: %w", Name, err)
		}
		return nil, errors.New(Name + " was stopped: the run ended")
	}
	if c.broken != nil {
		return nil, c.broken
	}
	if c.proc != nil {
		select {
		case <-c.proc.dead:
			if c.spawns >= maxSpawns {
				c.broken = fmt.Errorf("%w (it was started %d times, the most one run starts it)", c.proc.deadErr, maxSpawns)
				return nil, c.broken
			}
		default:
			return c.proc, nil
		}
	}
	if c.path == "" {
		path, err := c.locate()
		if err != nil {
			c.broken = err
			return nil, err
		}
		c.path = path
	}
	c.spawns++
	p, err := start(c.ctx, c.path, c.stderr)
	if err != nil {
		c.broken = err
		return nil, err
	}
	c.proc = p
	return p, nil
}

// Close stops the companion: its input ends, and it is killed if it has
// not exited a few seconds later. Requests in flight and after Close fail.
func (c *Client) Close() error {
	c.unwatch()
	c.shut(false)
	return nil
}

// shut marks the client closed and stops its companion, at once when kill
// is set (the context was cancelled).
func (c *Client) shut(kill bool) {
	c.mu.Lock()
	c.closed = true
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return
	}
	if kill {
		p.kill("was stopped: " + c.ctx.Err().Error())
	} else {
		p.stop()
	}
	<-p.dead // reaped, and what it wrote to its standard error passed on
}

// process is one running companion.
type process struct {
	path    string
	version string // from its hello line
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *os.File
	stderr  *stderrSink

	sendMu sync.Mutex // guards bw
	bw     *bufio.Writer

	pmu     sync.Mutex // guards pending and gone
	pending map[uint64]chan *Response
	gone    bool

	dead     chan struct{} // closed once the process exited and deadErr is set
	deadErr  error
	killOnce sync.Once
	reason   string // why it was killed ("" when it exited by itself)
	exited   chan struct{}
}

// start runs the companion and reads its hello line.
func start(ctx context.Context, path string, stderr io.Writer) (*process, error) {
	cmd := exec.Command(path, ServeCommand)
	cmd.Env = append(os.Environ(), EnvLog+"="+logTagged)
	sink := &stderrSink{pass: stderr}
	cmd.Stderr = sink
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, &FailedError{Path: path, Reason: "could not be started: " + err.Error()}
	}
	// A pipe of our own, not StdoutPipe: Wait closes that one when the
	// process exits, maybe before its last response was read.
	out, w, err := os.Pipe()
	if err != nil {
		return nil, &FailedError{Path: path, Reason: "could not be started: " + err.Error()}
	}
	cmd.Stdout = w
	cmd.WaitDelay = 5 * time.Second // a grandchild holding its standard error cannot hold Wait
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = out.Close()
		return nil, &FailedError{Path: path, Reason: "could not be started: " + err.Error()}
	}
	p := &process{path: path, cmd: cmd, in: in, out: out, stderr: sink, pending: map[uint64]chan *Response{},
		dead: make(chan struct{}), exited: make(chan struct{})}
	go p.wait()
	p.bw = bufio.NewWriter(in)
	br := bufio.NewReader(out)
	type hello struct {
		line string
		err  error
	}
	got := make(chan hello, 1)
	go func() {
		line, err := readLine(br, maxHello)
		got <- hello{line, err}
	}()
	timer := time.NewTimer(helloTimeout)
	defer timer.Stop()
	var h hello
	select {
	case h = <-got:
	case <-timer.C:
		h.err = fmt.Errorf("wrote no hello line in %s", helloTimeout)
	case <-ctx.Done():
		p.kill("was stopped")
		<-p.exited
		_ = out.Close()
		return nil, fmt.Errorf("starting %s: %w", path, ctx.Err())
	}
	fail := func(reason string) (*process, error) {
		p.kill(reason)
		<-p.exited
		_ = out.Close()
		return nil, &FailedError{Path: path, Reason: reason + exitNote(cmd), Stderr: sink.close()}
	}
	if h.err != nil {
		if errors.Is(h.err, io.EOF) {
			return fail("exited before it said hello")
		}
		return fail("did not say hello: " + h.err.Error())
	}
	protocol, version, ok := ParseHello(h.line)
	if !ok {
		return fail(fmt.Sprintf("is not %s: its first line is %q", Name, h.line))
	}
	if protocol != ProtocolVersion {
		p.kill("speaks another protocol")
		<-p.exited
		_ = out.Close()
		return nil, &ProtocolError{Path: path, Protocol: protocol, Version: version}
	}
	p.version = version
	go p.read(br)
	return p, nil
}

// readLine reads up to a newline, at most max bytes.
func readLine(r *bufio.Reader, max int) (string, error) {
	var b strings.Builder
	for b.Len() < max {
		c, err := r.ReadByte()
		if err != nil {
			return b.String(), err
		}
		b.WriteByte(c)
		if c == '\n' {
			return b.String(), nil
		}
	}
	return b.String(), fmt.Errorf("a first line longer than %d bytes", max)
}

func exitNote(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return ""
	}
	return " (" + cmd.ProcessState.String() + ")"
}

// wait reaps the process.
func (p *process) wait() {
	_ = p.cmd.Wait()
	close(p.exited)
}

// register adds a pending request; false when the process is gone.
func (p *process) register(id uint64, ch chan *Response) bool {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	if p.gone {
		return false
	}
	p.pending[id] = ch
	return true
}

func (p *process) send(wr *wireRequest) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	if err := writeFrame(p.bw, wr.marshal()); err != nil {
		return err
	}
	return p.bw.Flush()
}

// read delivers responses until the companion's output ends or is not
// the protocol; then the process is marked dead.
func (p *process) read(br *bufio.Reader) {
	for {
		payload, err := readFrame(br)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				p.finish("")
			} else {
				p.finish("wrote a response that is not the protocol: " + err.Error())
			}
			return
		}
		resp, err := unmarshalResponse(payload)
		if err != nil {
			p.finish("wrote a response that is not the protocol: " + err.Error())
			return
		}
		p.pmu.Lock()
		ch, ok := p.pending[resp.ID]
		delete(p.pending, resp.ID)
		p.pmu.Unlock()
		if !ok {
			p.finish(fmt.Sprintf("answered request %d, which it was not sent", resp.ID))
			return
		}
		ch <- resp
	}
}

// finish kills the process if reason is set, waits for it to exit, and
// fails what is pending.
func (p *process) finish(reason string) {
	if reason != "" {
		p.kill(reason)
	}
	p.pmu.Lock()
	p.gone = true
	p.pmu.Unlock()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.kill("closed its output but did not exit")
		<-p.exited
	}
	_ = p.out.Close()
	kept := p.stderr.close()
	why := p.reason
	if why == stopped && p.cmd.ProcessState.Success() {
		// It ended well: what it wrote is no failure's, and is shown as
		// its log is.
		if kept != "" {
			_, _ = io.WriteString(p.stderr.pass, kept+"\n")
		}
		kept = ""
	}
	if why == "" {
		why = "exited while rendering"
	}
	p.deadErr = &FailedError{Path: p.path, Reason: why + exitNote(p.cmd), Stderr: kept}
	close(p.dead)
}

// kill stops the process for a reason (the first reason given is kept).
func (p *process) kill(reason string) {
	p.killOnce.Do(func() {
		p.reason = reason
		_ = p.in.Close()
		if p.cmd.Process != nil {
			_ = p.cmd.Process.Kill()
		}
	})
}

// stopped is the reason of a companion stopped by Close.
const stopped = "was stopped"

// stop ends the companion's input, and kills it if it has not exited
// after a grace period.
func (p *process) stop() {
	p.killOnce.Do(func() {
		p.reason = stopped
		_ = p.in.Close()
		go func() {
			select {
			case <-p.exited:
			case <-time.After(5 * time.Second):
				_ = p.cmd.Process.Kill()
			}
		}()
	})
}
