#!/usr/bin/env bash
# Argo Rollouts conformance: every plan scenario bundle through the real
# controller on a real kube-apiserver and etcd, compared state by state with
# `rolloutlint plan --format json` (make conformance-argo; docs/plan.md "Checked against").
#
# Builds, cached outside the repository: kube-apiserver
# (webhook/e2e/build-kube-apiserver.sh) and the rollouts-controller
# (build-rollouts-controller.sh), both from the Go module proxy; etcd comes
# from Debian's etcd-server when missing. The test runs in a network
# namespace of its own: the controller's metrics and health servers listen on
# every interface, and there no one else can reach them.
#
#   SCENARIOS=host-level,bluegreen   run only these bundles
#   RECORD=1                         rewrite testdata/conformance/argo/observed
#   CONFORMANCE_DIR=DIR              keep logs (etcd, kube-apiserver, controller) there
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
began=$SECONDS
cache="${ROLLOUTLINT_BUILD:-$HOME/.cache/rolloutlint-build}"
mkdir -p "$cache"
export ARGO_ROLLOUTS_VERSION="${ARGO_ROLLOUTS_VERSION:-v1.10.2}"

etcd_bin="$(command -v etcd || true)"
if [[ -z "$etcd_bin" ]]; then
  echo "== installing etcd-server (Debian)"
  if [[ $(id -u) -eq 0 ]]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
  $sudo systemctl stop etcd 2>/dev/null || $sudo service etcd stop 2>/dev/null || true
  etcd_bin="$(command -v etcd)"
fi
echo "== etcd: $("$etcd_bin" --version | head -1)"

build() { # name script
  local log="$cache/$1-build.log" out
  if ! out="$("$2" 2>"$log")"; then
    tail -40 "$log" >&2
    echo "$1 build failed (log: $log)" >&2
    return 1
  fi
  echo "$out"
}
echo "== kube-apiserver (cached build, or ~10 CPU-minutes from the module proxy)"
apiserver_bin="$(build kube-apiserver webhook/e2e/build-kube-apiserver.sh)"
echo "   $apiserver_bin ($((SECONDS - began)) s so far)"
echo "== rollouts-controller $ARGO_ROLLOUTS_VERSION (cached build, or ~8 CPU-minutes from the module proxy)"
controller_bin="$(build "rollouts-controller-$ARGO_ROLLOUTS_VERSION" conformance/argo/build-rollouts-controller.sh)"
echo "   $controller_bin ($((SECONDS - began)) s so far)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "== rolloutlint and the harness"
go build -o "$work/rolloutlint" ./cmd/rolloutlint
(cd conformance/argo && go test -c -o "$work/argo.test" .)
# The CRDs ship in the modules the proxy serves: the Rollout CRDs with
# argo-rollouts, Istio's with istio.io/api (the version rolloutlint's go.mod uses).
argo_dir="$(cd conformance/argo && go list -m -f '{{.Dir}}' github.com/argoproj/argo-rollouts)"
istio_ver="$(go list -m -f '{{.Version}}' istio.io/api)"
istio_dir="$(go mod download -json "istio.io/api@$istio_ver" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
echo "   ($((SECONDS - began)) s so far)"

record=""
if [[ "${RECORD:-}" == 1 ]]; then record="$repo/testdata/conformance/argo/observed"; fi
export ETCD="$etcd_bin" KUBE_APISERVER="$apiserver_bin" ROLLOUTS_CONTROLLER="$controller_bin" \
  ROLLOUTLINT="$work/rolloutlint" ARGO_CRDS="$argo_dir/manifests/crds" \
  ISTIO_CRDS="$istio_dir/kubernetes/customresourcedefinitions.gen.yaml" REPO="$repo" RECORD="$record"
# Runs are mostly waiting (pauses, scale-down delays): eight at a time.
run=("$work/argo.test" -test.v -test.timeout 20m -test.parallel 8 -test.run TestConformance)
echo "== conformance (network namespace of its own)"
if unshare --net true 2>/dev/null; then
  unshare --net sh -c 'ip link set lo up && exec "$@"' sh "${run[@]}"
elif [[ "${ARGO_CONFORMANCE_HOST_NETWORK:-}" == 1 ]]; then
  echo "   unshare --net is not permitted here; ARGO_CONFORMANCE_HOST_NETWORK=1: running in the host network"
  "${run[@]}"
else
  echo "unshare --net is not permitted (needs root or user namespaces): the controller's servers" >&2
  echo "would listen on every interface. Set ARGO_CONFORMANCE_HOST_NETWORK=1 to run anyway." >&2
  exit 1
fi
echo "== Argo conformance took $((SECONDS - began)) s"
