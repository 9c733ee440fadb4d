#!/usr/bin/env bash
# ApplicationSet conformance (make conformance-appset): Argo CD's own
# ApplicationSet code (conformance/appset, a module of its own) generates
# the Applications of every ApplicationSet fixture, and
# internal/appsetconformance compares them with rolloutlint's expansion
# (model/units). Fails on any mismatch. See docs/repositories.md "How the
# expansion is judged".
#
# The harness binary is cached under $ROLLOUTLINT_BUILD (default
# $HOME/.cache/rolloutlint-build)/appset-conformance/, keyed by the hash of
# the harness's sources, go.mod and go.sum: a rerun with no harness change
# does not build.
#
#   RECORD=1   also write the observations into testdata/conformance/appset/
set -euo pipefail
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
began=$SECONDS
cache="${ROLLOUTLINT_BUILD:-$HOME/.cache/rolloutlint-build}/appset-conformance"
mkdir -p "$cache"
argocd="$(sed -n 's/^\tgithub.com\/argoproj\/argo-cd\/v3 \(v[^ ]*\)$/\1/p' conformance/appset/go.mod)"
stamp="$(cat conformance/appset/*.go conformance/appset/go.mod conformance/appset/go.sum | sha256sum | cut -c1-16)"
bin="$cache/appset-$argocd-$stamp"
if [[ ! -x "$bin" ]]; then
  echo "== building the harness (Argo CD $argocd; cold: module download and compile)"
  (cd conformance/appset && CGO_ENABLED=0 go build -trimpath -o "$bin.tmp.$$" .)
  mv "$bin.tmp.$$" "$bin"
  # one harness a version is enough (~140 MB each): drop older builds
  find "$cache" -maxdepth 1 -name 'appset-*' ! -name '*.tmp.*' ! -name "$(basename "$bin")" -type f -delete
  echo "   built in $((SECONDS - began)) s"
else
  echo "== harness (Argo CD $argocd): cached $bin"
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# name | repository root | ApplicationSet files (relative to the root)
fixtures=(
  "appofapps|testdata/repos/appofapps|appsets/list.yaml appsets/services.yaml"
  "appsets|testdata/repos/appsets|appsets/shop.yaml"
  "edge-cases|testdata/conformance/appset/repo|sets/combined.yaml sets/directories.yaml sets/files.yaml sets/functions.yaml sets/lists.yaml sets/patch.yaml sets/selectors.yaml"
)
for f in "${fixtures[@]}"; do
  IFS='|' read -r name repo files <<<"$f"
  # shellcheck disable=SC2086 # files is a list
  "$bin" -argocd "$argocd" -repo "$repo" $files >"$out/$name.json" 2>"$out/$name.log" || {
    cat "$out/$name.log" >&2
    echo "harness failed on $name" >&2
    exit 1
  }
done
if [[ "${RECORD:-}" == 1 ]]; then
  cp "$out"/*.json testdata/conformance/appset/
  echo "== recorded into testdata/conformance/appset/"
fi
echo "== comparing with rolloutlint's expansion"
APPSET_OBSERVATIONS="$out" go test -count=1 -v -run '^TestObservations$' ./internal/appsetconformance/
echo "== ApplicationSet conformance took $((SECONDS - began)) s"
