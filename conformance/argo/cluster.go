package argoconformance

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

const adminToken = "argo-conformance-admin"

// Cluster is etcd, kube-apiserver and the Argo Rollouts controller on
// loopback, with logs and state under Dir.
type Cluster struct {
	Dir        string
	Host       string
	Kubeconfig string
	Config     *rest.Config
	procs      []*proc
}

type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	log    string
}

// Stop stops every process the cluster started, newest first, by PID.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop()
	}
	c.procs = nil
}

func (p *proc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (c *Cluster) start(name, bin string, env []string, args ...string) (*proc, error) {
	logPath := filepath.Join(c.Dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{}), log: logPath}
	go func() { _ = cmd.Wait(); _ = f.Close(); close(p.exited) }()
	c.procs = append(c.procs, p)
	return p, nil
}

// tail returns the last lines of a process log, for error messages.
func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP polls url until it answers 200, the process exits or the time is up.
func waitHTTP(p *proc, client *http.Client, url, token string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready:\n%s", p.name, p.tail(30))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready at %s within %s:\n%s", p.name, url, within, p.tail(30))
		}
	}
}

// StartCluster starts etcd and kube-apiserver on loopback ports.
func StartCluster(dir, etcdBin, apiserverBin string) (*Cluster, error) {
	c := &Cluster{Dir: dir}
	if err := c.startEtcdAndAPIServer(etcdBin, apiserverBin); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) startEtcdAndAPIServer(etcdBin, apiserverBin string) error {
	client, err := freePort()
	if err != nil {
		return err
	}
	peer, err := freePort()
	if err != nil {
		return err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	// A fresh store every time, also in a kept CONFORMANCE_DIR: namespaces
	// and objects of an earlier run would collide with this one's.
	if err := os.RemoveAll(filepath.Join(c.Dir, "etcd")); err != nil {
		return err
	}
	etcd, err := c.start("etcd", etcdBin, nil,
		"--name=conformance", "--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", peer),
		fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", peer),
		fmt.Sprintf("--initial-cluster=conformance=http://127.0.0.1:%d", peer),
		"--unsafe-no-fsync")
	if err != nil {
		return err
	}
	if err := waitHTTP(etcd, http.DefaultClient, etcdURL+"/health", "", 30*time.Second); err != nil {
		return err
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saKey := filepath.Join(c.Dir, "sa.key")
	if err := os.WriteFile(saKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	tokens := filepath.Join(c.Dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(adminToken+",admin,1,\"system:masters\"\n"), 0o600); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	api, err := c.start("kube-apiserver", apiserverBin, nil,
		"--etcd-servers="+etcdURL,
		fmt.Sprintf("--secure-port=%d", port), "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		// In a network namespace with loopback only there is no routable
		// address; nothing here needs the kubernetes Service endpoints.
		"--endpoint-reconciler-type=none",
		"--cert-dir="+filepath.Join(c.Dir, "apiserver-certs"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--token-auth-file="+tokens,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.96.0.0/16",
	)
	if err != nil {
		return err
	}
	c.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if err := waitHTTP(api, insecure, c.Host+"/readyz", adminToken, 120*time.Second); err != nil {
		return err
	}
	c.Config = &rest.Config{Host: c.Host, BearerToken: adminToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 200, Burst: 400}
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: conformance
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %q}
contexts:
- name: conformance
  context: {cluster: conformance, user: admin}
current-context: conformance
`, c.Host, adminToken)
	return os.WriteFile(c.Kubeconfig, []byte(kc), 0o600)
}

// StartController starts the Argo Rollouts controller against the cluster.
// Its metrics and health servers listen on every interface (the controller
// has no flag for the address), so the harness runs in a network namespace
// of its own (run.sh): no one outside can reach them.
func (c *Cluster) StartController(bin string) error {
	metrics, err := freePort()
	if err != nil {
		return err
	}
	healthz, err := freePort()
	if err != nil {
		return err
	}
	p, err := c.start("rollouts-controller", bin,
		// The controller reads its own namespace for the notification
		// ConfigMap; none is installed, which it tolerates.
		[]string{"POD_NAMESPACE=argo-rollouts"},
		"--kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		fmt.Sprintf("--metricsPort=%d", metrics),
		fmt.Sprintf("--healthzPort=%d", healthz),
		"--loglevel=info",
	)
	if err != nil {
		return err
	}
	return waitHTTP(p, http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/healthz", healthz), "", 60*time.Second)
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates every CustomResourceDefinition in the YAML files and
// waits until each is established.
func InstallCRDs(ctx context.Context, dyn dynamic.Interface, files ...string) ([]string, error) {
	var names []string
	for _, f := range files {
		docs, err := readYAMLDocs(f)
		if err != nil {
			return nil, err
		}
		for _, u := range docs {
			if u.GetKind() != "CustomResourceDefinition" {
				continue
			}
			if _, err := dyn.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("%s: create CRD %s: %w", f, u.GetName(), err)
			}
			names = append(names, u.GetName())
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, n := range names {
		for {
			u, err := dyn.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
			if err == nil && established(u) {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("CRD %s not established: %w", n, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return names, nil
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

// readYAMLDocs decodes every non-empty document of a YAML file.
func readYAMLDocs(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	dec := yaml.NewYAMLOrJSONDecoder(f, 64*1024)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}
