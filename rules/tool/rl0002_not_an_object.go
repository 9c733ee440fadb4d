package tool

import "github.com/rolloutlint/rolloutlint/rules"

// NoKind reports documents that are not Kubernetes objects.
var NoKind = &rules.Rule{
	ID: "RL0002", Name: "not-an-object", Severity: rules.Error, Source: rules.SourceGo, Tags: []string{"input"},
	Summary: "A document has no apiVersion, kind or metadata.name, or is not a mapping.",
	Doc: rules.Doc{
		Why: `Every document must be a Kubernetes object: a mapping with \'apiVersion\', \'kind\' and
\'metadata.name\'. Without them the API server rejects it and no other object can reference it.
Documents that are only comments, and empty documents, are fine. So are, without a name, the
files a command-line tool reads rather than the API server: an IstioOperator for \'istioctl
install -f\', a kubeconfig (\'v1\' \'Config\'), a kind or k3d cluster, kubeadm's and the
components' configuration files (\'*.config.k8s.io\'), an audit policy, a Skaffold config.`,
		Bad: `
metadata:
  name: checkout
spec:
  replicas: 3
`,
		Good: `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
spec:
  replicas: 3
`,
	},
	Since: "v0.1.0",
	Run:   fromProblems,
}
