package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/rolloutlint/rolloutlint/live/promcheck"
	"github.com/rolloutlint/rolloutlint/rules"
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

// check refuses the other --prometheus-* flags without --prometheus-url,
// where nothing reads them (as the --cluster-* flags need --cluster), and a
// timeout that is not positive.
func (o *promOptions) check(fl *pflag.FlagSet) error {
	if o.url == "" {
		for _, f := range []string{"prometheus-timeout", "prometheus-bearer-token-file", "prometheus-ca-file", "prometheus-insecure-skip-verify"} {
			if fl.Changed(f) {
				return fmt.Errorf("--%s needs --prometheus-url", f)
			}
		}
		return nil
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--prometheus-timeout %s: must be positive (default %s)", o.timeout, promcheck.DefaultTimeout)
	}
	return nil
}

// live returns the running systems of the lint: with --prometheus-url, its
// client for the live rule RL4090, which notes what it did on stderr; nil
// without, which leaves the live rules off.
func (o *promOptions) live(e *Env) (*rules.Live, error) {
	if o.url == "" {
		return nil, nil
	}
	client, err := promcheck.NewClient(promcheck.Config{URL: o.url, Timeout: o.timeout,
		BearerTokenFile: e.path(o.tokenFile), CAFile: e.path(o.caFile), InsecureSkipVerify: o.insecure})
	if err != nil {
		return nil, fmt.Errorf("--prometheus-url: %w", err)
	}
	return &rules.Live{Prometheus: client, Notef: func(format string, args ...any) {
		fmt.Fprintf(e.Err, format+"\n", args...)
	}}, nil
}
