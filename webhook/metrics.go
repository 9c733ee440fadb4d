package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rolloutlint/rolloutlint/live/clusterview"
)

// Metrics are the webhook's Prometheus series.
type Metrics struct {
	Registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	decisions *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	findings  *prometheus.CounterVec
	failures  *prometheus.CounterVec
	timeouts  *prometheus.CounterVec
	inFlight  prometheus.Gauge
	queued    prometheus.Gauge
	queueWait prometheus.Histogram
}

// latencyBuckets span a sub-millisecond review to the API server's 5 s
// timeoutSeconds.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}

// NewMetrics registers the series (and the Go and process collectors) on a
// fresh registry. view may be nil.
func NewMetrics(view *clusterview.View) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rolloutlint_webhook_requests_total",
			Help: "Admission reviews received, by kind and operation.",
		}, []string{"kind", "operation"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rolloutlint_webhook_decisions_total",
			Help: "Admission decisions: allowed, warned, denied, exempt, skipped or failed; dry_run says whether the request was a dry run.",
		}, []string{"decision", "dry_run"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rolloutlint_webhook_request_duration_seconds",
			Help:    "Time to answer an admission review, by decision.",
			Buckets: latencyBuckets,
		}, []string{"decision"}),
		findings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rolloutlint_webhook_findings_total",
			Help: "Findings involving admitted objects, by rule and severity.",
		}, []string{"rule", "severity"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rolloutlint_webhook_failures_total",
			Help: "Reviews that could not be linted, by reason, and what the failure mode answered (allowed, denied, or http_error when the API server's failurePolicy decides).",
		}, []string{"reason", "answer"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rolloutlint_webhook_timeouts_total",
			Help: "Reviews whose deadline passed, by stage: queue (no lint slot in time) or lint (the lint itself ran past it).",
		}, []string{"stage"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rolloutlint_webhook_in_flight_reviews",
			Help: "Lints running now (a lint abandoned at its deadline counts until it has stopped).",
		}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rolloutlint_webhook_queued_reviews",
			Help: "Reviews waiting for a lint slot.",
		}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rolloutlint_webhook_queue_wait_seconds",
			Help:    "Time a review waited for a lint slot.",
			Buckets: latencyBuckets,
		}),
	}
	m.Registry.MustRegister(m.requests, m.decisions, m.latency, m.findings, m.failures, m.timeouts,
		m.inFlight, m.queued, m.queueWait,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if view != nil {
		m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rolloutlint_webhook_cluster_objects",
			Help: "Objects in the webhook's cluster view.",
		}, func() float64 { return float64(view.Len()) }))
	}
	return m
}

// WatchCertificate exports the expiry of the serving certificate the
// reloader currently serves, as a Unix time, so an alert can fire before a
// rotation that did not happen breaks every review.
func (m *Metrics) WatchCertificate(certs *CertReloader) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rolloutlint_webhook_certificate_expiry_timestamp_seconds",
		Help: "NotAfter of the serving certificate in use, in seconds since the Unix epoch.",
	}, func() float64 {
		if t := certs.NotAfter(); !t.IsZero() {
			return float64(t.Unix())
		}
		return 0
	}))
}
