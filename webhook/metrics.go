package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the webhook's Prometheus series.
type Metrics struct {
	Registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	decisions *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	findings  *prometheus.CounterVec
}

// NewMetrics registers the series (and the Go and process collectors) on a
// fresh registry. view may be nil.
func NewMetrics(view *View) *Metrics {
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
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"decision"}),
		findings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rolloutlint_webhook_findings_total",
			Help: "Findings involving admitted objects, by rule and severity.",
		}, []string{"rule", "severity"}),
	}
	m.Registry.MustRegister(m.requests, m.decisions, m.latency, m.findings,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if view != nil {
		m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "rolloutlint_webhook_cluster_objects",
			Help: "Objects in the webhook's cluster view.",
		}, func() float64 { return float64(view.Len()) }))
	}
	return m
}
