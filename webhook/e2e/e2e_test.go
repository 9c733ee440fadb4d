// Package e2e runs the webhook behind a real kube-apiserver (with etcd) on
// loopback: the API server's own TLS, time-outs and AdmissionReview encoding
// call the real `rolloutlint webhook` process. run.sh (make test-webhook-e2e)
// provides the binaries; without them the test skips.
package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/rolloutlint/rolloutlint/internal/kubetest"
	"github.com/rolloutlint/rolloutlint/internal/testcert"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// sharedRouteRuleName is the name of the RL2xxx rule that reports a
// VirtualService route managed by two Rollouts. While no rule of that name is
// registered, the shared-route case is skipped (and says so); the
// VirtualService denial is still proven with the schema rule RL0003.
const sharedRouteRuleName = "shared-route"

const (
	webhookToken = "e2e-webhook-token"
	webhookUser  = "rolloutlint-webhook"
	// controllerToken authenticates as the Argo Rollouts controller's service
	// account, one of the webhook's default trusted users.
	controllerToken = "e2e-controller-token"
	controllerUser  = "system:serviceaccount:argo-rollouts:argo-rollouts"
)

func TestWebhookBehindRealAPIServer(t *testing.T) {
	apiserverBin, etcdBin := kubetest.Binaries(t, "run webhook/e2e/run.sh (make test-webhook-e2e)")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	cl := kubetest.Start(t, apiserverBin, etcdBin,
		kubetest.User{Token: webhookToken, Name: webhookUser},
		kubetest.User{Token: controllerToken, Name: controllerUser, Groups: []string{"system:masters"}})
	admin := cl.Admin
	kube := cl.Kube()

	cl.InstallCRDs(ctx, t, kubetest.Rollouts, kubetest.AnalysisTemplates, kubetest.VirtualServices, kubetest.DestinationRules)
	grantWebhookRBAC(ctx, t, kube)
	for _, ns := range []string{"shop", "rolloutlint"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wh := startWebhook(t, cl)
	registerWebhook(ctx, t, kube, wh.base+"/validate", wh.caPEM)

	// A client that records the warnings the API server relays.
	warns := &warningRecorder{}
	userCfg := rest.CopyConfig(admin)
	userCfg.WarningHandler = warns
	user := dynamic.NewForConfigOrDie(userCfg)
	apply := func(manifest string, dryRun bool) (*unstructured.Unstructured, []string, error) {
		t.Helper()
		obj := kubetest.Parse(t, manifest)
		opts := metav1.CreateOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		warns.reset()
		out, err := user.Resource(kubetest.GVROf(t, obj)).Namespace(obj.GetNamespace()).Create(ctx, obj, opts)
		return out, warns.get(), err
	}

	// The API server picks up a new webhook configuration asynchronously:
	// wait until the bad Rollout is denied.
	t.Run("bad Rollout denied with rule ID", func(t *testing.T) {
		var err error
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, _, err = apply(badRollout, true)
			if err != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		_, _, err = apply(badRollout, false)
		if err == nil {
			t.Fatal("bad Rollout was admitted")
		}
		if !apierrors.IsForbidden(err) {
			t.Fatalf("want 403 Forbidden, got %v", err)
		}
		for _, want := range []string{"RL1001", "spec.strategy.canary.steps[1].setWeight", `denied the request`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("denial lacks %q: %v", want, err)
			}
		}
		t.Logf("denial: %v", err)
	})

	t.Run("good bundle allowed in any order", func(t *testing.T) {
		// The VirtualService and DestinationRule come before the Services and
		// the Rollout that they name: creation order must not deny.
		for _, m := range goodBundle {
			if _, w, err := apply(m, false); err != nil {
				t.Fatalf("good object denied: %v\n%s", err, m)
			} else if len(w) > 0 {
				t.Errorf("good object warned: %q\n%s", w, m)
			}
		}
	})

	t.Run("VirtualService denied", func(t *testing.T) {
		_, _, err := apply(typoVirtualService, false)
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "RL0003") || !strings.Contains(err.Error(), "spec.http[0].rout") {
			t.Fatalf("VirtualService with an unknown field: want a 403 naming RL0003 and spec.http[0].rout, got %v", err)
		}
	})

	t.Run("VirtualService whose route another Rollout manages denied", func(t *testing.T) {
		id := ruleIDByName(sharedRouteRuleName)
		if id == "" {
			t.Skipf("no rule named %q is registered yet; the case switches on when it is", sharedRouteRuleName)
		}
		for _, m := range []string{sharedRolloutA, sharedRolloutB} {
			if _, _, err := apply(m, false); err != nil {
				t.Fatalf("Rollout naming a VirtualService that does not exist yet must be admitted: %v", err)
			}
		}
		// The webhook sees the Rollouts through its informers, a moment
		// after the API server stored them: dry-run the VirtualService until
		// its review sees both (or 10 s pass), then create it.
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, _, err := apply(sharedVirtualService, true); err != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		_, _, err := apply(sharedVirtualService, false)
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), id) {
			t.Fatalf("want the VirtualService denied with %s, got %v", id, err)
		}
	})

	t.Run("warning-only object allowed with warnings", func(t *testing.T) {
		_, w, err := apply(warnRollout, false)
		if err != nil {
			t.Fatalf("warning-only Rollout denied: %v", err)
		}
		joined := strings.Join(w, "\n")
		if !strings.Contains(joined, "RL0007") || !strings.Contains(joined, "RL0008") {
			t.Fatalf("want RL0007 and RL0008 warnings relayed to the client, got %q", w)
		}
		for _, s := range w {
			if len([]rune(s)) > 120 {
				t.Errorf("warning over 120 chars: %q", s)
			}
		}
	})

	t.Run("dryRun", func(t *testing.T) {
		if _, _, err := apply(badRollout, true); err == nil || !apierrors.IsForbidden(err) {
			t.Fatalf("dry run of a bad Rollout: want 403, got %v", err)
		}
		dry := strings.Replace(badRollout, "setWeight: 150", "setWeight: 50", 1)
		dry = strings.Replace(dry, "name: bad", "name: dry", 1)
		if _, _, err := apply(dry, true); err != nil {
			t.Fatalf("dry run of a good Rollout denied: %v", err)
		}
		_, err := user.Resource(rolloutsGVR).Namespace("shop").Get(ctx, "dry", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("dry-run object was persisted (get: %v)", err)
		}
	})

	t.Run("metrics count the API server's reviews", func(t *testing.T) {
		resp, err := wh.client.Get(wh.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			`rolloutlint_webhook_decisions_total{decision="denied",dry_run="true"}`,
			`rolloutlint_webhook_decisions_total{decision="denied",dry_run="false"}`,
			`rolloutlint_webhook_decisions_total{decision="warned",dry_run="false"} 1`,
			`rolloutlint_webhook_findings_total{rule="RL1001",severity="error"}`,
			`rolloutlint_webhook_requests_total{kind="Rollout",operation="CREATE"}`,
			`rolloutlint_webhook_request_duration_seconds_bucket{decision="allowed"`,
		} {
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})

	t.Run("updates next to the controllers", func(t *testing.T) {
		ctrlCfg := rest.CopyConfig(userCfg)
		ctrlCfg.BearerToken = controllerToken
		controller := dynamic.NewForConfigOrDie(ctrlCfg)
		rollouts := func(c dynamic.Interface) dynamic.ResourceInterface { return c.Resource(rolloutsGVR).Namespace("shop") }
		// update fetches the Rollout, changes it and writes it back as c.
		update := func(c dynamic.Interface, change func(*unstructured.Unstructured)) ([]string, error) {
			t.Helper()
			cur, err := rollouts(c).Get(ctx, "legacy", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			change(cur)
			warns.reset()
			_, err = rollouts(c).Update(ctx, cur, metav1.UpdateOptions{})
			return warns.get(), err
		}
		steps := func(weights ...int64) func(*unstructured.Unstructured) {
			return func(u *unstructured.Unstructured) {
				var list []any
				for _, w := range weights {
					list = append(list, map[string]any{"setWeight": w})
				}
				if err := unstructured.SetNestedSlice(u.Object, list, "spec", "strategy", "canary", "steps"); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The controller's service account is never denied: this is how an
		// object with a finding gets into the cluster (the webhook came later,
		// or a rule was added).
		legacy := kubetest.Parse(t, strings.Replace(badRollout, "name: bad", "name: legacy", 1))
		warns.reset()
		if _, err := rollouts(controller).Create(ctx, legacy, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the controller's create was denied: %v", err)
		}
		if w := strings.Join(warns.get(), " "); !strings.Contains(w, "RL1001") {
			t.Errorf("the controller's error-level finding is not relayed as a warning: %q", w)
		}
		// A user's update that keeps the old finding and adds none is allowed.
		w, err := update(user, steps(30, 150))
		if err != nil {
			t.Fatalf("update keeping the existing finding denied: %v", err)
		}
		if j := strings.Join(w, " "); !strings.Contains(j, "RL1001") || !strings.Contains(j, "already there") {
			t.Errorf("the existing finding is not a warning: %q", w)
		}
		// A step inserted before it renumbers the finding: still the old one.
		if _, err := update(user, steps(10, 30, 150)); err != nil {
			t.Fatalf("update that only moved the existing finding denied: %v", err)
		}
		// An update that adds a finding is denied, naming the new one.
		_, err = update(user, steps(10, 30, 150, 170))
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "adds 1 error(s)") || !strings.Contains(err.Error(), "170") {
			t.Fatalf("update adding a finding: want 403 naming the new error, got %v", err)
		}
		// Labels only: not linted, no warning.
		w, err = update(user, func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "payments"}) })
		if err != nil || len(w) != 0 {
			t.Fatalf("metadata-only update: err %v, warnings %q", err, w)
		}
		// The controller may add one.
		if _, err := update(controller, steps(10, 30, 150, 170)); err != nil {
			t.Fatalf("the controller's update was denied: %v", err)
		}
	})

	t.Run("config change applies without restart", func(t *testing.T) {
		if err := os.WriteFile(wh.config, []byte("rules:\n  RL1001: warning\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, w, err := apply(badRollout, true)
			if err == nil {
				if !strings.Contains(strings.Join(w, " "), "RL1001") {
					t.Fatalf("RL1001 at warning level: want a warning, got %q", w)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("config change not applied within 20s: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	t.Run("own namespace excluded", func(t *testing.T) {
		own := strings.Replace(badRollout, "namespace: shop", "namespace: rolloutlint", 1)
		if _, _, err := apply(own, false); err != nil {
			t.Fatalf("object in the webhook's namespace was reviewed: %v", err)
		}
	})
}

func ruleIDByName(name string) string {
	for _, r := range all.Rules() {
		if r.Name == name {
			return r.ID
		}
	}
	return ""
}

type warningRecorder struct {
	mu sync.Mutex
	w  []string
}

func (r *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w = append(r.w, text)
}

func (r *warningRecorder) reset() { r.mu.Lock(); r.w = nil; r.mu.Unlock() }

func (r *warningRecorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.w...)
}

var rolloutsGVR = kubetest.Rollouts.GVR()

// repoFile reads a file of the repository (tests run in webhook/e2e).
func repoFile(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// grantWebhookRBAC installs deploy/rbac.yaml's ClusterRole and binds it to the
// user the webhook process authenticates as, so the test proves that
// get/list/watch is all the cluster view needs.
func grantWebhookRBAC(ctx context.Context, t *testing.T, kube kubernetes.Interface) {
	var role *rbacv1.ClusterRole
	for _, doc := range strings.Split(string(repoFile(t, "deploy/rbac.yaml")), "\n---") {
		var probe metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &probe); err != nil {
			t.Fatal(err)
		}
		if probe.Kind == "ClusterRole" {
			role = &rbacv1.ClusterRole{}
			if err := yaml.UnmarshalStrict([]byte(doc), role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if role == nil {
		t.Fatal("deploy/rbac.yaml has no ClusterRole")
	}
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" && v != "watch" {
				t.Fatalf("deploy/rbac.yaml grants %q; the webhook needs get/list/watch only", v)
			}
		}
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "rolloutlint-webhook-e2e"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: webhookUser}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startWebhook builds rolloutlint and runs `rolloutlint webhook` with a
// serving certificate from a CA made here, a kubeconfig for the RBAC-limited
// user and deploy/config.yaml's .rolloutlint.yaml.
func startWebhook(t *testing.T, cl *kubetest.Cluster) *webhookProcess {
	dir := cl.Dir
	bin := filepath.Join(dir, "rolloutlint")
	build := exec.Command("go", "build", "-o", bin, "./cmd/rolloutlint")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building rolloutlint: %v\n%s", err, out)
	}
	pair, err := testcert.New(dir, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := cl.Kubeconfig(t, "webhook", webhookToken, "")
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(repoFile(t, "deploy/config.yaml"), &cm); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, ".rolloutlint.yaml")
	if err := os.WriteFile(cfg, []byte(cm.Data[".rolloutlint.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", kubetest.FreePort(t))
	exited := kubetest.StartProcess(t, "rolloutlint webhook", filepath.Join(dir, "webhook.log"), bin, "webhook",
		"--listen="+addr, "--cert-file="+pair.CertFile, "--key-file="+pair.KeyFile,
		"--kubeconfig="+kubeconfig, "--config="+cfg, "--config-poll=200ms", "--log-format=text", "--timeout=4s")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pair.CAPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	kubetest.WaitHTTP(t, "rolloutlint webhook", exited, client, "https://"+addr+"/readyz", "", 60*time.Second)
	return &webhookProcess{base: "https://" + addr, caPEM: pair.CAPEM, client: client, config: cfg}
}

// webhookProcess is the running `rolloutlint webhook`.
type webhookProcess struct {
	base   string
	caPEM  []byte
	client *http.Client
	config string // the .rolloutlint.yaml it reads
}

// registerWebhook installs deploy/webhook.yaml with its clientConfig pointed
// at the local process and the test CA.
func registerWebhook(ctx context.Context, t *testing.T, kube kubernetes.Interface, url string, caPEM []byte) {
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.UnmarshalStrict(repoFile(t, "deploy/webhook.yaml"), &vwc); err != nil {
		t.Fatal(err)
	}
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: bytes.TrimSpace(caPEM)}
	}
	if _, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &vwc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("registering the webhook: %v", err)
	}
}
