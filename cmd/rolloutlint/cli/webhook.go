package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"

	"github.com/rolloutlint/rolloutlint/analyzer/config"
	"github.com/rolloutlint/rolloutlint/internal/memlimit"
	"github.com/rolloutlint/rolloutlint/live/clusterview"
	"github.com/rolloutlint/rolloutlint/policies"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/webhook"
)

// webhookOptions are the flags of `webhook`.
type webhookOptions struct {
	listen, metricsAddr          string
	certFile, keyFile            string
	kubeconfig, kubeContext      string
	clusterView                  bool
	configPath                   string
	enforce, failure             string
	exemptNamespaces, exemptObjs []string
	timeout                      time.Duration
	maxBody                      int64
	logFormat, logLevel          string
	configPoll                   time.Duration
	trustedUsers                 []string
	denyExisting                 bool
	concurrency, maxQueued       int
	shutdownDelay                time.Duration
}

func newWebhook(e *Env) *cobra.Command {
	var o webhookOptions
	c := &cobra.Command{
		Use:   "webhook",
		Short: "Run the validating admission webhook (HTTPS)",
		Long: `webhook serves admission.k8s.io/v1 AdmissionReviews on ` + webhook.ValidatePath + ` over HTTPS for
Rollouts, Services, VirtualServices, DestinationRules and (Cluster)AnalysisTemplates. Each
object is linted with the same rules and .rolloutlint.yaml as 'lint', together with the
cluster objects it references or is referenced by (kept in memory by informers), and
only findings that involve the object are reported, by rule ID and field path.

--enforce error denies (HTTP status 403 in the review) on error-level findings and returns
warning-level ones as warnings; warning returns both as warnings; off (audit) allows
everything and only logs, counts and attaches findings as an audit annotation.
An UPDATE is denied only for errors it introduces: those the old object had already
come back as warnings (--deny-existing denies them too). Changes of metadata or status
alone are not linted, and requests of --trusted-user (by default the Argo Rollouts and
Argo CD application controllers) are never denied.
At most --max-concurrent-reviews lints run at once; the others wait in arrival order.
When a review cannot be linted (malformed, time-out), --failure-mode allow admits the object
with a warning and deny rejects it; either way it is logged and counted.

Out of a cluster the view's cluster is --kubeconfig, else $KUBECONFIG, else the in-cluster
service account, else ~/.kube/config (--kube-context picks a context of the kubeconfig). On SIGTERM /readyz turns 503, reviews are still
answered for --shutdown-delay, then the server shuts down.

The certificate and key files are re-read when they change, and so is --config. /healthz, /readyz (cluster view
synced) and /metrics (Prometheus) are served on the same port, and on --metrics-addr over
plain HTTP when set. See docs/webhook.md and deploy/.`,
		Example: `  rolloutlint webhook --cert-file /tls/tls.crt --key-file /tls/tls.key --config /config/.rolloutlint.yaml
  rolloutlint webhook --kubeconfig ~/.kube/config --enforce warning --exempt-namespace 'kube-*'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			memlimit.EndStartup() // a server: the default GOGC, not the start's
			return o.run(cmd.Context(), e)
		},
	}
	o.bind(c.Flags())
	return c
}

func (o *webhookOptions) bind(fl *pflag.FlagSet) {
	fl.StringVar(&o.listen, "listen", ":8443", "HTTPS address for reviews, health and metrics")
	fl.StringVar(&o.metricsAddr, "metrics-addr", "", "also serve /metrics, /healthz and /readyz over plain HTTP on this address")
	fl.StringVar(&o.certFile, "cert-file", "", "serving certificate (PEM; required); re-read when it changes")
	fl.StringVar(&o.keyFile, "key-file", "", "serving key (PEM; required); re-read when it changes")
	fl.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for the cluster view (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	fl.StringVar(&o.kubeContext, "kube-context", "", "kubeconfig context of the cluster view (default: the kubeconfig's current context)")
	fl.BoolVar(&o.clusterView, "cluster-view", true, "watch the cluster so objects are linted with the objects they reference; false lints each object alone")
	fl.StringVar(&o.configPath, "config", "", "rolloutlint config (.rolloutlint.yaml, e.g. a mounted ConfigMap)")
	fl.StringVar(&o.enforce, "enforce", string(webhook.EnforceError), "error (deny on errors), warning (warn only) or off (audit: log only)")
	fl.StringVar(&o.failure, "failure-mode", string(webhook.FailOpen), "when a review cannot be linted: allow (with a warning) or deny")
	fl.StringArrayVar(&o.exemptNamespaces, "exempt-namespace", nil, "namespace glob never linted (repeatable)")
	fl.StringArrayVar(&o.exemptObjs, "exempt-object", nil, "Kind/namespace/name glob never linted, e.g. 'Rollout/legacy/*' (repeatable)")
	fl.DurationVar(&o.timeout, "timeout", webhook.DefaultTimeout, "per-review time limit; keep it below the webhook's timeoutSeconds")
	fl.Int64Var(&o.maxBody, "max-body-bytes", webhook.DefaultMaxBodyBytes, "largest admission review accepted, in bytes (> 0)")
	fl.StringVar(&o.logFormat, "log-format", "json", "log format: json or text")
	fl.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.DurationVar(&o.configPoll, "config-poll", 10*time.Second, "how often --config is checked for changes (a mounted ConfigMap is updated in place); 0 turns reloading off")
	fl.StringArrayVar(&o.trustedUsers, "trusted-user", webhook.DefaultTrustedUsers, "user-name glob whose requests are never denied (repeatable; replaces the default list)")
	fl.BoolVar(&o.denyExisting, "deny-existing", false, "deny an UPDATE for every error of the new object, not only those it introduces")
	fl.IntVar(&o.concurrency, "max-concurrent-reviews", webhook.DefaultConcurrency(), "lints run at once (by default the number of CPUs, at most 4); further reviews wait in arrival order until their deadline")
	fl.IntVar(&o.maxQueued, "max-queued-reviews", webhook.DefaultMaxQueued, "reviews waiting for a lint; past it the failure mode answers at once")
	fl.DurationVar(&o.shutdownDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, how long reviews are still served after /readyz turns 503")
}

// run serves reviews until the context ends or SIGINT/SIGTERM.
func (o *webhookOptions) run(parent context.Context, e *Env) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	switch o.logFormat {
	case "json":
		log = slog.New(slog.NewJSONHandler(e.Err, hopts))
	case "text":
		log = slog.New(slog.NewTextHandler(e.Err, hopts))
	default:
		return fmt.Errorf("--log-format: unknown format %q (want json or text)", o.logFormat)
	}
	enforce, err := webhook.ParseEnforce(o.enforce)
	if err != nil {
		return fmt.Errorf("--enforce: %w", err)
	}
	failure, err := webhook.ParseFailureMode(o.failure)
	if err != nil {
		return fmt.Errorf("--failure-mode: %w", err)
	}
	if o.certFile == "" || o.keyFile == "" {
		return fmt.Errorf("--cert-file and --key-file are required: the webhook serves HTTPS only")
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive")
	}
	if o.concurrency <= 0 {
		return fmt.Errorf("--max-concurrent-reviews must be positive")
	}
	if o.maxQueued <= 0 {
		return fmt.Errorf("--max-queued-reviews must be positive")
	}
	if o.maxBody <= 0 {
		// The handler read 0 or less as "the default": on the command line
		// it is a mistake, as --max-file-size 0 is for lint.
		return fmt.Errorf("--max-body-bytes %d: the limit must be a positive number of bytes (default %d, %d MiB)",
			o.maxBody, webhook.DefaultMaxBodyBytes, webhook.DefaultMaxBodyBytes>>20)
	}
	if o.configPoll < 0 {
		// watchConfig took any value <= 0 as "off": a negative interval is
		// a mistake, not a way to ask for that.
		return fmt.Errorf("--config-poll %s: the interval must not be negative (0 turns config reloading off)", o.configPoll)
	}
	if o.shutdownDelay < 0 {
		return fmt.Errorf("--shutdown-delay must not be negative")
	}
	full, err := e.fullDecode()
	if err != nil {
		return err
	}
	cfg, err := e.loadConfig(o.configPath)
	if err != nil {
		return err
	}
	ruleList, err := e.ruleSet(cfg, nil)
	if err != nil {
		return err
	}
	if err := cfg.CheckOptions(ruleList); err != nil {
		return err
	}
	certs, err := webhook.NewCertReloader(e.path(o.certFile), e.path(o.keyFile), log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(orBackground(parent), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// The built-in policies compile on first use; a server pays that at
	// start, not on its first review.
	if err := policies.PrepareBuiltin(); err != nil {
		return err
	}
	linter := &webhook.Linter{Rules: ruleList, Config: cfg, Globals: globalsFrom(cfg), FullDecode: full}
	if cfg != nil && cfg.File != "" {
		if o.configPoll == 0 {
			log.Info("config reloading off (--config-poll 0): changes to the config take effect at restart", "config", cfg.File)
		}
		go watchConfig(ctx, e, cfg.File, o.configPoll, linter, log)
	}
	var ready func() bool
	if o.clusterView {
		kt, err := restConfig(e, e.path(o.kubeconfig), o.kubeContext, "use --cluster-view=false to lint objects alone")
		if err != nil {
			return err
		}
		rc := kt.rest
		log.Info("cluster view", "cluster", rc.Host, "from", kt.source, "context", kt.context)
		dyn, err := dynamic.NewForConfig(rc)
		if err != nil {
			return fmt.Errorf("cluster client: %w", err)
		}
		disc, err := clusterview.NewDiscovery(rc)
		if err != nil {
			return fmt.Errorf("discovery client: %w", err)
		}
		view := clusterview.New()
		view.Prepare = linter.Prepare
		if err := view.Start(ctx, disc, dyn, log); err != nil {
			return err
		}
		linter.View = view
		ready = view.Synced
	}
	metrics := webhook.NewMetrics(linter.View)
	metrics.WatchCertificate(certs)
	h := webhook.NewHandler(webhook.Options{
		Linter: linter, Enforce: enforce, Failure: failure,
		ExemptNamespaces: o.exemptNamespaces, ExemptObjects: o.exemptObjs,
		TrustedUsers: o.trustedUsers, DenyExisting: o.denyExisting,
		Timeout: o.timeout, Concurrency: o.concurrency, MaxQueued: o.maxQueued,
		MaxBodyBytes: o.maxBody, Log: log, Metrics: metrics, Ready: ready,
	})
	log.Info("rolloutlint webhook starting", "version", VersionString(), "rules", len(ruleList), "enforce", string(enforce),
		"failureMode", string(failure), "clusterView", o.clusterView, "config", configFile(cfg),
		"concurrency", o.concurrency, "trustedUsers", o.trustedUsers, "denyExisting", o.denyExisting)
	if o.metricsAddr != "" {
		plain := &http.Server{Addr: o.metricsAddr, Handler: h.Observability(), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := plain.ListenAndServe(); err != nil && err != http.ErrServerClosed {
				log.Error("metrics listener failed", "addr", o.metricsAddr, "err", err)
			}
		}()
		defer func() { _ = plain.Close() }()
	}
	defer webhook.TuneGC()() // fewer collections while the live heap is small; GOGC set by hand wins
	return webhook.Serve(ctx, o.listen, h, certs, log, webhook.ServeOptions{Drain: h.Drain, DrainDelay: o.shutdownDelay,
		WriteTimeout: max(10*time.Second, o.timeout+5*time.Second)})
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

func configFile(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	return cfg.File
}

// watchConfig reloads the config (and the rule set it selects) when the file
// changes, keeping the previous one when the new one does not load. It polls:
// kubelet updates a mounted ConfigMap by swapping a symlink, which polling sees.
func watchConfig(ctx context.Context, e *Env, path string, every time.Duration, linter *webhook.Linter, log *slog.Logger) {
	if every <= 0 {
		return
	}
	stamp := fileStamp(path)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := fileStamp(path)
		if now == stamp {
			continue
		}
		stamp = now
		cfg, err := e.loadConfig(path)
		if err == nil {
			var rs []*rules.Rule
			if rs, err = e.ruleSet(cfg, nil); err == nil {
				err = cfg.CheckOptions(rs)
			}
			if err == nil {
				linter.Reconfigure(rs, cfg, globalsFrom(cfg))
				log.Info("config reloaded", "config", path, "rules", len(rs))
				continue
			}
		}
		log.Error("config not reloaded; keeping the previous one", "config", path, "err", err)
	}
}

func fileStamp(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%d/%d", st.Size(), st.ModTime().UnixNano())
}
