package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"
)

// kubeTarget is the cluster a command talks to, and where that came from.
type kubeTarget struct {
	rest *rest.Config
	// source says which of --kubeconfig, $KUBECONFIG, the in-cluster service
	// account or ~/.kube/config it is.
	source string
	// context is the kubeconfig context used ("" in a cluster); namespace
	// the context's namespace (the service account's in a cluster), "" when
	// it sets none.
	context, namespace string
}

// inClusterNamespace is where a pod's service account namespace is mounted.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// restConfig finds the cluster as kubectl and controller-runtime do: the
// --kubeconfig file, else $KUBECONFIG (a list of files, merged), else the
// in-cluster service account, else ~/.kube/config; kubeContext, when set,
// picks a context of the kubeconfig instead of its current one. hint says
// what to do when there is no cluster at all.
func restConfig(e *Env, kubeconfig, kubeContext, hint string) (*kubeTarget, error) {
	load := func(rules *clientcmd.ClientConfigLoadingRules, what string) (*kubeTarget, error) {
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
		rc, err := cc.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		t := &kubeTarget{rest: rc, source: what, context: kubeContext}
		if raw, err := cc.RawConfig(); err == nil && t.context == "" {
			t.context = raw.CurrentContext
		}
		// The context's namespace, "default" when it sets none.
		if ns, _, err := cc.Namespace(); err == nil {
			t.namespace = ns
		}
		return t, nil
	}
	if kubeconfig != "" {
		return load(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, "--kubeconfig "+kubeconfig)
	}
	if env := e.getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return load(&clientcmd.ClientConfigLoadingRules{Precedence: e.paths(filepath.SplitList(env))}, "$KUBECONFIG "+env)
	}
	rc, inClusterErr := rest.InClusterConfig()
	if inClusterErr == nil {
		if kubeContext != "" {
			return nil, fmt.Errorf("--kube-context %s: running in a cluster without a kubeconfig (give one with --kubeconfig)", kubeContext)
		}
		t := &kubeTarget{rest: rc, source: "in-cluster service account"}
		if data, err := os.ReadFile(inClusterNamespace); err == nil {
			t.namespace = strings.TrimSpace(string(data))
		}
		return t, nil
	}
	home := filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
	if _, err := os.Stat(home); err == nil {
		return load(&clientcmd.ClientConfigLoadingRules{ExplicitPath: home}, home)
	}
	return nil, fmt.Errorf("no cluster: no --kubeconfig, no $KUBECONFIG, not in a cluster (%w), no %s (%s)",
		inClusterErr, home, hint)
}
