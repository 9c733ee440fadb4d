package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWebhookFlagErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"webhook"}, "--cert-file and --key-file are required"},
		{[]string{"webhook", "--cert-file=c", "--key-file=k", "--enforce=block"}, `--enforce: unknown enforcement "block"`},
		{[]string{"webhook", "--cert-file=c", "--key-file=k", "--failure-mode=maybe"}, `--failure-mode: unknown failure mode "maybe"`},
		{[]string{"webhook", "--cert-file=/nonexistent/c", "--key-file=/nonexistent/k", "--cluster-view=false"}, "reading serving certificate"},
		{[]string{"webhook", "--log-format=xml"}, `unknown format "xml"`},
		// --config-poll 0 (reloading off) passes the checks: the error is the next one.
		{[]string{"webhook", "--cert-file=/nonexistent/c", "--key-file=/nonexistent/k", "--cluster-view=false", "--config-poll=0"}, "reading serving certificate"},
	}
	for _, c := range cases {
		var out, errw bytes.Buffer
		code := Main(c.args, strings.NewReader(""), &out, &errw)
		if code != ExitFailure || !strings.Contains(errw.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errw.String(), c.want)
		}
	}
}

func TestWebhookNumericFlagErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ flag, want string }{
		{"--max-concurrent-reviews=0", "--max-concurrent-reviews must be positive"},
		{"--max-queued-reviews=-1", "--max-queued-reviews must be positive"},
		{"--shutdown-delay=-1s", "--shutdown-delay must not be negative"},
		{"--config-poll=-1s", "--config-poll -1s: the interval must not be negative (0 turns config reloading off)"},
		{"--max-body-bytes=0", "--max-body-bytes 0: the limit must be a positive number of bytes (default 7340032, 7 MiB)"},
		{"--max-body-bytes=-1", "--max-body-bytes -1: the limit must be a positive number of bytes"},
	} {
		var out, errw bytes.Buffer
		code := Main([]string{"webhook", "--cert-file=c", "--key-file=k", c.flag}, strings.NewReader(""), &out, &errw)
		if code != ExitFailure || !strings.Contains(errw.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", c.flag, code, errw.String(), c.want)
		}
	}
}

// kubeconfigFor writes a kubeconfig whose only cluster is server.
func kubeconfigFor(t *testing.T, dir, server string) string {
	t.Helper()
	p := filepath.Join(dir, strings.NewReplacer(":", "_", "/", "_").Replace(server))
	data := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " + server + "}\n" +
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRestConfigPrecedence is not parallel: client-go reads HOME and the
// in-cluster variables from the process environment.
func TestRestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	homeCfg := kubeconfigFor(t, dir, "https://home.example:6443")
	if err := os.Rename(homeCfg, filepath.Join(home, ".kube", "config")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	env := kubeconfigFor(t, dir, "https://env.example:6443")
	flag := kubeconfigFor(t, dir, "https://flag.example:6443")

	check := func(name, kubeconfig, wantHost, wantFrom string) {
		t.Helper()
		kt, err := restConfig(&Env{}, kubeconfig, "", "hint")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if kt.rest.Host != wantHost || !strings.Contains(kt.source, wantFrom) || kt.context != "x" {
			t.Errorf("%s: host %q from %q context %q; want %q from %q, context x", name, kt.rest.Host, kt.source, kt.context, wantHost, wantFrom)
		}
	}
	t.Setenv("KUBECONFIG", env)
	check("flag wins", flag, "https://flag.example:6443", "--kubeconfig")
	check("then $KUBECONFIG", "", "https://env.example:6443", "$KUBECONFIG")
	t.Setenv("KUBECONFIG", "")
	check("then ~/.kube/config", "", "https://home.example:6443", filepath.Join(home, ".kube", "config"))
	if err := os.Remove(filepath.Join(home, ".kube", "config")); err != nil {
		t.Fatal(err)
	}
	if _, err := restConfig(&Env{}, "", "", "use --cluster-view=false"); err == nil || !strings.Contains(err.Error(), "--cluster-view=false") {
		t.Errorf("no cluster anywhere: err %v", err)
	}
}

// TestWebhookConfigPollHelp: --config-poll 0 is accepted and turns config
// reloading off, and the help says so (docs/webhook.md too).
func TestWebhookConfigPollHelp(t *testing.T) {
	t.Parallel()
	var out, errw bytes.Buffer
	Main([]string{"webhook", "--help"}, strings.NewReader(""), &out, &errw)
	if help := out.String() + errw.String(); !strings.Contains(help, "0 turns reloading off") {
		t.Errorf("webhook --help does not say what --config-poll 0 does:\n%s", help)
	}
}
