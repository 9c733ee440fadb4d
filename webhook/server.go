// Package webhook is rolloutlint's validating admission webhook: it answers
// admission.k8s.io/v1 AdmissionReviews for Rollouts, Services,
// VirtualServices, DestinationRules and AnalysisTemplates by linting the
// incoming object together with the cluster objects it is related to, with
// the same rules as the CLI.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rolloutlint/rolloutlint/live/clusterview"
)

// Enforce is what the webhook does with findings.
type Enforce string

// Enforcement modes.
const (
	// EnforceError denies on error-level findings and warns on the rest.
	EnforceError Enforce = "error"
	// EnforceWarning never denies: errors and warnings are returned as warnings.
	EnforceWarning Enforce = "warning"
	// EnforceOff is audit mode: everything is allowed, findings are only
	// logged, counted and attached as an audit annotation.
	EnforceOff Enforce = "off"
)

// ParseEnforce parses an --enforce value.
func ParseEnforce(s string) (Enforce, error) {
	switch e := Enforce(s); e {
	case EnforceError, EnforceWarning, EnforceOff:
		return e, nil
	}
	return "", fmt.Errorf("unknown enforcement %q (want error, warning or off)", s)
}

// FailureMode is the answer when the webhook cannot lint a request (malformed
// review, undecodable object, time-out, internal failure).
type FailureMode string

// Failure modes.
const (
	// FailOpen allows the object with a warning saying it was not checked.
	FailOpen FailureMode = "allow"
	// FailClosed rejects it (HTTP 400 for an unreadable review, status 500 otherwise).
	FailClosed FailureMode = "deny"
)

// ParseFailureMode parses a --failure-mode value.
func ParseFailureMode(s string) (FailureMode, error) {
	switch f := FailureMode(s); f {
	case FailOpen, FailClosed:
		return f, nil
	}
	return "", fmt.Errorf("unknown failure mode %q (want allow or deny)", s)
}

// Defaults.
const (
	// DefaultMaxBodyBytes matches the limit controller-runtime applies to reviews.
	DefaultMaxBodyBytes = 7 << 20
	// DefaultTimeout stays below the 5 s timeoutSeconds of deploy/, so the
	// API server gets our answer rather than its own time-out.
	DefaultTimeout = 4 * time.Second
	// DefaultMaxQueued bounds the reviews waiting for a lint slot; past it a
	// review is answered by the failure mode at once.
	DefaultMaxQueued = 4096
	// MaxWarningLen is the length Kubernetes asks warnings to stay within.
	MaxWarningLen = 120
	maxWarnings   = 20
	maxAuditLen   = 4096
	maxDenyItems  = 10
	// maxLoggedFindings and maxLoggedFindingLen bound the "findings" log
	// line: a Rollout with thousands of steps can have thousands of
	// findings, and one log line of megabytes breaks log pipelines. The
	// counts in the line and the findings metric still cover them all.
	maxLoggedFindings   = 50
	maxLoggedFindingLen = 512
)

// DefaultConcurrency is how many reviews are linted at once by default: one
// per CPU the process may use, at most 4, so that the memory of the lints in
// flight stays within the shipped limit whatever the node's size.
func DefaultConcurrency() int { return min(max(runtime.GOMAXPROCS(0), 1), 4) }

// DefaultTrustedUsers are the controllers whose writes are never denied: the
// Argo Rollouts controller (it moves VirtualService weights and
// DestinationRule labels at every step) and the Argo CD application
// controller (a denied sync leaves an application half applied).
var DefaultTrustedUsers = []string{
	"system:serviceaccount:argo-rollouts:argo-rollouts",
	"system:serviceaccount:argocd:argocd-application-controller",
}

// Options configure the handler.
type Options struct {
	Linter  *Linter
	Enforce Enforce
	Failure FailureMode
	// ExemptNamespaces are namespace globs never linted.
	ExemptNamespaces []string
	// ExemptObjects are "Kind/namespace/name" globs never linted
	// (namespace empty for cluster-scoped kinds).
	ExemptObjects []string
	// TrustedUsers are user-name globs (request.userInfo.username) whose
	// requests are linted but never denied: their errors come back as
	// warnings, and a review that cannot be linted is allowed.
	TrustedUsers []string
	// DenyExisting denies an UPDATE for every error-level finding of the new
	// object, as for a CREATE. By default an UPDATE is denied only for the
	// findings it introduces; those the old object had already come back as
	// warnings, so that an object that was already invalid can still be
	// changed (and fixed).
	DenyExisting bool
	// Timeout is the per-review budget, from the request's arrival to the
	// answer, queueing included; a shorter timeout the API server sends with
	// the request wins.
	Timeout time.Duration
	// Concurrency is how many reviews are linted at once (0: DefaultConcurrency).
	Concurrency int
	// MaxQueued bounds the reviews waiting for a slot (0: DefaultMaxQueued).
	MaxQueued    int
	MaxBodyBytes int64
	Log          *slog.Logger
	Metrics      *Metrics
	// Ready reports whether the cluster view has synced (nil: always ready).
	Ready func() bool
}

// Handler serves /validate, /healthz, /readyz and /metrics.
type Handler struct {
	opts     Options
	mux      *http.ServeMux
	obs      *http.ServeMux
	queue    *queue
	workers  workers
	draining atomic.Bool
}

// ValidatePath is where the API server sends reviews.
const ValidatePath = "/validate"

// NewHandler builds the handler, filling defaults.
func NewHandler(opts Options) *Handler {
	if opts.Enforce == "" {
		opts.Enforce = EnforceError
	}
	if opts.Failure == "" {
		opts.Failure = FailOpen
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency()
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = DefaultMaxQueued
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	h := &Handler{opts: opts, mux: http.NewServeMux(), obs: http.NewServeMux(),
		queue: newQueue(opts.Concurrency, opts.MaxQueued, opts.Metrics), workers: workers{jobs: make(chan func())}}
	healthz := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") }
	readyz := func(w http.ResponseWriter, _ *http.Request) {
		if h.draining.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		if opts.Ready != nil && !opts.Ready() {
			http.Error(w, "cluster view not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	}
	metrics := promhttp.HandlerFor(opts.Metrics.Registry, promhttp.HandlerOpts{})
	for _, m := range []*http.ServeMux{h.mux, h.obs} {
		m.HandleFunc("/healthz", healthz)
		m.HandleFunc("/readyz", readyz)
		m.Handle("/metrics", metrics)
	}
	h.mux.HandleFunc(ValidatePath, h.validate)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Observability serves /healthz, /readyz and /metrics only, for a plain-HTTP
// listener: admission reviews are served over HTTPS alone.
func (h *Handler) Observability() http.Handler { return h.obs }

// Drain turns /readyz to 503 for good; reviews are still answered. Serve
// calls it first on shutdown.
func (h *Handler) Drain() { h.draining.Store(true) }

// decision labels.
const (
	decAllowed = "allowed"
	decWarned  = "warned"
	decDenied  = "denied"
	decExempt  = "exempt"
	decSkipped = "skipped"
	decFailed  = "failed"
)

// failure is a review that could not be linted.
type failure struct {
	code   int    // HTTP status (400, 413) or the status code of a rejection (500)
	reason string // metric label
	msg    string
}

// Failure reasons (the reason label of rolloutlint_webhook_failures_total).
const (
	reasonMalformed    = "malformed"
	reasonTooLarge     = "too_large"
	reasonQueueTimeout = "queue_timeout"
	reasonQueueFull    = "queue_full"
	reasonLintTimeout  = "lint_timeout"
	reasonCanceled     = "canceled"
	reasonInternal     = "internal"
)

func (h *Handler) validate(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost {
		http.Error(w, "admission reviews are POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.fail(w, start, nil, nil, failure{http.StatusRequestEntityTooLarge, reasonTooLarge, fmt.Sprintf("admission review larger than %d bytes", tooBig.Limit)})
			return
		}
		h.fail(w, start, nil, nil, failure{http.StatusBadRequest, reasonMalformed, "reading admission review: " + err.Error()})
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		var req *admissionv1.AdmissionRequest
		if uid := uidOf(body); uid != "" {
			req = &admissionv1.AdmissionRequest{UID: types.UID(uid)}
		}
		h.fail(w, start, req, nil, failure{http.StatusBadRequest, reasonMalformed, "decoding admission review: " + err.Error()})
		return
	}
	req := review.Request
	switch {
	case review.APIVersion != admissionv1.SchemeGroupVersion.String() || review.Kind != "AdmissionReview":
		h.fail(w, start, nil, nil, failure{http.StatusBadRequest, reasonMalformed,
			fmt.Sprintf("expected an admission.k8s.io/v1 AdmissionReview, got apiVersion %q kind %q", review.APIVersion, review.Kind)})
		return
	case req == nil || req.UID == "":
		h.fail(w, start, nil, nil, failure{http.StatusBadRequest, reasonMalformed, "admission review has no request or no request.uid"})
		return
	}
	h.opts.Metrics.requests.WithLabelValues(req.Kind.Kind, string(req.Operation)).Inc()
	ctx, cancel := context.WithDeadline(r.Context(), start.Add(h.budget(r)))
	defer cancel()
	log := h.opts.Log.With("uid", string(req.UID), "kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name,
		"operation", string(req.Operation), "dryRun", req.DryRun != nil && *req.DryRun, "user", req.UserInfo.Username)
	resp, f := h.review(ctx, req, start, log)
	if f != nil {
		h.fail(w, start, req, log, *f)
		return
	}
	h.write(w, resp)
}

// budget is the time a review may take: --timeout, or less when the API
// server says (the ?timeout= it adds to the URL is its timeoutSeconds) that it
// stops waiting sooner; a fifth of that is left for the network.
func (h *Handler) budget(r *http.Request) time.Duration {
	b := h.opts.Timeout
	if t, err := time.ParseDuration(r.URL.Query().Get("timeout")); err == nil && t > 0 {
		b = min(b, t-t/5)
	}
	return b
}

// review decides one request, or says why it could not.
func (h *Handler) review(ctx context.Context, req *admissionv1.AdmissionRequest, start time.Time, log *slog.Logger) (resp *admissionv1.AdmissionReview, fail *failure) {
	dry := req.DryRun != nil && *req.DryRun
	self := clusterview.Key{Kind: req.Kind.Kind, Namespace: req.Namespace, Name: req.Name}
	defer func() {
		if p := recover(); p != nil {
			log.Error("panic while reviewing", "panic", fmt.Sprint(p))
			resp, fail = nil, &failure{http.StatusInternalServerError, reasonInternal, fmt.Sprintf("internal error: %v", p)}
		}
	}()
	answer := func(decision string, allowed bool) *admissionv1.AdmissionReview {
		log.Debug("decision", "decision", decision, "elapsed", time.Since(start))
		h.opts.Metrics.decisions.WithLabelValues(decision, strconv.FormatBool(dry)).Inc()
		h.opts.Metrics.latency.WithLabelValues(decision).Observe(time.Since(start).Seconds())
		return &admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
			Response: &admissionv1.AdmissionResponse{UID: req.UID, Allowed: allowed},
		}
	}
	if !linted(self.Kind) || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return answer(decSkipped, true), nil
	}
	if len(req.Object.Raw) == 0 { // the API server always sends what is created or updated
		return nil, &failure{http.StatusBadRequest, reasonMalformed, fmt.Sprintf("%s of %s has no request.object", req.Operation, self)}
	}
	if self.Name == "" { // generateName: the API server has not named it yet
		var named struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(req.Object.Raw, &named)
		self.Name = named.Metadata.Name
	}
	if h.exempt(self) {
		log.Debug("exempt")
		return answer(decExempt, true), nil
	}
	trusted := h.trusted(req.UserInfo.Username)
	// Only an UPDATE that would be denied needs the old object's findings.
	mayCompareOld := req.Operation == admissionv1.Update && !h.opts.DenyExisting && !trusted && h.opts.Enforce == EnforceError
	var (
		v         verdict
		unchanged bool     // metadata or status change only
		malformed *failure // the object is not a JSON object
		incoming  map[string]any
	)
	// The objects are decoded in the slot, not before: a burst of large
	// reviews waiting for a slot then holds their bytes only.
	err := h.inSlot(ctx, func(ctx context.Context) error {
		var obj map[string]any
		if err := json.Unmarshal(req.Object.Raw, &obj); err != nil || obj == nil {
			malformed = &failure{http.StatusBadRequest, reasonMalformed, fmt.Sprintf("request.object of %s is not a JSON object", self)}
			return nil
		}
		// The object is linted as what it says it is; one that is not the
		// kind the request names would be linted by other rules than its own.
		if k, _ := obj["kind"].(string); k != self.Kind {
			malformed = &failure{http.StatusBadRequest, reasonMalformed, fmt.Sprintf("request.object of %s has kind %q", self, k)}
			return nil
		}
		var old map[string]any
		if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
			if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
				old = nil // an unreadable old object: every error counts as introduced
			}
			if old != nil && sameExceptMetadataAndStatus(old, obj) {
				unchanged = true
				return nil
			}
		}
		incoming = obj
		res, err := h.opts.Linter.Lint(ctx, self, req.Namespace, req.Object.Raw, obj)
		if err != nil {
			return err
		}
		v = classify(res)
		if v.broken != nil || len(v.errs) == 0 || !mayCompareOld || old == nil {
			return nil
		}
		oldRes, err := h.opts.Linter.Lint(ctx, self, req.Namespace, req.OldObject.Raw, old)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			log.Warn("old object not linted; every error counts as introduced", "err", err)
			return nil
		}
		v.splitExisting(oldRes.Findings)
		return nil
	})
	if err != nil {
		return nil, h.lintFailure(ctx, self, err)
	}
	if malformed != nil {
		return nil, malformed
	}
	if unchanged {
		log.Debug("metadata or status change only: not linted")
		return answer(decSkipped, true), nil
	}
	if v.broken != nil {
		// A rule broke: its findings are missing, so the object was not
		// fully checked; that is a failure, not a verdict.
		return nil, &failure{http.StatusInternalServerError, reasonInternal, v.broken.Message}
	}
	for _, f := range v.all {
		h.opts.Metrics.findings.WithLabelValues(f.RuleID, f.Severity.String()).Inc()
	}
	if len(v.all) > 0 {
		log.Info("findings", "enforce", string(h.opts.Enforce), "errors", len(v.errs), "existing", len(v.existing),
			"warnings", len(v.warns), "trusted", trusted, "related", v.related, "findings", loggedFindings(v.all))
	}
	warns := append(existingWarnings(v.existing), warnings(v.warns)...)
	errs := v.errs
	admit := func() {
		if req.Operation == admissionv1.Create && !dry {
			h.admitted(self, incoming, log)
		}
	}
	switch {
	case h.opts.Enforce == EnforceOff:
		admit()
		out := answer(decAllowed, true)
		if len(v.all) > 0 {
			out.Response.AuditAnnotations = map[string]string{"findings": truncate(strings.Join(findingList(v.all), "; "), maxAuditLen)}
		}
		return out, nil
	case h.opts.Enforce == EnforceWarning || trusted:
		warns = append(warnings(errs), warns...)
		errs = nil
	}
	if len(warns) > maxWarnings {
		warns = append(warns[:maxWarnings], fmt.Sprintf("rolloutlint: %d more warnings not shown", len(warns)-maxWarnings))
	}
	if len(errs) > 0 {
		out := answer(decDenied, false)
		out.Response.Result = &metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: denyMessage(self, errs, len(v.existing)),
		}
		out.Response.Warnings = warns
		return out, nil
	}
	admit()
	if len(warns) > 0 {
		out := answer(decWarned, true)
		out.Response.Warnings = warns
		return out, nil
	}
	return answer(decAllowed, true), nil
}

// admitted tells the cluster view of an object this review lets be
// created, before its watch event comes (clusterview.View.Admitted).
func (h *Handler) admitted(self clusterview.Key, obj map[string]any, log *slog.Logger) {
	view := h.opts.Linter.View
	if view == nil || obj == nil {
		return
	}
	if err := view.Admitted(self, obj); err != nil {
		log.Warn("admitted object not kept for the next reviews", "err", err)
	}
}

// inSlot runs lint in a lint slot, waiting for one in arrival order, and
// returns when it is done or ctx is: a lint still running then is told to
// stop through ctx and keeps its slot until it has.
func (h *Handler) inSlot(ctx context.Context, lint func(context.Context) error) error {
	if err := h.queue.acquire(ctx); err != nil {
		return err
	}
	done := make(chan error, 1)
	h.workers.run(func() {
		defer h.queue.release()
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("internal error: %v", p)
			}
		}()
		done <- lint(ctx)
	})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// workers run the lints: a lint's stack grows to what OPA's evaluation needs,
// and a goroutine started for each review grew (and copied) it again every
// time, a tenth of a review's CPU. A worker takes the next lint while it is
// idle and exits after workerIdle without one; there are never more workers
// than lints running at once (the slots, and abandoned lints finishing).
type workers struct {
	jobs    chan func()
	started atomic.Int64 // workers ever started, for tests
}

const workerIdle = 10 * time.Second

// run hands f to an idle worker, or starts one.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		w.started.Add(1)
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(workerIdle)
		select {
		case f = <-w.jobs:
		case <-idle.C:
			return
		}
	}
}

// lintFailure turns an error of inSlot into the failure answered, counting
// time-outs by stage.
func (h *Handler) lintFailure(ctx context.Context, self clusterview.Key, err error) *failure {
	var qe queueError
	switch {
	case errors.As(err, &qe) && qe == errQueueFull:
		return &failure{http.StatusInternalServerError, reasonQueueFull, fmt.Sprintf("%s not linted: %s (%d)", self, qe, h.opts.MaxQueued)}
	case errors.As(err, &qe):
		h.opts.Metrics.timeouts.WithLabelValues("queue").Inc()
		return &failure{http.StatusInternalServerError, reasonQueueTimeout, fmt.Sprintf("%s not linted: %s", self, qe)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		h.opts.Metrics.timeouts.WithLabelValues("lint").Inc()
		return &failure{http.StatusInternalServerError, reasonLintTimeout, fmt.Sprintf("linting %s did not finish within the review's deadline", self)}
	case ctx.Err() != nil:
		return &failure{http.StatusInternalServerError, reasonCanceled, fmt.Sprintf("linting %s: the API server closed the request", self)}
	}
	return &failure{http.StatusInternalServerError, reasonInternal, err.Error()}
}

// fail answers a request that could not be linted, following the failure
// mode: fail-open allows with a warning when the review could be read far
// enough to echo its uid; otherwise (and in fail-closed mode) the API server
// gets an HTTP error or a rejection, and its failurePolicy decides. Every
// failure is counted and logged with the object; none is a silent allow.
func (h *Handler) fail(w http.ResponseWriter, start time.Time, req *admissionv1.AdmissionRequest, log *slog.Logger, f failure) {
	dry := req != nil && req.DryRun != nil && *req.DryRun
	if log == nil {
		log = h.opts.Log
	}
	trusted := req != nil && h.trusted(req.UserInfo.Username)
	answer := "http_error"
	switch {
	case req == nil || req.UID == "" || f.code == http.StatusRequestEntityTooLarge:
	case h.opts.Failure == FailOpen || h.opts.Enforce == EnforceOff || trusted: // audit mode and trusted users are never denied
		answer = decAllowed
	default:
		answer = decDenied
	}
	h.opts.Metrics.decisions.WithLabelValues(decFailed, strconv.FormatBool(dry)).Inc()
	h.opts.Metrics.latency.WithLabelValues(decFailed).Observe(time.Since(start).Seconds())
	h.opts.Metrics.failures.WithLabelValues(f.reason, answer).Inc()
	log.Warn("admission review not linted", "code", f.code, "reason", f.reason, "message", f.msg,
		"failureMode", string(h.opts.Failure), "answer", answer, "elapsed", time.Since(start).Round(time.Microsecond))
	if answer == "http_error" {
		http.Error(w, f.msg, f.code)
		return
	}
	out := &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: &admissionv1.AdmissionResponse{UID: req.UID},
	}
	if answer == decAllowed {
		out.Response.Allowed = true
		out.Response.Warnings = []string{truncate("rolloutlint did not check this object: "+f.msg, MaxWarningLen)}
	} else {
		out.Response.Result = &metav1.Status{Status: metav1.StatusFailure, Code: int32(f.code), Message: "rolloutlint could not check this object: " + f.msg}
	}
	h.write(w, out)
}

func (h *Handler) write(w http.ResponseWriter, review *admissionv1.AdmissionReview) {
	data, err := json.Marshal(review)
	if err != nil {
		http.Error(w, "encoding admission response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

func (h *Handler) exempt(k clusterview.Key) bool {
	for _, p := range h.opts.ExemptNamespaces {
		if ok, _ := path.Match(p, k.Namespace); ok {
			return true
		}
	}
	id := k.Kind + "/" + k.Namespace + "/" + k.Name
	for _, p := range h.opts.ExemptObjects {
		if ok, _ := path.Match(p, id); ok {
			return true
		}
	}
	return false
}

// linted reports whether the webhook lints a kind; others are allowed untouched.
func linted(kind string) bool {
	switch kind {
	case clusterview.KindRollout, clusterview.KindService, clusterview.KindVirtualService, clusterview.KindDestinationRule, clusterview.KindAnalysisTemplate, clusterview.KindClusterAnalysisTemplate:
		return true
	}
	return false
}

// uidOf digs request.uid out of a review that does not decode as a whole, so
// fail-open can still answer it.
func uidOf(body []byte) string {
	var partial struct {
		Request struct {
			UID string `json:"uid"`
		} `json:"request"`
	}
	if json.Unmarshal(body, &partial) != nil {
		return ""
	}
	return partial.Request.UID
}

// where renders a finding's location: the field path on the incoming
// object, or the other object and its field path.
func where(f Finding) string {
	p := f.Path
	if p == "" {
		p = "(object)"
	}
	if f.OnOther {
		return f.Object.String() + " " + p
	}
	return p
}

func findingList(fs []Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s: %s", f.Severity, f.RuleID, where(f), f.Message))
	}
	return out
}

// loggedFindings is findingList for the log: at most maxLoggedFindings
// entries of at most maxLoggedFindingLen characters, then how many more.
func loggedFindings(fs []Finding) []string {
	shown := fs[:min(len(fs), maxLoggedFindings)]
	out := findingList(shown)
	for i := range out {
		out[i] = truncate(out[i], maxLoggedFindingLen)
	}
	if more := len(fs) - len(shown); more > 0 {
		out = append(out, fmt.Sprintf("%d more findings not logged", more))
	}
	return out
}

// denyMessage lists the errors concisely: rule ID, field path and message.
func denyMessage(self clusterview.Key, errs []Finding, existing int) string {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].RuleID < errs[j].RuleID })
	var b strings.Builder
	if existing > 0 {
		fmt.Fprintf(&b, "rolloutlint: this update of %s adds %d error(s) (%d it already had are warnings): ", self, len(errs), existing)
	} else {
		fmt.Fprintf(&b, "rolloutlint: %s has %d error(s): ", self, len(errs))
	}
	for i, f := range errs {
		if i == maxDenyItems {
			fmt.Fprintf(&b, "; and %d more (run rolloutlint lint for all)", len(errs)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s: %s", f.RuleID, where(f), truncate(f.Message, 300))
	}
	return b.String()
}

// warnings renders findings as warnings, each within MaxWarningLen.
func warnings(fs []Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, truncate(fmt.Sprintf("%s %s: %s", f.RuleID, where(f), f.Message), MaxWarningLen))
	}
	return out
}

// existingWarnings renders the errors the old object already had.
func existingWarnings(fs []Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, truncate(fmt.Sprintf("%s %s (already there before this update): %s", f.RuleID, where(f), f.Message), MaxWarningLen))
	}
	return out
}

func (h *Handler) trusted(user string) bool {
	for _, p := range h.opts.TrustedUsers {
		if ok, _ := path.Match(p, user); ok {
			return true
		}
	}
	return false
}

// truncate shortens s to at most n runes, ending in "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
