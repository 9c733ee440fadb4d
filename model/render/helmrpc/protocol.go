// Package helmrpc is the protocol between rolloutlint and rolloutlint-helm,
// the companion binary that renders Helm charts. Helm (and, through it,
// github.com/santhosh-tekuri/jsonschema and client-go's typed clients)
// has package initialisers that cost milliseconds on every start; linked
// only into the companion, they run only when a lint holds a chart.
//
// This package imports no Helm: it has the request and response types,
// their wire encoding (framed envelopes, envelope.go, with the values in
// the lossless encoding of values.go), the companion's serving loop (Serve, given the
// function that renders) and the client rolloutlint starts the companion
// with (Start, Locate).
//
// The conversation: rolloutlint starts `rolloutlint-helm serve` with pipes
// on its standard input and output. The companion writes one hello line,
// "rolloutlint-helm protocol N VERSION\n", then reads requests and
// writes responses, one frame each, each response carrying the ID of its
// request; it renders several requests at once and answers in the order
// they finish. It stops at the end of its input, without finishing the
// renders in flight: the client ends the input once it wants no more
// answers, or by exiting (however it was stopped), so that a companion
// never outlives the rolloutlint that started it by a long render.
package helmrpc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// ProtocolVersion is the version of this protocol. A change to the hello
// line, the envelopes or the values encoding that an older peer would
// misread increments it; rolloutlint refuses a companion of another
// version with a finding that says how to install the matching one.
//
// 2: the envelopes in frames of their own encoding (1: gob).
const ProtocolVersion = 2

// Name is the companion's command name (with ".exe" on Windows).
const Name = "rolloutlint-helm"

// ServeCommand is the argument that makes the companion serve.
const ServeCommand = "serve"

// helloPrefix starts the line the companion writes first.
const helloPrefix = Name + " protocol "

// maxHello bounds the hello line a client reads.
const maxHello = 256

// Hello is the first line the companion writes, naming the protocol and
// the companion's version.
func Hello(version string) string {
	return helloPrefix + strconv.Itoa(ProtocolVersion) + " " + version + "\n"
}

// ParseHello reads the protocol version and the companion's version from
// a hello line; ok is false when the line is not a hello at all.
func ParseHello(line string) (protocol int, version string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimRight(line, "\r\n"), helloPrefix)
	if !found {
		return 0, "", false
	}
	num, version, _ := strings.Cut(rest, " ")
	protocol, err := strconv.Atoi(num)
	if err != nil {
		return 0, "", false
	}
	return protocol, version, true
}

// Request asks the companion to render one chart, as `helm template`
// does, client-only.
type Request struct {
	// ID is echoed in the response (set by the client).
	ID uint64
	// Protocol is ProtocolVersion of the sender (set by the client).
	Protocol int
	// ChartDir is the chart's directory (absolute, or relative to the
	// working directory both processes share).
	ChartDir string
	// CheckOnly asks only to load the chart and list its missing
	// dependencies: rolloutlint reports those before a problem in the
	// values, as Helm meets them first.
	CheckOnly bool
	// Values are the merged values (values files, inline values,
	// parameters), in their Go types.
	Values map[string]any
	// ReleaseName and Namespace are the release's.
	ReleaseName, Namespace string
	// APIVersions are added to Helm's default capabilities, and
	// KubeVersion replaces their Kubernetes version when it parses
	// (an Argo CD Application's helm.apiVersions and helm.kubeVersion).
	APIVersions []string
	KubeVersion string
}

// Stage names the step a render failed at.
type Stage string

// The stages a render can fail at, in the order Helm runs them.
const (
	// StageLoad is loading the chart (Chart.yaml, templates, charts/).
	StageLoad Stage = "load"
	// StageDependencies is processing dependency conditions, tags and
	// import-values.
	StageDependencies Stage = "dependencies"
	// StageKubeVersion is the chart's kubeVersion constraint, which the
	// capabilities' Kubernetes version does not satisfy (Error is empty:
	// Response.ChartKubeVersion and KubeVersion say it).
	StageKubeVersion Stage = "kubeVersion"
	// StageValues is building the render values, checked against
	// values.schema.json.
	StageValues Stage = "values-schema"
	// StageRender is executing the templates.
	StageRender Stage = "render"
	// StageRequest is a request the companion could not take (another
	// protocol version, values it could not decode).
	StageRequest Stage = "request"
	// StagePanic is Helm panicking on the chart (Error is the panic's
	// value); the companion goes on.
	StagePanic Stage = "panic"
)

// File is one rendered template.
type File struct {
	// Name is the engine's template name (chart/templates/x.yaml).
	Name string
	// Text is its output.
	Text string
}

// Response is the companion's answer to a Request.
type Response struct {
	// ID is the request's.
	ID uint64
	// ChartName and ChartKubeVersion are Chart.yaml's name and
	// kubeVersion (set once the chart loaded).
	ChartName        string
	ChartKubeVersion string
	// Missing lists the Chart.yaml dependencies with no chart under
	// charts/; nothing is rendered then.
	Missing []string
	// Stage and Error tell where and why the render failed; Stage is
	// empty when it did not.
	Stage Stage
	Error string
	// Files are every template's output, sorted by name.
	Files []File
	// KubeVersion is the Kubernetes version of the capabilities the
	// chart was checked and rendered with (v1.20.0).
	KubeVersion string
}

// wireRequest is a Request on the wire: the values in their own encoding.
type wireRequest struct {
	ID                     uint64
	Protocol               int
	ChartDir               string
	CheckOnly              bool
	Values                 []byte
	ReleaseName, Namespace string
	APIVersions            []string
	KubeVersion            string
}

// Handler renders one request (helmengine.Render in the companion).
type Handler func(*Request) *Response

// ServeOptions configure Serve.
type ServeOptions struct {
	// Version is the companion's version, in the hello line.
	Version string
	// Parallel bounds the requests rendered at once (GOMAXPROCS when 0).
	Parallel int
}

// Serve writes the hello line to w, then answers the requests read from
// r until r ends, with up to opts.Parallel of them rendered at once; a
// handler that panics answers its request with StagePanic. It returns
// nil at the end of r, else what went wrong reading or writing, at once:
// the requests still rendering then are not answered (their handlers
// run on, and the companion exits).
func Serve(r io.Reader, w io.Writer, handle Handler, opts ServeOptions) error {
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString(Hello(opts.Version)); err != nil {
		return fmt.Errorf("writing the hello line: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the hello line: %w", err)
	}
	br := bufio.NewReader(r)
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	slots := make(chan struct{}, parallel)
	var (
		mu       sync.Mutex // guards bw, writeErr and ended
		writeErr error
		ended    bool
	)
	answer := func(resp *Response) {
		mu.Lock()
		defer mu.Unlock()
		if writeErr != nil || ended {
			return
		}
		if err := writeFrame(bw, resp.marshal()); err != nil {
			writeErr = fmt.Errorf("writing the response to request %d: %w", resp.ID, err)
			return
		}
		if err := bw.Flush(); err != nil {
			writeErr = fmt.Errorf("writing the response to request %d: %w", resp.ID, err)
		}
	}
	var readErr error
	for {
		payload, err := readFrame(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = fmt.Errorf("reading a request: %w", err)
			}
			break
		}
		wr, err := unmarshalRequest(payload)
		if err != nil {
			readErr = fmt.Errorf("reading %w", err)
			break
		}
		// The slot is taken in the goroutine, so that the end of the
		// input is seen while every slot is busy.
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			answer(handleWire(wr, handle))
		}()
	}
	mu.Lock()
	defer mu.Unlock()
	ended = true
	if readErr != nil {
		return readErr
	}
	return writeErr
}

// handleWire decodes a request and renders it, never panicking.
func handleWire(wr *wireRequest, handle Handler) (resp *Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = &Response{ID: wr.ID, Stage: StagePanic, Error: fmt.Sprint(p)}
		}
	}()
	if wr.Protocol != ProtocolVersion {
		return &Response{ID: wr.ID, Stage: StageRequest,
			Error: fmt.Sprintf("request of protocol %d; this rolloutlint-helm speaks protocol %d", wr.Protocol, ProtocolVersion)}
	}
	req := &Request{ID: wr.ID, Protocol: wr.Protocol, ChartDir: wr.ChartDir, CheckOnly: wr.CheckOnly,
		ReleaseName: wr.ReleaseName, Namespace: wr.Namespace, APIVersions: wr.APIVersions, KubeVersion: wr.KubeVersion}
	if len(wr.Values) > 0 {
		vals, err := DecodeValues(wr.Values)
		if err != nil {
			return &Response{ID: wr.ID, Stage: StageRequest, Error: err.Error()}
		}
		req.Values = vals
	}
	resp = handle(req)
	if resp == nil {
		resp = &Response{Stage: StageRequest, Error: "the handler gave no response"}
	}
	resp.ID = wr.ID
	return resp
}

func toWire(req *Request) (*wireRequest, error) {
	wr := &wireRequest{ID: req.ID, Protocol: req.Protocol, ChartDir: req.ChartDir, CheckOnly: req.CheckOnly,
		ReleaseName: req.ReleaseName, Namespace: req.Namespace, APIVersions: req.APIVersions, KubeVersion: req.KubeVersion}
	if req.Values != nil {
		b, err := EncodeValues(req.Values)
		if err != nil {
			return nil, err
		}
		wr.Values = b
	}
	return wr, nil
}
