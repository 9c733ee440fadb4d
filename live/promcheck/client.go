// Package promcheck is the Prometheus client of the live dry-run rule RL4090
// (rules/analysis PrometheusDryRun): it sends instant queries, with an
// optional bearer token and CA, and nothing else. It never retries; a server
// that cannot be asked at all is an ErrUnreachable, which stops the rule.
package promcheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/promql"
)

// The client is what the dry-run rule asks.
var _ rules.Prometheus = (*Client)(nil)

// Config says how to reach Prometheus.
type Config struct {
	// URL is the Prometheus base URL (http://host:9090 or a path prefix).
	URL string
	// Timeout bounds each query (the request and Prometheus' own evaluation).
	Timeout time.Duration
	// BearerTokenFile, when set, holds a token sent as Authorization: Bearer.
	BearerTokenFile string
	// CAFile adds PEM CA certificates to verify the server with.
	CAFile string
	// InsecureSkipVerify turns off TLS certificate verification.
	InsecureSkipVerify bool
}

// DefaultTimeout is the per-query timeout when none is given.
const DefaultTimeout = 10 * time.Second

// Client sends instant queries. It is the rules.Prometheus of a lint run
// with --prometheus-url.
type Client struct {
	base   *url.URL
	token  string
	http   *http.Client
	budget time.Duration
}

// NewClient validates the configuration and reads the token and CA files once.
func NewClient(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus URL %q: want http(s)://host[:port][/prefix]", cfg.URL)
	}
	c := &Client{base: u, budget: cfg.Timeout}
	if c.budget <= 0 {
		c.budget = DefaultTimeout
	}
	if cfg.BearerTokenFile != "" {
		b, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return nil, fmt.Errorf("reading prometheus bearer token: %w", err)
		}
		c.token = strings.TrimSpace(string(b))
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // explicit user opt-in
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading prometheus CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("prometheus CA file %s holds no PEM certificate", cfg.CAFile)
		}
		tlsCfg.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	c.http = &http.Client{Transport: tr, Timeout: c.budget}
	return c, nil
}

// APIError is an error Prometheus returned for a query (bad_data, timeout, ...).
type APIError struct {
	Type, Message string
}

func (e *APIError) Error() string { return e.Type + ": " + e.Message }

// ErrUnreachable wraps transport failures: the server cannot be asked at all,
// so checking stops instead of failing every query the same way. It wraps
// rules.ErrUnreachable, which the rule and the driver look for.
var ErrUnreachable = fmt.Errorf("prometheus %w", rules.ErrUnreachable)

type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// Query runs one instant query at the current time.
func (c *Client) Query(ctx context.Context, query string) (*promql.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.budget)
	defer cancel()
	u := *c.base
	u.Path += "/api/v1/query"
	form := url.Values{"query": {query}, "timeout": {c.budget.String()}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("building prometheus request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &APIError{Type: "timeout", Message: fmt.Sprintf("no answer within %s", c.budget)}
		}
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	// The body is read in full below; a close error cannot change the answer.
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("reading prometheus answer: %w", err)
	}
	var ar apiResponse
	if err := json.Unmarshal(body, &ar); err != nil {
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("%w: HTTP %s (check --prometheus-bearer-token-file)", ErrUnreachable, resp.Status)
		}
		return nil, fmt.Errorf("%w: HTTP %s and no Prometheus API answer", ErrUnreachable, resp.Status)
	}
	if ar.Status != "success" {
		return nil, &APIError{Type: ar.ErrorType, Message: ar.Error}
	}
	return decode(ar.Data.ResultType, ar.Data.Result)
}

// sample is [timestamp, "value"].
type sample [2]json.RawMessage

func (s sample) value() (float64, error) {
	var str string
	if err := json.Unmarshal(s[1], &str); err != nil {
		return 0, fmt.Errorf("sample value: %w", err)
	}
	var f float64
	switch str {
	case "NaN":
		return math.NaN(), nil
	case "+Inf", "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	}
	if _, err := fmt.Sscan(str, &f); err != nil {
		return 0, fmt.Errorf("sample value %q: %w", str, err)
	}
	return f, nil
}

func decode(typ string, raw json.RawMessage) (*promql.Result, error) {
	r := &promql.Result{Type: typ}
	switch typ {
	case "vector":
		var vs []struct {
			Value sample `json:"value"`
		}
		if err := json.Unmarshal(raw, &vs); err != nil {
			return nil, fmt.Errorf("decoding vector: %w", err)
		}
		r.Series = len(vs)
		for _, v := range vs {
			f, err := v.Value.value()
			if err != nil {
				return nil, err
			}
			r.Values = append(r.Values, f)
		}
	case "scalar":
		var s sample
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("decoding scalar: %w", err)
		}
		f, err := s.value()
		if err != nil {
			return nil, err
		}
		r.Values = []float64{f}
	case "matrix":
		var ms []json.RawMessage
		if err := json.Unmarshal(raw, &ms); err != nil {
			return nil, fmt.Errorf("decoding matrix: %w", err)
		}
		r.Series = len(ms)
	}
	return r, nil
}
