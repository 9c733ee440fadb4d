// Package e2e runs `rolloutlint lint --cluster` and `plan --cluster`
// against a real kube-apiserver (with etcd) on loopback: the objects are
// created through the API server, read back with the RBAC of
// deploy/cluster-reader.yaml or of a restricted service account's token,
// and the commands run in process through the real command line.
// scripts/test-kube-e2e.sh (make test-cluster-e2e) provides the binaries;
// without them the test skips.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli"
	"github.com/rolloutlint/rolloutlint/internal/kubetest"
	"github.com/rolloutlint/rolloutlint/live/clusterview"
)

const (
	readerToken = "e2e-reader-token"
	readerUser  = "rolloutlint-reader"
)

// liveBundle is what another team has deployed: Rollout cart manages the
// route primary of VirtualService shop.
const liveBundle = `
apiVersion: v1
kind: Service
metadata: {name: cart-stable, namespace: shop}
spec: {selector: {app: cart}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: cart-canary, namespace: shop}
spec: {selector: {app: cart}, ports: [{name: http, port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: shop, namespace: shop}
spec:
  hosts: [cart-stable]
  http:
  - name: primary
    route:
    - destination: {host: cart-stable}
      weight: 100
    - destination: {host: cart-canary}
      weight: 0
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: cart, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart}}
    spec: {containers: [{name: cart, image: "cart:1"}]}
  strategy:
    canary:
      stableService: cart-stable
      canaryService: cart-canary
      trafficRouting: {istio: {virtualService: {name: shop, routes: [primary]}}}
      steps:
      - setWeight: 20
      - pause: {}
      - setWeight: 50
      - pause: {}
`

// checkoutServices are the new team's Services.
const checkoutServices = `
apiVersion: v1
kind: Service
metadata: {name: checkout-stable, namespace: shop}
spec: {selector: {app: checkout}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: checkout-canary, namespace: shop}
spec: {selector: {app: checkout}, ports: [{name: http, port: 80}]}
`

// checkoutRollout claims route (primary: the live cart's).
const checkoutRollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: checkout, image: "checkout:1"}]}
  strategy:
    canary:
      stableService: checkout-stable
      canaryService: checkout-canary
      trafficRouting: {istio: {virtualService: {name: shop, routes: [%s]}}}
      steps:
      - setWeight: 20
      - pause: {}
`

// fixedVirtualService gives checkout a route of its own in the shared
// VirtualService, replacing the live one.
const fixedVirtualService = `
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: shop, namespace: shop}
spec:
  hosts: [cart-stable, checkout-stable]
  http:
  - name: checkout
    match: [{headers: {x-app: {exact: checkout}}}]
    route:
    - destination: {host: checkout-stable}
      weight: 100
    - destination: {host: checkout-canary}
      weight: 0
  - name: primary
    route:
    - destination: {host: cart-stable}
      weight: 100
    - destination: {host: cart-canary}
      weight: 0
`

type result struct {
	code     int
	out, err string
}

// rolloutlint runs the command line in process in dir.
func rolloutlint(t *testing.T, dir string, args ...string) result {
	t.Helper()
	var out, errw bytes.Buffer
	e := &cli.Env{In: strings.NewReader(""), Out: &out, Err: &errw, Dir: dir, Getenv: func(string) string { return "" }}
	code := e.Run(args)
	return result{code, out.String(), errw.String()}
}

// files writes a directory of manifests.
func files(t *testing.T, fs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range fs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type lintJSON struct {
	Diagnostics []struct {
		RuleID  string `json:"ruleId"`
		File    string `json:"file"`
		Line    int    `json:"line"`
		Related []struct {
			File    string `json:"file"`
			Line    int    `json:"line"`
			Message string `json:"message"`
		} `json:"related"`
	} `json:"diagnostics"`
	Summary struct {
		Errors int `json:"errors"`
	} `json:"summary"`
	Cluster *struct {
		Objects  int      `json:"objects"`
		Replaced int      `json:"replaced"`
		Partial  bool     `json:"partial"`
		Problems []string `json:"problems"`
	} `json:"cluster"`
}

func decodeLint(t *testing.T, r result) lintJSON {
	t.Helper()
	var v lintJSON
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("lint JSON: %v\nstdout %s\nstderr %s", err, r.out, r.err)
	}
	return v
}

func TestClusterLintAndPlan(t *testing.T) {
	apiserverBin, etcdBin := kubetest.Binaries(t, "run scripts/test-kube-e2e.sh (make test-cluster-e2e)")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cl := kubetest.Start(t, apiserverBin, etcdBin, kubetest.User{Token: readerToken, Name: readerUser})
	kube := cl.Kube()
	cl.InstallCRDs(ctx, t, kubetest.Rollouts, kubetest.AnalysisTemplates, kubetest.ClusterAnalysisTemplates, kubetest.Applications,
		kubetest.VirtualServices, kubetest.DestinationRules, kubetest.Gateways, kubetest.Sidecars)
	for _, ns := range []string{"shop", "istio-system", "big"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	grantReaderRole(ctx, t, kube)
	reader := cl.Kubeconfig(t, "reader", readerToken, "shop")
	cl.Apply(ctx, t, liveBundle)

	bad := files(t, map[string]string{
		"checkout.yaml": fmt.Sprintf(checkoutRollout, "primary"), "services.yaml": checkoutServices,
	})

	t.Run("shared route with the live Rollout", func(t *testing.T) {
		r := rolloutlint(t, bad, "lint", "--cluster", "--kubeconfig", reader, "--format", "json", ".")
		if r.code != cli.ExitFindings {
			t.Fatalf("exit %d, want %d\n%s\n%s", r.code, cli.ExitFindings, r.out, r.err)
		}
		res := decodeLint(t, r)
		found := false
		for _, d := range res.Diagnostics {
			if strings.HasPrefix(d.File, "cluster:") {
				t.Errorf("a finding on a live object: %+v", d)
			}
			if d.RuleID != "RL2001" {
				continue
			}
			found = true
			if d.File != "checkout.yaml" || len(d.Related) == 0 || d.Related[0].File != "cluster:Rollout/shop/cart" {
				t.Fatalf("RL2001 not on the local Rollout with the live one related: %+v", d)
			}
			// The related line is the line of kubectl get -o yaml.
			if want := kubectlLine(ctx, t, cl, "Rollout", "shop", "cart", "- primary"); d.Related[0].Line != want {
				t.Errorf("related line %d, want %d (kubectl get -o yaml)", d.Related[0].Line, want)
			}
		}
		if !found {
			t.Fatalf("no RL2001:\n%s", r.out)
		}
		// A finding about the live VirtualService that the local Rollout
		// causes is moved onto the local file, the live place related.
		moved := false
		for _, d := range res.Diagnostics {
			if d.RuleID == "RL2005" && d.File == "checkout.yaml" && len(d.Related) > 0 && d.Related[0].File == "cluster:VirtualService/shop/shop" &&
				strings.HasPrefix(d.Related[0].Message, "the live VirtualService shop/shop at spec.http[0].route[") {
				moved = true
			}
		}
		if !moved {
			t.Errorf("RL2005 on the live VirtualService not moved onto checkout.yaml:\n%s", r.out)
		}
		if c := res.Cluster; c == nil || c.Partial || c.Objects < 4 || c.Replaced != 0 {
			t.Errorf("cluster summary %+v", c)
		}
		text := rolloutlint(t, bad, "lint", "--cluster", "--kubeconfig", reader, ".")
		t.Logf("lint --cluster:\n%s%s", text.out, text.err)
		if !strings.Contains(text.out, "    cluster:Rollout/shop/cart:") || !strings.Contains(text.out, "from the cluster at "+cl.Host+" (context reader)") {
			t.Errorf("text output:\n%s", text.out)
		}
		sarif := rolloutlint(t, bad, "lint", "--cluster", "--kubeconfig", reader, "--format", "sarif", ".")
		checkSARIF(t, sarif.out)
		// Without the cluster the local files alone share nothing.
		if alone := rolloutlint(t, bad, "lint", "--format", "json", "."); strings.Contains(alone.out, `"RL2001"`) {
			t.Errorf("RL2001 without --cluster:\n%s", alone.out)
		}
	})

	// Units against the cluster: the files as written (--render=false), and
	// a Kustomize root rendered in process whose namespace transform puts
	// the Rollout in shop. The same root as written puts it elsewhere, where
	// it shares nothing with the live cart.
	kustomized := files(t, map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: shop\nresources: [checkout.yaml, services.yaml]\n",
		"checkout.yaml":      strings.ReplaceAll(fmt.Sprintf(checkoutRollout, "primary"), "namespace: shop", "namespace: elsewhere"),
		"services.yaml":      checkoutServices,
	})
	for _, tc := range []struct {
		name   string
		dir    string
		flags  []string
		shared bool
	}{
		{"files as written (--render=false)", bad, []string{"--render=false"}, true},
		{"Kustomize root", kustomized, nil, true},
		{"Kustomize root as written (--render=false)", kustomized, []string{"--render=false"}, false},
	} {
		t.Run("shared route through "+tc.name, func(t *testing.T) {
			r := rolloutlint(t, tc.dir, append([]string{"lint", "--cluster", "--kubeconfig", reader, "--format", "json", "."}, tc.flags...)...)
			if r.code != cli.ExitFindings && r.code != cli.ExitOK {
				t.Fatalf("exit %d\n%s", r.code, r.err)
			}
			shared := false
			for _, d := range decodeLint(t, r).Diagnostics {
				if strings.HasPrefix(d.File, "cluster:") {
					t.Errorf("a finding on a live object: %+v", d)
				}
				if d.RuleID == "RL2001" && len(d.Related) > 0 && d.Related[0].File == "cluster:Rollout/shop/cart" {
					shared = true
					if d.File != "checkout.yaml" {
						t.Errorf("RL2001 on %s, want checkout.yaml", d.File)
					}
				}
			}
			if shared != tc.shared {
				t.Errorf("RL2001 against the live cart: %t, want %t\n%s%s", shared, tc.shared, r.out, r.err)
			}
			if tc.shared && r.code != cli.ExitFindings {
				t.Errorf("exit %d, want %d", r.code, cli.ExitFindings)
			}
		})
	}

	t.Run("local fix is clean", func(t *testing.T) {
		fixed := files(t, map[string]string{
			"checkout.yaml": fmt.Sprintf(checkoutRollout, "checkout"), "services.yaml": checkoutServices, "vs.yaml": fixedVirtualService,
		})
		r := rolloutlint(t, fixed, "lint", "--cluster", "--kubeconfig", reader, "--format", "json", ".")
		res := decodeLint(t, r)
		if r.code != cli.ExitOK || res.Summary.Errors != 0 {
			t.Fatalf("exit %d, %d errors:\n%s\n%s", r.code, res.Summary.Errors, r.out, r.err)
		}
		if res.Cluster == nil || res.Cluster.Replaced != 1 {
			t.Errorf("the local VirtualService does not replace the live one: %+v", res.Cluster)
		}
	})

	t.Run("forbidden kinds make a partial lint", func(t *testing.T) {
		token := restrictedToken(ctx, t, kube)
		ci := cl.Kubeconfig(t, "ci", token, "shop")
		r := rolloutlint(t, bad, "lint", "--cluster", "--kubeconfig", ci, "--format", "json", ".")
		if r.code != cli.ExitFindings {
			t.Fatalf("--fail-level error: exit %d, want %d\n%s", r.code, cli.ExitFindings, r.err)
		}
		for _, want := range []string{
			"rolloutlint: cluster: DestinationRule in namespace shop: forbidden (RBAC does not allow list on destinationrules.networking.istio.io)",
			"rolloutlint: cluster: ClusterAnalysisTemplate in every namespace: forbidden",
			"rolloutlint: cluster: Application in every namespace: forbidden",
			"rolloutlint: cluster: Gateway in namespace istio-system: forbidden",
			"the cluster was read partially",
		} {
			if !strings.Contains(r.err, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.err)
			}
		}
		if strings.Contains(r.err, "Rollout in namespace shop: forbidden") {
			t.Errorf("an allowed kind reported forbidden:\n%s", r.err)
		}
		res := decodeLint(t, r)
		if res.Cluster == nil || !res.Cluster.Partial || len(res.Cluster.Problems) == 0 {
			t.Errorf("JSON does not say partial: %+v", res.Cluster)
		}
		shared := false
		for _, d := range res.Diagnostics {
			shared = shared || d.RuleID == "RL2001"
		}
		if !shared {
			t.Error("the lint did not go on with the kinds it could read: no RL2001")
		}
		t.Logf("lint --cluster as a restricted service account:\n%s", r.err)
		if r := rolloutlint(t, bad, "lint", "--cluster", "--kubeconfig", ci, "--fail-level", "none", "."); r.code != cli.ExitOK || !strings.Contains(r.err, "read partially") {
			t.Errorf("--fail-level none: exit %d\n%s", r.code, r.err)
		}
	})

	t.Run("object bound", func(t *testing.T) {
		r := rolloutlint(t, bad, "lint", "--cluster", "--kubeconfig", reader, "--cluster-max-objects", "2", "--fail-level", "none", ".")
		if r.code != cli.ExitOK || !strings.Contains(r.err, "stopped at 2 objects (--cluster-max-objects 2") || !strings.Contains(r.out, "PARTIAL") {
			t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.out, r.err)
		}
	})

	t.Run("cluster-namespace narrows and widens", func(t *testing.T) {
		// Another namespace only: the live cart is not read, nothing is shared.
		r := rolloutlint(t, bad, "lint", "--cluster", "--kubeconfig", reader, "--cluster-namespace", "big", "--format", "json", ".")
		res := decodeLint(t, r)
		for _, d := range res.Diagnostics {
			if d.RuleID == "RL2001" {
				t.Errorf("RL2001 with shop not read:\n%s", r.out)
			}
		}
		if res.Cluster == nil || res.Cluster.Objects != 0 {
			t.Errorf("objects read from namespace big before it has any: %+v", res.Cluster)
		}
		// Every namespace: the shared route again.
		r = rolloutlint(t, bad, "lint", "--cluster", "--kubeconfig", reader, "--cluster-namespace", "*", "--format", "json", ".")
		if !strings.Contains(r.out, `"RL2001"`) {
			t.Errorf("no RL2001 reading every namespace:\n%s%s", r.out, r.err)
		}
	})

	t.Run("plan starts from the live step", func(t *testing.T) {
		const stable, canary = "7c9d6f5b8", "6b8f4d7c9"
		midCanary(ctx, t, cl, stable, canary)
		r := rolloutlint(t, t.TempDir(), "plan", "--cluster", "--kubeconfig", reader, "--format", "json")
		if r.code != cli.ExitOK {
			t.Fatalf("exit %d\n%s", r.code, r.err)
		}
		p := decodePlan(t, r.out, "cart")
		if p.Live == nil || p.Live.Step != 1 || !p.Live.Paused || p.Live.StableHash != stable || p.Live.CanaryHash != canary {
			t.Fatalf("live state %+v", p.Live)
		}
		got := p.describe()
		want := []string{
			"live s80 c20 2/1",
			"step 1 s80 c20 2/1",
			"step 2 s50 c50 2/1 | shop spec.http[0].route[0].weight 80→50 | shop spec.http[0].route[1].weight 20→50",
			"step 3 s50 c50 2/1",
		}
		if strings.Join(got[:4], "\n") != strings.Join(want, "\n") {
			t.Errorf("states:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
		if p.AbortFrom != 0 || len(p.Abort) == 0 || !strings.Contains(p.Abort[0].describe(), "shop spec.http[0].route[0].weight 80→100") {
			t.Errorf("abort path from the live state: from %d, %v", p.AbortFrom, p.Abort)
		}
		text := rolloutlint(t, t.TempDir(), "plan", "--cluster", "--kubeconfig", reader)
		t.Logf("plan --cluster:\n%s%s", text.out, text.err)
		if !strings.Contains(text.out, "from the live state: stable "+stable+", canary "+canary) || !strings.Contains(text.out, "live: at step 1 of 4, paused") {
			t.Errorf("plan text:\n%s", text.out)
		}

		// A local file with a new image: the update it would start. The
		// live canary's ReplicaSet goes at the start; the canary Service
		// moves from its hash once the new revision has a pod.
		local := files(t, map[string]string{"cart.yaml": strings.Replace(liveBundle, `"cart:1"`, `"cart:2"`, 1)})
		r = rolloutlint(t, local, "plan", "--cluster", "--kubeconfig", reader, "--format", "json", ".")
		if r.code != cli.ExitOK {
			t.Fatalf("exit %d\n%s", r.code, r.err)
		}
		p = decodePlan(t, r.out, "cart")
		got = p.describe()
		if p.Live == nil || !p.Live.NewTemplate || len(got) < 3 || !strings.HasPrefix(got[1], "start") ||
			!strings.Contains(got[1], "cart-"+canary+" spec.replicas 1→0") ||
			!strings.HasPrefix(got[2], "step 0") || !strings.Contains(got[2], `cart-canary spec.selector["rollouts-pod-template-hash"] `+canary+"→<canary-hash>") {
			t.Errorf("new template: live %+v\n%s", p.Live, strings.Join(got, "\n"))
		}
	})

	t.Run("listing many objects", func(t *testing.T) {
		n := 1000 // CLUSTER_E2E_OBJECTS for a bigger measurement
		if v, err := strconv.Atoi(os.Getenv("CLUSTER_E2E_OBJECTS")); err == nil && v > 0 {
			n = v
		}
		createServices(ctx, t, cl, "big", n)
		disc := discovery.NewDiscoveryClientForConfigOrDie(cl.Config(readerToken))
		dyn := dynamic.NewForConfigOrDie(cl.Config(readerToken))
		began := time.Now()
		v := clusterview.New()
		res, err := v.List(ctx, disc, dyn, clusterview.ListOptions{Scopes: []clusterview.Scope{{Kinds: []string{"Service"}, Namespaces: []string{"big"}}}})
		if err != nil || res.Partial() || res.Objects != n {
			t.Fatalf("list: %v, %+v", err, res)
		}
		t.Logf("listed %d Services in %s (%d requests, %.1f MB of JSON kept)", res.Objects, time.Since(began).Round(time.Millisecond), res.Requests, float64(res.Bytes)/1e6)
		if pages := (n + clusterview.DefaultPageSize - 1) / clusterview.DefaultPageSize; res.Requests != pages {
			t.Errorf("%d requests for %d objects in pages of %d", res.Requests, n, clusterview.DefaultPageSize)
		}
		dir := files(t, map[string]string{"svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: new, namespace: big}\nspec: {selector: {app: new}, ports: [{port: 80}]}\n"})
		began = time.Now()
		r := rolloutlint(t, dir, "lint", "--cluster", "--kubeconfig", reader, "--format", "json", ".")
		elapsed := time.Since(began)
		res2 := decodeLint(t, r)
		if r.code != cli.ExitOK || res2.Cluster == nil || res2.Cluster.Objects < n {
			t.Fatalf("lint of a namespace of %d Services: exit %d, %+v\n%s", n, r.code, res2.Cluster, r.err)
		}
		began = time.Now()
		rolloutlint(t, dir, "lint", "--format", "json", ".")
		t.Logf("lint --cluster with %d live objects: %s (without --cluster: %s)", res2.Cluster.Objects, elapsed.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
	})
}

// grantReaderRole installs deploy/cluster-reader.yaml's ClusterRole and
// binds it to the reader user, so the test proves that list is all the
// CLI needs.
func grantReaderRole(ctx context.Context, t *testing.T, kube kubernetes.Interface) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "cluster-reader.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "rolloutlint-reader-e2e"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: readerUser}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// restrictedToken makes a service account of shop that may list Rollouts,
// Services and VirtualServices there and nothing else, and returns a token
// the API server issues for it.
func restrictedToken(ctx context.Context, t *testing.T, kube kubernetes.Interface) string {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ci", Namespace: "shop"}}
	if _, err := kube.CoreV1().ServiceAccounts("shop").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "ci-reader", Namespace: "shop"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"argoproj.io"}, Resources: []string{"rollouts"}, Verbs: []string{"list"}},
			{APIGroups: []string{"networking.istio.io"}, Resources: []string{"virtualservices"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"list"}},
		},
	}
	if _, err := kube.RbacV1().Roles("shop").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "ci-reader", Namespace: "shop"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "ci-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "ci", Namespace: "shop"}},
	}
	if _, err := kube.RbacV1().RoleBindings("shop").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tr, err := kube.CoreV1().ServiceAccounts("shop").CreateToken(ctx, "ci", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// kubectlLine is the line of the first line containing text in the object
// as kubectl get -o yaml prints it (managedFields hidden, as kubectl does).
func kubectlLine(ctx context.Context, t *testing.T, cl *kubetest.Cluster, kind, ns, name, text string) int {
	t.Helper()
	u, err := cl.Dynamic().Resource(kubetest.Resources[kind]).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	data, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%q not in\n%s", text, data)
	return 0
}

// checkSARIF checks that the live related location is one GitHub takes: a
// physical location (relative, under the CLUSTER base) with a logical one.
func checkSARIF(t *testing.T, out string) {
	t.Helper()
	var log struct {
		Runs []struct {
			OriginalURIBaseIDs map[string]any `json:"originalUriBaseIds"`
			Results            []struct {
				RuleID           string `json:"ruleId"`
				RelatedLocations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
					LogicalLocations []struct {
						FullyQualifiedName string `json:"fullyQualifiedName"`
					} `json:"logicalLocations"`
				} `json:"relatedLocations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatalf("SARIF: %v", err)
	}
	if _, ok := log.Runs[0].OriginalURIBaseIDs["CLUSTER"]; !ok {
		t.Error("SARIF has no CLUSTER base")
	}
	for _, r := range log.Runs[0].Results {
		if r.RuleID != "RL2001" {
			continue
		}
		for _, rl := range r.RelatedLocations {
			if rl.PhysicalLocation == nil {
				t.Fatal("a related location without a physical location (GitHub rejects the upload)")
			}
			if a := rl.PhysicalLocation.ArtifactLocation; a.URI == "Rollout/shop/cart" {
				if a.URIBaseID != "CLUSTER" || len(rl.LogicalLocations) != 1 || rl.LogicalLocations[0].FullyQualifiedName != "cluster:Rollout/shop/cart" {
					t.Errorf("live related location %+v", rl)
				}
				return
			}
		}
	}
	t.Errorf("no live related location in the SARIF:\n%s", out)
}

// midCanary writes what the Argo Rollouts controller would have written
// with cart paused at step 1: the status (through the status subresource),
// the route weights 80/20 and the two ReplicaSets.
func midCanary(ctx context.Context, t *testing.T, cl *kubetest.Cluster, stable, canary string) {
	t.Helper()
	dyn := cl.Dynamic()
	ro := dyn.Resource(kubetest.Rollouts.GVR()).Namespace("shop")
	cart, err := ro.Get(ctx, "cart", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]any{
		"currentStepIndex": int64(1), "stableRS": stable, "currentPodHash": canary, "controllerPause": true,
		"pauseConditions": []any{map[string]any{"reason": "CanaryPauseStep", "startTime": "2026-01-02T03:04:05Z"}},
		"canary": map[string]any{"weights": map[string]any{
			"canary": map[string]any{"weight": int64(20), "podTemplateHash": canary, "serviceName": "cart-canary"},
			"stable": map[string]any{"weight": int64(80), "podTemplateHash": stable, "serviceName": "cart-stable"},
		}},
		"phase": "Paused", "replicas": int64(3),
	}
	if err := unstructured.SetNestedField(cart.Object, status, "status"); err != nil {
		t.Fatal(err)
	}
	if _, err := ro.UpdateStatus(ctx, cart, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	vs := dyn.Resource(kubetest.VirtualServices.GVR()).Namespace("shop")
	shop, err := vs.Get(ctx, "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	routes, _, _ := unstructured.NestedSlice(shop.Object, "spec", "http")
	dests := routes[0].(map[string]any)["route"].([]any)
	dests[0].(map[string]any)["weight"], dests[1].(map[string]any)["weight"] = int64(80), int64(20)
	if err := unstructured.SetNestedSlice(shop.Object, routes, "spec", "http"); err != nil {
		t.Fatal(err)
	}
	if _, err := vs.Update(ctx, shop, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for hash, replicas := range map[string]int{stable: 2, canary: 1} {
		cl.Apply(ctx, t, fmt.Sprintf(`
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: cart-%[1]s
  namespace: shop
  labels: {app: cart, rollouts-pod-template-hash: %[1]s}
  ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: cart, uid: %[2]s, controller: true}]
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: cart, rollouts-pod-template-hash: %[1]s}}
  template:
    metadata: {labels: {app: cart, rollouts-pod-template-hash: %[1]s}}
    spec: {containers: [{name: cart, image: "cart:1"}]}
`, hash, cart.GetUID(), replicas))
	}
}

// createServices creates n Services in ns, a few requests at a time.
func createServices(ctx context.Context, t *testing.T, cl *kubetest.Cluster, ns string, n int) {
	t.Helper()
	kube := cl.Kube()
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				svc := &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%04d", i), Namespace: ns, Labels: map[string]string{"app": fmt.Sprintf("app-%d", i)}},
					Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": fmt.Sprintf("app-%d", i)}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
				}
				if _, err := kube.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("created %d Services in %s", n, time.Since(began).Round(time.Millisecond))
}

// planJSON is the part of plan --format json the test reads.
type planJSON struct {
	Rollouts []planRollout `json:"rollouts"`
}

type planRollout struct {
	Rollout struct {
		Name string `json:"name"`
	} `json:"rollout"`
	Live *struct {
		Step        int    `json:"step"`
		Paused      bool   `json:"paused"`
		StableHash  string `json:"stableHash"`
		CanaryHash  string `json:"canaryHash"`
		NewTemplate bool   `json:"newTemplate"`
	} `json:"live"`
	States    []planState `json:"states"`
	AbortFrom int         `json:"abortFrom"`
	Abort     []planState `json:"abort"`
}

type planState struct {
	Phase  string `json:"phase"`
	Step   int    `json:"step"`
	Routes []struct {
		Destinations []struct {
			Role   string `json:"role"`
			Weight int    `json:"weight"`
		} `json:"destinations"`
	} `json:"routes"`
	StableReplicas int `json:"stableReplicas"`
	CanaryReplicas int `json:"canaryReplicas"`
	Writes         []struct {
		Object struct {
			Name string `json:"name"`
		} `json:"object"`
		Field string `json:"field"`
		Old   string `json:"old"`
		New   string `json:"new"`
	} `json:"writes"`
}

func decodePlan(t *testing.T, out, name string) planRollout {
	t.Helper()
	var doc planJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, out)
	}
	for _, r := range doc.Rollouts {
		if r.Rollout.Name == name {
			return r
		}
	}
	t.Fatalf("no plan of %s:\n%s", name, out)
	return planRollout{}
}

func (p planRollout) describe() []string {
	var out []string
	for _, s := range p.States {
		out = append(out, s.describe())
	}
	return out
}

// describe renders a state as "step 2 s50 c50 2/1 | object field old→new".
func (s planState) describe() string {
	label := s.Phase
	if s.Step >= 0 {
		label = fmt.Sprintf("step %d", s.Step)
	}
	var ws []string
	for _, rt := range s.Routes {
		for _, d := range rt.Destinations {
			ws = append(ws, fmt.Sprintf("%c%d", d.Role[0], d.Weight))
		}
	}
	line := fmt.Sprintf("%s %s %d/%d", label, strings.Join(ws, " "), s.StableReplicas, s.CanaryReplicas)
	for _, w := range s.Writes {
		line += fmt.Sprintf(" | %s %s %s→%s", w.Object.Name, w.Field, w.Old, w.New)
	}
	return line
}
