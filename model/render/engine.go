package render

import (
	"errors"
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

// DefaultHelm, when set, is the engine of every Renderer whose Options
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
			r.client = helmrpc.NewClient(helmrpc.ClientOptions{Context: r.opts.Context})
			r.engine = r.client
		}
	})
	return r.engine
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
// how to install the one this rolloutlint needs.
func (r *Renderer) engineFailed(u *units.Unit, chartFile string, res *Result, err error) {
	var notFound *helmrpc.NotFoundError
	var protocol *helmrpc.ProtocolError
	switch {
	case errors.As(err, &notFound):
		res.failDetail(lineStart(chartFile, 1), installHint(),
			"chart %s was not rendered: %s, the companion that renders Helm charts, is not installed (looked %s)",
			u.Dir, helmrpc.Name, strings.Join(notFound.Looked, ", then "))
	case errors.As(err, &protocol):
		res.failDetail(lineStart(chartFile, 1), installHint(),
			"chart %s was not rendered: %s (%s) speaks protocol %d and this rolloutlint speaks protocol %d: they come from different releases",
			u.Dir, protocol.Path, protocol.Version, protocol.Protocol, helmrpc.ProtocolVersion)
	default:
		res.fail(lineStart(chartFile, 1), "chart %s was not rendered: %v", u.Dir, err)
	}
}

// installHint says how to install the companion of this rolloutlint.
func installHint() string {
	v := version.Get()
	at := v.Version
	if at == version.Dev {
		at = "latest"
		if v.Commit != "unknown" && !v.Modified {
			at = v.Commit
		}
	}
	return "Install the " + helmrpc.Name + " of this rolloutlint (" + v.Version + ") beside it, on PATH, or at $" + helmrpc.EnvPath +
		": `go install github.com/rolloutlint/rolloutlint/cmd/" + helmrpc.Name + "@" + at +
		"` (`go install ./...` in a checkout installs both), or use the release archive or container image, which ship both binaries."
}
