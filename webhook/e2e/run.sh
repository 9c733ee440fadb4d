#!/usr/bin/env bash
# Webhook end-to-end test against a real kube-apiserver and etcd on loopback
# (make test-webhook-e2e): see scripts/test-kube-e2e.sh, which provides the
# binaries and runs the Go test.
set -euo pipefail
exec "$(dirname "$0")/../../scripts/test-kube-e2e.sh" ./webhook/e2e/
