// Package kubetest starts a real kube-apiserver with its etcd on loopback
// for end-to-end tests (the webhook's and lint/plan --cluster's), with
// token users, RBAC on, and helpers to install CRDs and apply manifests.
// The binaries come from the environment (KUBE_APISERVER, ETCD; the e2e
// scripts build and install them); without them the test skips. Processes
// are stopped by PID when the test ends.
package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// AdminToken authenticates as a member of system:masters.
const AdminToken = "e2e-admin-token"

// User is a static token user of the API server (--token-auth-file).
type User struct {
	Token, Name string
	Groups      []string
}

// Cluster is a running kube-apiserver.
type Cluster struct {
	// Host is the API server's URL (https://127.0.0.1:port).
	Host string
	// Dir holds the logs, etcd's data and generated files.
	Dir string
	// Admin is a client config of the admin user.
	Admin *rest.Config
}

// Binaries returns the kube-apiserver and etcd binaries named by
// KUBE_APISERVER and ETCD, and skips the test when either is unset.
func Binaries(t *testing.T, how string) (apiserver, etcd string) {
	t.Helper()
	apiserver, etcd = os.Getenv("KUBE_APISERVER"), os.Getenv("ETCD")
	if apiserver == "" || etcd == "" {
		t.Skipf("KUBE_APISERVER and ETCD are not set: %s, which builds and installs them", how)
	}
	return apiserver, etcd
}

// Start runs etcd and kube-apiserver in dir (E2E_DIR when set, to keep the
// logs; else a temporary directory) with the admin user and users, and
// returns once the API server is ready.
func Start(t *testing.T, apiserverBin, etcdBin string, users ...User) *Cluster {
	t.Helper()
	dir := os.Getenv("E2E_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	etcdURL := startEtcd(t, etcdBin, dir)
	host := startAPIServer(t, apiserverBin, dir, etcdURL, users)
	return &Cluster{Host: host, Dir: dir, Admin: c(host, AdminToken)}
}

// c is a client config for a token.
func c(host, token string) *rest.Config {
	return &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 100, Burst: 200}
}

// Config returns a client config that authenticates with token.
func (cl *Cluster) Config(token string) *rest.Config { return c(cl.Host, token) }

// Kubeconfig writes a kubeconfig (one cluster, one user with token, one
// context named name, current, with namespace when set) and returns its path.
func (cl *Cluster) Kubeconfig(t *testing.T, name, token, namespace string) string {
	t.Helper()
	p := filepath.Join(cl.Dir, name+".kubeconfig")
	ns := ""
	if namespace != "" {
		ns = ", namespace: " + namespace
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: %s, user: {token: %q}}]
contexts: [{name: %s, context: {cluster: e2e, user: %s%s}}]
current-context: %s
`, cl.Host, name, token, name, name, ns, name)
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Dynamic returns a dynamic client of the admin user.
func (cl *Cluster) Dynamic() dynamic.Interface { return dynamic.NewForConfigOrDie(cl.Admin) }

// Kube returns a typed client of the admin user.
func (cl *Cluster) Kube() kubernetes.Interface { return kubernetes.NewForConfigOrDie(cl.Admin) }

// FreePort returns a loopback port free right now.
func FreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}

// StartProcess runs a process with its output in a log file and stops it
// (by its PID) when the test ends; on failure the log's tail is printed.
// The channel closes when the process exits.
func StartProcess(t *testing.T, name, logFile string, bin string, args ...string) <-chan struct{} {
	t.Helper()
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = f.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logFile)
			if len(data) > 6000 {
				data = data[len(data)-6000:]
			}
			t.Logf("--- %s log tail (%s) ---\n%s", name, logFile, data)
		}
	})
	return done
}

// WaitHTTP polls url until it answers 200, failing the test when the
// process exits first or within passes.
func WaitHTTP(t *testing.T, what string, exited <-chan struct{}, client *http.Client, url, token string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("%s exited before it was ready", what)
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s not ready within %s: %s", what, within, last)
}

func startEtcd(t *testing.T, bin, dir string) string {
	client, peer := FreePort(t), FreePort(t)
	u := fmt.Sprintf("http://127.0.0.1:%d", client)
	exited := StartProcess(t, "etcd", filepath.Join(dir, "etcd.log"), bin,
		"--name=e2e", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+u, "--advertise-client-urls="+u,
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", peer),
		fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", peer),
		fmt.Sprintf("--initial-cluster=e2e=http://127.0.0.1:%d", peer))
	WaitHTTP(t, "etcd", exited, http.DefaultClient, u+"/health", "", 30*time.Second)
	return u
}

func startAPIServer(t *testing.T, bin, dir, etcdURL string, users []User) string {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	saKey := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(saKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	all := append([]User{{Token: AdminToken, Name: "admin", Groups: []string{"system:masters"}}}, users...)
	for i, u := range all {
		fmt.Fprintf(&csv, "%s,%s,%d", u.Token, u.Name, i+1)
		if len(u.Groups) > 0 {
			fmt.Fprintf(&csv, ",%q", strings.Join(u.Groups, ","))
		}
		csv.WriteString("\n")
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	exited := StartProcess(t, "kube-apiserver", filepath.Join(dir, "kube-apiserver.log"), bin,
		"--etcd-servers="+etcdURL,
		fmt.Sprintf("--secure-port=%d", port), "--bind-address=127.0.0.1",
		"--cert-dir="+filepath.Join(dir, "apiserver-certs"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.96.0.0/16",
	)
	host := fmt.Sprintf("https://127.0.0.1:%d", port)
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	began := time.Now()
	WaitHTTP(t, "kube-apiserver", exited, insecure, host+"/readyz", AdminToken, 90*time.Second)
	t.Logf("kube-apiserver ready in %s", time.Since(began).Round(100*time.Millisecond))
	return host
}

// CRD is a CustomResourceDefinition that keeps every field (no schema), at
// the version rolloutlint's kinds use; status makes status a subresource,
// written apart from the spec as controllers do.
type CRD struct {
	Group, Kind, Plural string
	Namespaced, Status  bool
}

// Version is the CRD's served and stored version.
func (d CRD) Version() string {
	if d.Group == "networking.istio.io" {
		return "v1"
	}
	return "v1alpha1"
}

// GVR is the CRD's resource.
func (d CRD) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: d.Group, Version: d.Version(), Resource: d.Plural}
}

func (d CRD) object() *unstructured.Unstructured {
	scope := "Cluster"
	if d.Namespaced {
		scope = "Namespaced"
	}
	version := map[string]any{
		"name": d.Version(), "served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
	}
	if d.Status {
		version["subresources"] = map[string]any{"status": map[string]any{}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": d.Plural + "." + d.Group},
		"spec": map[string]any{
			"group": d.Group, "scope": scope,
			"names":    map[string]any{"kind": d.Kind, "plural": d.Plural, "singular": strings.ToLower(d.Kind), "listKind": d.Kind + "List"},
			"versions": []any{version},
		},
	}}
}

// Common CRDs.
var (
	Rollouts                 = CRD{"argoproj.io", "Rollout", "rollouts", true, true}
	AnalysisTemplates        = CRD{"argoproj.io", "AnalysisTemplate", "analysistemplates", true, false}
	ClusterAnalysisTemplates = CRD{"argoproj.io", "ClusterAnalysisTemplate", "clusteranalysistemplates", false, false}
	Applications             = CRD{"argoproj.io", "Application", "applications", true, true}
	VirtualServices          = CRD{"networking.istio.io", "VirtualService", "virtualservices", true, false}
	DestinationRules         = CRD{"networking.istio.io", "DestinationRule", "destinationrules", true, false}
	Gateways                 = CRD{"networking.istio.io", "Gateway", "gateways", true, false}
	Sidecars                 = CRD{"networking.istio.io", "Sidecar", "sidecars", true, false}
)

var crdsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates the CRDs and waits until each is established.
func (cl *Cluster) InstallCRDs(ctx context.Context, t *testing.T, defs ...CRD) {
	t.Helper()
	dyn := cl.Dynamic()
	for _, d := range defs {
		if _, err := dyn.Resource(crdsGVR).Create(ctx, d.object(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating CRD %s: %v", d.Plural, err)
		}
	}
	for _, d := range defs {
		name := d.Plural + "." + d.Group
		deadline := time.Now().Add(30 * time.Second)
		for {
			got, err := dyn.Resource(crdsGVR).Get(ctx, name, metav1.GetOptions{})
			if err == nil && established(got) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CRD %s not established: %v", name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// Parse decodes one YAML manifest.
func Parse(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// Resources maps the kinds the tests create to their resources.
var Resources = map[string]schema.GroupVersionResource{
	"Rollout":          Rollouts.GVR(),
	"AnalysisTemplate": AnalysisTemplates.GVR(),
	"VirtualService":   VirtualServices.GVR(),
	"DestinationRule":  DestinationRules.GVR(),
	"Gateway":          Gateways.GVR(),
	"Application":      Applications.GVR(),
	"Service":          {Version: "v1", Resource: "services"},
	"ReplicaSet":       {Group: "apps", Version: "v1", Resource: "replicasets"},
	"Namespace":        {Version: "v1", Resource: "namespaces"},
}

// GVROf returns the resource of an object the tests create.
func GVROf(t testing.TB, u *unstructured.Unstructured) schema.GroupVersionResource {
	t.Helper()
	gvr, ok := Resources[u.GetKind()]
	if !ok {
		t.Fatalf("kubetest: no resource known for kind %s", u.GetKind())
	}
	return gvr
}

// Apply creates every object of a multi-document manifest as the admin.
func (cl *Cluster) Apply(ctx context.Context, t *testing.T, manifests string) []*unstructured.Unstructured {
	t.Helper()
	dyn := cl.Dynamic()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(manifests, "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := Parse(t, doc)
		ri := dyn.Resource(GVROf(t, u))
		var created *unstructured.Unstructured
		var err error
		if u.GetNamespace() != "" {
			created, err = ri.Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
		} else {
			created, err = ri.Create(ctx, u, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		out = append(out, created)
	}
	return out
}
