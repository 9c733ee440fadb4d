package render

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rolloutlint/rolloutlint/internal/version"
	"github.com/rolloutlint/rolloutlint/model/render/helmrpc"
	"github.com/rolloutlint/rolloutlint/model/units"
)

// HelmEngine renders charts for a Renderer: by default the rolloutlint-helm
// companion (a helmrpc.Client), which holds Helm so that rolloutlint does
// not link it; helmengine.InProcess renders with Helm in process. An
// engine is called from several goroutines at once.
type HelmEngine interface {
	// Render renders one chart. The error is the engine's own failure
	// (the companion is missing, crashed, speaks another protocol); a
	// chart that does not render is a response with a Stage.
	Render(req *helmrpc.Request) (*helmrpc.Response, error)
}

// DefaultHelm is, when set, the engine of every Renderer whose Options
// name none, in place of the rolloutlint-helm companion. rolloutlint
// leaves it nil; a test or another program that links Helm may set it
// (to helmengine.InProcess{}) before it renders.
var DefaultHelm HelmEngine

// helmEngine is the engine of the renderer: Options.Helm, else
// DefaultHelm, else a companion started at the first chart and stopped by
// Close.
func (r *Renderer) helmEngine() HelmEngine {
	r.engineOnce.Do(func() {
		switch {
		case r.opts.Helm != nil:
			r.engine = r.opts.Helm
		case DefaultHelm != nil:
			r.engine = DefaultHelm
		default:
			stderr := r.opts.Stderr
			if stderr == nil {
				stderr = realStderr() // not a kustomize build's capture
			}
			r.client = helmrpc.NewClient(helmrpc.ClientOptions{Context: r.opts.Context, Stderr: stderr,
				Version: version.Get().Short(), OnMismatch: func(m helmrpc.Mismatch) { noteMismatch(stderr, m) }})
			r.engine = r.client
		}
	})
	return r.engine
}

// StartHelm starts the rolloutlint-helm companion in the background when
// the renderer renders with it, so that its start overlaps the rendering
// of other units; call it once the units to render are known to hold a
// chart.
func (r *Renderer) StartHelm() {
	r.helmEngine()
	if r.client != nil {
		r.client.Start()
	}
}

// Close stops the rolloutlint-helm companion the renderer started, if it
// started one. Charts rendered after Close fail.
func (r *Renderer) Close() error {
	r.engineOnce.Do(func() {}) // no companion starts after Close
	if r.client != nil {
		return r.client.Close()
	}
	return nil
}

// engineFailed reports a chart the engine could not render, at Chart.yaml,
// saying why and, when the companion is missing or of another release,
// the command that installs the one this rolloutlint needs.
func (r *Renderer) engineFailed(u *units.Unit, chartFile string, res *Result, err error) {
	var notFound *helmrpc.NotFoundError
	var protocol *helmrpc.ProtocolError
	switch {
	case errors.As(err, &notFound):
		res.failDetail(lineStart(chartFile, 1), installDetail,
			"chart %s was not rendered: %s, the companion that renders Helm charts, is not installed (looked %s): install it with %s",
			u.Dir, helmrpc.Name, strings.Join(notFound.Looked, ", then "), installCommand())
	case errors.As(err, &protocol):
		res.failDetail(lineStart(chartFile, 1), installDetail,
			"chart %s was not rendered: %s is of another release (%s, protocol %d; this rolloutlint, %s, speaks protocol %d): install the matching one with %s",
			u.Dir, protocol.Path, protocol.Version, protocol.Protocol, version.Get().Version, helmrpc.ProtocolVersion, installCommand())
	default:
		res.fail(lineStart(chartFile, 1), "chart %s was not rendered: %v", u.Dir, err)
	}
}

// noteMismatch tells, on standard error, that the companion is of another
// release than this rolloutlint. It is a note, not a finding: the charts
// render (the two speak one protocol), with the Helm library of the
// companion's release, which may differ from this release's in what it
// accepts or prints; that is a matter of the installation, not of the
// repository linted, and a finding would land on whichever chart came
// first, in SARIF and against --fail-level.
func noteMismatch(w io.Writer, m helmrpc.Mismatch) {
	self, err := os.Executable()
	if err != nil {
		self = "rolloutlint"
	}
	_, _ = fmt.Fprintf(w, "rolloutlint: warning: %s is %s, and this rolloutlint (%s) is %s: charts are rendered with the Helm library of %s %s; install the matching one with %s\n",
		m.Path, m.Version, self, m.Want, helmrpc.Name, m.Version, installCommand())
}

// installDetail tells where rolloutlint looks for the companion.
const installDetail = "rolloutlint starts " + helmrpc.Name + " when a lint holds a Helm chart, and looks for it at $" + helmrpc.EnvPath +
	", beside the rolloutlint binary, then on PATH. `go install ./...` in a checkout installs both; the release archives and the container image ship both."

// installCommand is the command that installs the companion of this
// rolloutlint: its release, else the commit it was built from, else the
// latest.
func installCommand() string {
	v := version.Get()
	at := v.Version
	if at == version.Dev {
		at = "latest"
		if v.Commit != "unknown" && !v.Modified {
			at = v.Commit
		}
	}
	return "`go install github.com/rolloutlint/rolloutlint/cmd/" + helmrpc.Name + "@" + at + "`"
}
