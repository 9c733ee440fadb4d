#!/usr/bin/env bash
# Installs the Mermaid parser (npm packages mermaid and jsdom, pinned) for
# scripts/mermaid-parse.mjs, which the plan tests use to check that
# `rolloutlint plan --format mermaid` output parses. Idempotent; the install
# is built in a temporary directory and renamed into place, so concurrent
# runs never see half an install. Prints the directory (MERMAID_DIR).
set -euo pipefail
MERMAID_VERSION=12.3.0 JSDOM_VERSION=26.1.0
cache="${ROLLOUTLINT_BUILD_CACHE:-$HOME/.cache/rolloutlint-build}"
dir="$cache/mermaid-$MERMAID_VERSION-jsdom-$JSDOM_VERSION"
if [ -f "$dir/node_modules/mermaid/package.json" ] && [ -f "$dir/node_modules/jsdom/package.json" ]; then
	echo "$dir"
	exit 0
fi
command -v npm >/dev/null || { echo "install-mermaid: npm is not installed" >&2; exit 1; }
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/tmp-mermaid-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
printf '{"name":"rolloutlint-mermaid-check","version":"1.0.0","private":true}\n' >"$tmp/package.json"
(cd "$tmp" && npm install --no-audit --no-fund --loglevel=error "mermaid@$MERMAID_VERSION" "jsdom@$JSDOM_VERSION" >&2)
mv "$tmp" "$dir" 2>/dev/null || [ -d "$dir" ] # another run may have won the rename
trap - EXIT
echo "$dir"
