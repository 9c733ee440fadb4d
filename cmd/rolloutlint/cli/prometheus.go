package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/live/promcheck"
	"github.com/rolloutlint/rolloutlint/model/graph"
)

// promOptions are the live Prometheus dry-run flags of `lint`.
type promOptions struct {
	url, tokenFile, caFile string
	timeout                time.Duration
	insecure               bool
}

func (o *promOptions) bind(fl *pflag.FlagSet) {
	fl.StringVar(&o.url, "prometheus-url", "", "dry-run every resolved analysis query against this Prometheus (one instant query each) and warn (RL4090) about no data, errors and results the conditions cannot evaluate")
	fl.DurationVar(&o.timeout, "prometheus-timeout", promcheck.DefaultTimeout, "timeout of each Prometheus query")
	fl.StringVar(&o.tokenFile, "prometheus-bearer-token-file", "", "file holding a bearer token for Prometheus")
	fl.StringVar(&o.caFile, "prometheus-ca-file", "", "PEM CA certificates to verify Prometheus' TLS certificate")
	fl.BoolVar(&o.insecure, "prometheus-insecure-skip-verify", false, "do not verify Prometheus' TLS certificate")
}

// check runs the dry-run when --prometheus-url is set, adds its findings to
// res and prints a summary on stderr.
func (o *promOptions) check(e *Env, g *graph.Graph, res *analyzer.Result) error {
	if o.url == "" {
		return nil
	}
	client, err := promcheck.NewClient(promcheck.Config{URL: o.url, Timeout: o.timeout,
		BearerTokenFile: o.tokenFile, CAFile: o.caFile, InsecureSkipVerify: o.insecure})
	if err != nil {
		return fmt.Errorf("--prometheus-url: %w", err)
	}
	diags, st, err := promcheck.Check(context.Background(), g, client)
	if err != nil {
		return fmt.Errorf("prometheus dry-run: %w", err)
	}
	res.Add(diags...)
	fmt.Fprintf(e.Err, "prometheus dry-run: %d queries sent, %d skipped (values known only at run time), %d without data, %d errors, %d results the conditions cannot evaluate\n",
		st.Queries, st.Skipped, st.NoData, st.Errors, st.Shape)
	return nil
}
