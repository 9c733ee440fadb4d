#!/usr/bin/env bash
# End-to-end tests against a real kube-apiserver and etcd on loopback
# (internal/kubetest starts them): installs etcd from Debian's etcd-server
# when missing, builds kube-apiserver from the Go module proxy (cached outside
# the repo, see webhook/e2e/build-kube-apiserver.sh), then runs go test on the
# packages given (default: every e2e package), which start and stop their
# processes by PID.
#   scripts/test-kube-e2e.sh ./webhook/e2e/ ./cmd/rolloutlint/e2e/
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
began=$SECONDS
pkgs=("$@")
if [[ ${#pkgs[@]} -eq 0 ]]; then pkgs=(./webhook/e2e/ ./cmd/rolloutlint/e2e/); fi

etcd_bin="$(command -v etcd || true)"
if [[ -z "$etcd_bin" ]]; then
  echo "== installing etcd-server (Debian)"
  if [[ $(id -u) -eq 0 ]]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
  # The package starts a system etcd on the default ports; the tests run their own.
  $sudo systemctl stop etcd 2>/dev/null || $sudo service etcd stop 2>/dev/null || true
  etcd_bin="$(command -v etcd)"
fi
echo "== etcd: $("$etcd_bin" --version | head -1)"

echo "== kube-apiserver (cached build, or ~10 CPU-minutes from the module proxy)"
log="${ROLLOUTLINT_BUILD:-$HOME/.cache/rolloutlint-build}/kube-apiserver-build.log"
mkdir -p "$(dirname "$log")"
if ! apiserver_bin="$(webhook/e2e/build-kube-apiserver.sh 2>"$log")"; then
  tail -40 "$log"
  echo "kube-apiserver build failed (log: $log)" >&2
  exit 1
fi
echo "   $apiserver_bin ($((SECONDS - began)) s so far)"

echo "== go test ${pkgs[*]}"
KUBE_APISERVER="$apiserver_bin" ETCD="$etcd_bin" go test -count=1 -v -timeout 15m "${pkgs[@]}"
echo "== e2e took $((SECONDS - began)) s"
