#!/usr/bin/env bash
# Builds the Argo Rollouts controller (cmd/rollouts-controller) from the Go
# module proxy into a cache directory outside the repository, keyed by
# version, and prints the binary's path. Reruns with a cached binary return at
# once.
#
# argo-rollouts pins its Kubernetes modules with replace directives, which
# `go install module@version` ignores, so the build runs in a generated
# wrapper module that requires argo-rollouts and carries the same replaces,
# read from the module's own go.mod as the proxy serves it.
#
#   ARGO_ROLLOUTS_VERSION  github.com/argoproj/argo-rollouts version (default v1.10.2,
#                          the version rolloutlint's go.mod uses for the API types)
#   ROLLOUTLINT_BUILD      build cache root (default $HOME/.cache/rolloutlint-build)
set -euo pipefail
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
ver="${ARGO_ROLLOUTS_VERSION:-v1.10.2}"
root="${ROLLOUTLINT_BUILD:-$HOME/.cache/rolloutlint-build}"
dir="$root/rollouts-controller-$ver"
out="$dir/rollouts-controller"
if [[ -x "$out" ]]; then echo "$out"; exit 0; fi

mkdir -p "$root"
# A private module directory per build: two engineers building at once do not
# share go.mod edits; the binary is renamed into place atomically at the end.
mod="$(mktemp -d "$root/rollouts-controller-$ver.build.XXXXXX")"
trap 'rm -rf "$mod"' EXIT
cd "$mod"
pkg=github.com/argoproj/argo-rollouts
gomod="$(GOFLAGS=-mod=mod go mod download -json "$pkg@$ver" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
[[ -f "$gomod" ]] || { echo "no go.mod for $pkg@$ver from the module proxy" >&2; exit 1; }
{
  echo "module rolloutscontrollerbuild"
  echo
  echo "go $(go mod edit -json "$gomod" | sed -n 's/^[[:space:]]*"Go": "\(.*\)",*$/\1/p')"
  echo
  echo "require $pkg $ver"
} > go.mod
# Every replace of argo-rollouts' go.mod, as old[@v]=new[@v].
go mod edit -json "$gomod" | awk '
  /"Replace": \[/ {inrep=1; next}
  inrep && /^\t\]/ {inrep=0}
  inrep && /"Old": \{/ {side="old"; p=""; v=""}
  inrep && /"New": \{/ {side="new"; p=""; v=""}
  inrep && /"Path":/ {gsub(/.*"Path": "|",?$/, ""); p=$0}
  inrep && /"Version":/ {gsub(/.*"Version": "|",?$/, ""); v=$0}
  inrep && /^\t\t\t\}/ {
    s = p; if (v != "") s = s "@" v
    if (side == "old") old = s; else print old "=" s
  }' > replaces.txt
while IFS= read -r r; do go mod edit -replace "$r"; done < replaces.txt
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/argoproj/argo-rollouts/cmd/rollouts-controller"
GO
GOFLAGS=-mod=mod go get "$pkg/cmd/rollouts-controller@$ver" >&2
mkdir -p "$dir"
nice -n 10 env CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X $pkg/utils/version.version=${ver#v}" \
  -o "$out.tmp.$$" "$pkg/cmd/rollouts-controller" >&2
mv "$out.tmp.$$" "$out"
echo "$out"
