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
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/rules"
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
	// MaxWarningLen is the length Kubernetes asks warnings to stay within.
	MaxWarningLen = 120
	maxWarnings   = 20
	maxAuditLen   = 4096
	maxDenyItems  = 10
)

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
	Timeout       time.Duration
	MaxBodyBytes  int64
	Log           *slog.Logger
	Metrics       *Metrics
	// Ready reports whether the cluster view has synced (nil: always ready).
	Ready func() bool
}

// Handler serves /validate, /healthz, /readyz and /metrics.
type Handler struct {
	opts Options
	mux  *http.ServeMux
	obs  *http.ServeMux
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
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	h := &Handler{opts: opts, mux: http.NewServeMux(), obs: http.NewServeMux()}
	healthz := func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") }
	readyz := func(w http.ResponseWriter, _ *http.Request) {
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

// decision labels.
const (
	decAllowed = "allowed"
	decWarned  = "warned"
	decDenied  = "denied"
	decExempt  = "exempt"
	decSkipped = "skipped"
	decFailed  = "failed"
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
			h.fail(w, start, "", nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("admission review larger than %d bytes", tooBig.Limit))
			return
		}
		h.fail(w, start, "", nil, http.StatusBadRequest, "reading admission review: "+err.Error())
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		h.fail(w, start, uidOf(body), nil, http.StatusBadRequest, "decoding admission review: "+err.Error())
		return
	}
	req := review.Request
	switch {
	case review.APIVersion != admissionv1.SchemeGroupVersion.String() || review.Kind != "AdmissionReview":
		h.fail(w, start, "", nil, http.StatusBadRequest,
			fmt.Sprintf("expected an admission.k8s.io/v1 AdmissionReview, got apiVersion %q kind %q", review.APIVersion, review.Kind))
		return
	case req == nil || req.UID == "":
		h.fail(w, start, "", nil, http.StatusBadRequest, "admission review has no request or no request.uid")
		return
	}
	h.opts.Metrics.requests.WithLabelValues(req.Kind.Kind, string(req.Operation)).Inc()
	resp := h.review(r.Context(), req, start, w)
	if resp == nil {
		return // already answered
	}
	h.write(w, resp)
}

// review decides one request. It returns nil when it has already written the
// answer (a failure).
func (h *Handler) review(ctx context.Context, req *admissionv1.AdmissionRequest, start time.Time, w http.ResponseWriter) (resp *admissionv1.AdmissionReview) {
	dry := req.DryRun != nil && *req.DryRun
	self := Key{Kind: req.Kind.Kind, Namespace: req.Namespace, Name: req.Name}
	log := h.opts.Log.With("uid", string(req.UID), "kind", self.Kind, "namespace", self.Namespace, "name", self.Name,
		"operation", string(req.Operation), "dryRun", dry)
	defer func() {
		if p := recover(); p != nil {
			log.Error("panic while reviewing", "panic", fmt.Sprint(p))
			h.fail(w, start, string(req.UID), log, http.StatusInternalServerError, fmt.Sprintf("internal error: %v", p))
			resp = nil
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
	if !linted(self.Kind) || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) || len(req.Object.Raw) == 0 {
		return answer(decSkipped, true)
	}
	var obj map[string]any
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil || obj == nil {
		h.fail(w, start, string(req.UID), log, http.StatusBadRequest, fmt.Sprintf("request.object of %s is not a JSON object", self))
		return nil
	}
	if self.Name == "" { // generateName: the API server has not named it yet
		self.Name = str(mapAt(obj, "metadata"), "name")
	}
	if h.exempt(self) {
		log.Debug("exempt")
		return answer(decExempt, true)
	}
	res, err := h.lintWithTimeout(ctx, self, req.Namespace, req.Object.Raw, obj)
	if err != nil {
		log.Error("not linted", "err", err)
		h.fail(w, start, string(req.UID), log, http.StatusInternalServerError, err.Error())
		return nil
	}
	for _, f := range res.Findings {
		if f.RuleID == analyzer.RuleInternal && !f.OnOther {
			// A rule broke: its findings are missing, so the object was not
			// fully checked; that is a failure, not a verdict.
			h.fail(w, start, string(req.UID), log, http.StatusInternalServerError, f.Message)
			return nil
		}
	}
	var errs, warns []Finding
	for _, f := range res.Findings {
		h.opts.Metrics.findings.WithLabelValues(f.RuleID, f.Severity.String()).Inc()
		switch f.Severity {
		case rules.Error:
			errs = append(errs, f)
		case rules.Warning:
			warns = append(warns, f)
		} // info-level findings are logged and counted only
	}
	if len(res.Findings) > 0 {
		log.Info("findings", "enforce", string(h.opts.Enforce), "errors", len(errs), "warnings", len(warns),
			"related", res.Related, "findings", findingList(res.Findings))
	}
	switch h.opts.Enforce {
	case EnforceOff:
		out := answer(decAllowed, true)
		if len(res.Findings) > 0 {
			out.Response.AuditAnnotations = map[string]string{"findings": truncate(strings.Join(findingList(res.Findings), "; "), maxAuditLen)}
		}
		return out
	case EnforceWarning:
		warns = append(errs, warns...)
		errs = nil
	}
	if len(errs) > 0 {
		out := answer(decDenied, false)
		out.Response.Result = &metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: denyMessage(self, errs),
		}
		out.Response.Warnings = warnings(warns)
		return out
	}
	if len(warns) > 0 {
		out := answer(decWarned, true)
		out.Response.Warnings = warnings(warns)
		return out
	}
	return answer(decAllowed, true)
}

// lintWithTimeout bounds one lint by the per-request timeout (and the
// client's context), so an unexpectedly slow review is answered by the
// failure mode instead of by the API server's own time-out.
func (h *Handler) lintWithTimeout(ctx context.Context, self Key, ns string, raw []byte, obj map[string]any) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("internal error linting %s: %v", self, p)}
			}
		}()
		res, err := h.opts.Linter.Lint(self, ns, raw, obj)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		return nil, fmt.Errorf("linting %s did not finish within %s: %w", self, h.opts.Timeout, ctx.Err())
	}
}

// fail answers a request that could not be linted, following the failure
// mode: fail-open allows with a warning when the review could be read far
// enough to echo its uid; otherwise (and in fail-closed mode) the API server
// gets an HTTP error or a rejection, and its failurePolicy decides.
func (h *Handler) fail(w http.ResponseWriter, start time.Time, uid string, log *slog.Logger, code int, msg string) {
	h.opts.Metrics.decisions.WithLabelValues(decFailed, "false").Inc()
	h.opts.Metrics.latency.WithLabelValues(decFailed).Observe(time.Since(start).Seconds())
	if log == nil {
		log = h.opts.Log
	}
	log.Warn("admission review not linted", "code", code, "reason", msg, "failureMode", string(h.opts.Failure))
	if uid == "" || code == http.StatusRequestEntityTooLarge {
		http.Error(w, msg, code)
		return
	}
	out := &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: &admissionv1.AdmissionResponse{UID: types.UID(uid)},
	}
	if h.opts.Failure == FailOpen || h.opts.Enforce == EnforceOff { // audit mode never denies
		out.Response.Allowed = true
		out.Response.Warnings = []string{truncate("rolloutlint did not check this object: "+msg, MaxWarningLen)}
	} else {
		out.Response.Result = &metav1.Status{Status: metav1.StatusFailure, Code: int32(code), Message: "rolloutlint could not check this object: " + msg}
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

func (h *Handler) exempt(k Key) bool {
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
	case KindRollout, KindService, KindVirtualService, KindDestinationRule, KindAnalysisTemplate, KindClusterAnalysisTemplate:
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

// denyMessage lists the errors concisely: rule ID, field path and message.
func denyMessage(self Key, errs []Finding) string {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].RuleID < errs[j].RuleID })
	var b strings.Builder
	fmt.Fprintf(&b, "rolloutlint: %s has %d error(s): ", self, len(errs))
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

// warnings renders warning-level findings, each within MaxWarningLen.
func warnings(fs []Finding) []string {
	var out []string
	for i, f := range fs {
		if i == maxWarnings {
			out = append(out, fmt.Sprintf("rolloutlint: %d more warnings not shown", len(fs)-i))
			break
		}
		out = append(out, truncate(fmt.Sprintf("%s %s: %s", f.RuleID, where(f), f.Message), MaxWarningLen))
	}
	return out
}

// truncate shortens s to at most n runes, ending in "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
