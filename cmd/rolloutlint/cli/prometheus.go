package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/live/promcheck"
)

// promFlags are the live Prometheus dry-run options of `lint`.
type promFlags struct {
	url, tokenFile, caFile string
	timeout                time.Duration
	insecure               bool
}

func init() {
	var pf promFlags
	lintHooks = append(lintHooks, LintHook{
		Flags: func(c *cobra.Command) {
			fl := c.Flags()
			fl.StringVar(&pf.url, "prometheus-url", "", "dry-run every resolved analysis query against this Prometheus (one instant query each) and warn (RL4090) about no data, errors and results the conditions cannot evaluate")
			fl.DurationVar(&pf.timeout, "prometheus-timeout", promcheck.DefaultTimeout, "timeout of each Prometheus query")
			fl.StringVar(&pf.tokenFile, "prometheus-bearer-token-file", "", "file holding a bearer token for Prometheus")
			fl.StringVar(&pf.caFile, "prometheus-ca-file", "", "PEM CA certificates to verify Prometheus' TLS certificate")
			fl.BoolVar(&pf.insecure, "prometheus-insecure-skip-verify", false, "do not verify Prometheus' TLS certificate")
		},
		After: func(r *LintRun, res *analyzer.Result) error {
			if pf.url == "" {
				return nil
			}
			client, err := promcheck.NewClient(promcheck.Config{URL: pf.url, Timeout: pf.timeout,
				BearerTokenFile: pf.tokenFile, CAFile: pf.caFile, InsecureSkipVerify: pf.insecure})
			if err != nil {
				return fmt.Errorf("--prometheus-url: %w", err)
			}
			diags, st, err := promcheck.Check(context.Background(), r.Bundle.graph, client)
			if err != nil {
				return fmt.Errorf("prometheus dry-run: %w", err)
			}
			res.Add(diags...)
			fmt.Fprintf(r.Streams.Err, "prometheus dry-run: %d queries sent, %d skipped (values known only at run time), %d without data, %d errors, %d results the conditions cannot evaluate\n",
				st.Queries, st.Skipped, st.NoData, st.Errors, st.Shape)
			return nil
		},
	})
}
