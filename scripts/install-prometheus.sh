#!/usr/bin/env bash
# Installs the Debian `prometheus` package when the binary is missing, so the
# live dry-run test (live/promcheck) runs against a real server. The test
# starts the binary itself on a free loopback port; the package's systemd
# service is not used. Idempotent: does nothing when prometheus is on PATH.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
	echo "prometheus already installed: $(prometheus --version 2>&1 | head -n1)"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo -n"
	else
		echo "install-prometheus: not root and no sudo; the live Prometheus test will be skipped" >&2
		exit 0
	fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends prometheus
echo "installed: $(prometheus --version 2>&1 | head -n1)"
