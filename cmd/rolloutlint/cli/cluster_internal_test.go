package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/live/clusterview"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// The reader role of docs/cluster.md grants list on every kind the view
// can read, and no verb beyond get and list.
func TestClusterReaderRole(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "cluster-reader.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" {
				t.Errorf("the reader role grants %q", v)
			}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				granted[g+"/"+res] = true
			}
		}
	}
	for _, gr := range clusterview.Resources() {
		if !granted[gr.Group+"/"+gr.Resource] {
			t.Errorf("the reader role does not grant list on %s", gr)
		}
	}
}

func TestClusterKinds(t *testing.T) {
	t.Parallel()
	got := clusterKinds(all.Rules())
	for _, want := range []string{"Rollout", "Service", "VirtualService", "DestinationRule", "Gateway", "ServiceEntry",
		"Sidecar", "AnalysisTemplate", "ClusterAnalysisTemplate", "Application", "HorizontalPodAutoscaler", "Deployment"} {
		if !contains(got, want) {
			t.Errorf("the rules read %s, but it is not listed: %v", want, got)
		}
	}
	if contains(got, "ReplicaSet") {
		t.Error("ReplicaSets are listed for a lint")
	}
	var rollout []string
	for _, r := range all.Rules() {
		if r.ID == "RL1001" {
			rollout = clusterKinds(append(all.Rules()[:0:0], r))
		}
	}
	if !reflect.DeepEqual(rollout, []string{"Rollout"}) {
		t.Errorf("RL1001 alone: %v, want [Rollout]", rollout)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

const touching = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: a, namespace: shop}
spec:
  strategy:
    canary:
      stableService: a-stable
      canaryService: a-canary
      trafficRouting: {istio: {virtualService: {name: vs.mesh, routes: [primary]}}}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: vs}
spec:
  hosts: [a]
  gateways: [istio-system/public, mesh]
  http:
  - route:
    - destination: {host: b.other.svc.cluster.local}
`

func TestTouchedNamespaces(t *testing.T) {
	t.Parallel()
	g := load.Inputs([]load.Input{{Path: "a.yaml", Data: []byte(touching)}}, load.Options{Namespace: "team"})
	got := touchedNamespaces(g)
	want := []string{"istio-system", "mesh", "other", "shop", "team"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("touched %v, want %v", got, want)
	}
	scopes := lintScopes([]string{"Rollout", "VirtualService"}, got, false)
	if len(scopes) != 2 || !reflect.DeepEqual(scopes[1].Kinds, []string{"VirtualService"}) || scopes[1].Namespaces[0] != "istio-system" {
		t.Errorf("scopes %+v: want the Istio kinds in the root namespace too", scopes)
	}
	if s := lintScopes([]string{"Rollout"}, []string{"x"}, true); len(s) != 1 {
		t.Errorf("explicit namespaces: %+v, want them alone", s)
	}
	if s := lintScopes([]string{"Rollout"}, nil, false); s[0].Namespaces == nil {
		t.Error("no namespace touched reads every namespace")
	}
}

// A local object replaces the live one of the same identity; the others are
// loaded as kubectl get -o yaml prints them.
func TestLiveInputs(t *testing.T) {
	t.Parallel()
	g := load.Inputs([]load.Input{{Path: "a.yaml", Data: []byte(touching)}}, load.Options{Namespace: "mesh"})
	objs := []clusterview.Object{
		{Key: clusterview.Key{Kind: "VirtualService", Namespace: "mesh", Name: "vs"}, JSON: []byte(`{"kind":"VirtualService"}`)},
		{Key: clusterview.Key{Kind: "Rollout", Namespace: "shop", Name: "b"},
			JSON: []byte(`{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"b","namespace":"shop"},"spec":{"replicas":2}}`)},
	}
	in, replaced, err := liveInputs(g, objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(replaced) != 1 || len(in) != 1 || in[0].Path != "cluster:Rollout/shop/b" {
		t.Fatalf("inputs %+v, replaced %v", in, replaced)
	}
	want := "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: b\n  namespace: shop\nspec:\n  replicas: 2\n"
	if string(in[0].Data) != want {
		t.Errorf("live YAML\n%s\nwant\n%s", in[0].Data, want)
	}
}

// Progress appears once reading takes longer than the period, and ends
// with a line saying it is done; a quick read prints nothing.
func TestProgress(t *testing.T) {
	t.Parallel()
	var slow bytes.Buffer
	p := startProgress(&slow, 5*time.Millisecond)
	p.update(clusterview.ListProgress{Objects: 1200, Bytes: 3_400_000, Done: 3, Total: 9})
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		shown := p.shown
		p.mu.Unlock()
		if shown || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	p.stop()
	out := slow.String()
	if !strings.Contains(out, "reading the cluster: 3 of 9 lists, 1200 objects (3.4 MB)") || !strings.HasSuffix(out, ": done\n") {
		t.Errorf("progress:\n%s", out)
	}
	var quick bytes.Buffer
	startProgress(&quick, time.Hour).stop()
	if quick.Len() != 0 {
		t.Errorf("a quick read printed %q", quick.String())
	}
}

func TestClusterFlagsNeedCluster(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"lint", "--kube-context", "x", "a.yaml"},
		{"lint", "--cluster-namespace", "x", "a.yaml"},
		{"plan", "--kubeconfig", "k", "a.yaml"},
	} {
		var out, errw bytes.Buffer
		e := &Env{In: strings.NewReader(""), Out: &out, Err: &errw, Dir: t.TempDir(), Getenv: func(string) string { return "" }}
		if code := e.Run(args); code != ExitFailure || !strings.Contains(errw.String(), "needs --cluster") {
			t.Errorf("%v: exit %d, %q", args, code, errw.String())
		}
	}
	var out, errw bytes.Buffer
	e := &Env{In: strings.NewReader(""), Out: &out, Err: &errw, Dir: t.TempDir(), Getenv: func(string) string { return "" }}
	if code := e.Run([]string{"lint", "--cluster", "--cluster-timeout", "0s", "a.yaml"}); code != ExitFailure || !strings.Contains(errw.String(), "--cluster-timeout must be positive") {
		t.Errorf("zero time-out: exit %d, %q", code, errw.String())
	}
}

func TestOntoLocal(t *testing.T) {
	t.Parallel()
	live := graph.Position{File: "cluster:VirtualService/shop/vs", Line: 17, Column: 9}
	res := &analyzer.Result{Diagnostics: []rules.Diagnostic{
		{RuleID: "RL2005", Pos: live, Path: "spec.http[0].route[0]", Message: "m",
			Object:  graph.ObjectRef{Kind: "VirtualService", Namespace: "shop", Name: "vs"},
			Related: []rules.Related{{File: "cluster:Rollout/shop/cart", Line: 3}, {File: "b.yaml", Line: 15, Column: 7, Message: "Rollout checkout manages this route", Object: graph.ObjectRef{Kind: "Rollout", Name: "checkout"}}},
			Fix:     &rules.Fix{Description: "d", Replacement: "x"}},
		{RuleID: "RL1001", Pos: graph.Position{File: "a.yaml", Line: 1}},
		{RuleID: "RL3001", Pos: graph.Position{File: "cluster:Service/shop/s", Line: 2}},
	}}
	ontoLocal(res)
	d := res.Diagnostics[1]
	if res.Diagnostics[0].RuleID != "RL1001" || d.RuleID != "RL2005" {
		t.Fatalf("order: %s %s", res.Diagnostics[0].RuleID, d.RuleID)
	}
	if d.Pos != (graph.Position{File: "b.yaml", Line: 15, Column: 7}) || d.Object.Name != "checkout" || d.Path != "" || d.Fix.Replacement != "" {
		t.Errorf("moved finding: %+v", d)
	}
	if len(d.Related) != 2 || d.Related[0].File != live.File || d.Related[0].Line != 17 ||
		d.Related[0].Message != "the live VirtualService shop/vs at spec.http[0].route[0]" || d.Related[1].File != "cluster:Rollout/shop/cart" {
		t.Errorf("related: %+v", d.Related)
	}
	if res.Diagnostics[2].Pos.File != "cluster:Service/shop/s" {
		t.Error("a finding with no local location was moved")
	}
}

// A cluster that does not answer is an error naming it (exit 2), not a
// clean lint.
func TestClusterUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	dir := t.TempDir()
	kc := kubeconfigFor(t, dir, server)
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {ports: [{port: 80}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"lint", "plan"} {
		var out, errw bytes.Buffer
		e := &Env{In: strings.NewReader(""), Out: &out, Err: &errw, Dir: dir, Getenv: func(string) string { return "" }}
		code := e.Run([]string{cmd, "--cluster", "--kubeconfig", kc, "--cluster-timeout", "20s", "a.yaml"})
		if code != ExitFailure || !strings.Contains(errw.String(), "cluster at "+server) {
			t.Errorf("%s: exit %d, stderr %q", cmd, code, errw.String())
		}
	}
}

// --kube-context picks a context of the kubeconfig, with its namespace.
func TestRestConfigContext(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: a, cluster: {server: "https://a.example:6443"}}, {name: b, cluster: {server: "https://b.example:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: dev, context: {cluster: a, user: u}}, {name: prod, context: {cluster: b, user: u, namespace: shop}}]
current-context: dev
`
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ context, host, wantContext, ns string }{
		{"", "https://a.example:6443", "dev", "default"},
		{"prod", "https://b.example:6443", "prod", "shop"},
	} {
		kt, err := restConfig(&Env{}, p, c.context, "hint")
		if err != nil {
			t.Fatal(err)
		}
		if kt.rest.Host != c.host || kt.context != c.wantContext || kt.namespace != c.ns {
			t.Errorf("--kube-context %q: host %s context %s namespace %s", c.context, kt.rest.Host, kt.context, kt.namespace)
		}
	}
	if _, err := restConfig(&Env{}, p, "nope", "hint"); err == nil || !strings.Contains(err.Error(), `context "nope" does not exist`) {
		t.Errorf("unknown context: %v", err)
	}
}
