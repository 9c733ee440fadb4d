#!/usr/bin/env bash
# Builds kube-apiserver from the Go module proxy into a cache directory outside
# the repository, keyed by version, and prints the binary's path. Reruns with a
# cached binary return at once.
#
#   KUBE_VERSION      k8s.io/kubernetes version (default v1.37.2)
#   ROLLOUTLINT_BUILD build cache root (default $HOME/.cache/rolloutlint-build)
set -euo pipefail
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
ver="${KUBE_VERSION:-v1.37.2}"
staging="v0.${ver#v1.}"
root="${ROLLOUTLINT_BUILD:-$HOME/.cache/rolloutlint-build}"
out="$root/kube-apiserver-$ver/kube-apiserver"
if [[ -x "$out" ]]; then echo "$out"; exit 0; fi

mod="$root/kube-apiserver-$ver/module"
mkdir -p "$mod"
cd "$mod"
# The staging modules are published under k8s.io/<name> with v0.x tags; the
# kubernetes module itself requires them at v0.0.0, so each needs a replace.
modules=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
  cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt
  kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet
  metrics mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller)
{
  echo "module kubeapiserverbuild"
  echo
  echo "go 1.26.10"
  echo
  echo "require k8s.io/kubernetes $ver"
  echo
  echo "replace ("
  for m in "${modules[@]}"; do echo "	k8s.io/$m => k8s.io/$m $staging"; done
  echo ")"
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
# Drop replaces for staging names that do not exist at this version.
for m in "${modules[@]}"; do
  if ! GOFLAGS=-mod=mod go list -m -json "k8s.io/$m@$staging" >/dev/null 2>&1; then
    go mod edit -dropreplace "k8s.io/$m"
  fi
done
GOFLAGS=-mod=mod go get "k8s.io/kubernetes/cmd/kube-apiserver@$ver" >&2
nice -n 10 go build -trimpath -o "$out.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2
mv "$out.tmp" "$out"
echo "$out"
