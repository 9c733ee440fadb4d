#!/usr/bin/env bash
# make conformance: build the xDS conformance harness (conformance/xds, a Go
# module of its own) against every supported Istio version, run every
# scenario of testdata/xds-conformance/scenarios against the real istiod push
# machinery, and compare each push with `rolloutlint plan`'s prediction
# (table predicted | observed | match). Fails on any mismatch, and on any
# version that could not be built (reported, never skipped as passing).
#
#   XDS_VERSIONS="1.31.0 1.30.3 1.28.2"  versions to run (default: all)
#   ISTIO_SRC_1_30=/path ISTIO_SRC_1_28=/path
#       checkouts of the public istio repository at the release tag (1.30.3,
#       1.28.2): the module proxy refuses those versions, so they are built
#       from source through a `replace istio.io/istio => <dir>` in a go.mod
#       generated outside the repository. ISTIO_SRC_x_COMMIT names the commit
#       when the tree is not a git checkout.
#   XDS_RECORD=1   copy the fresh observations into testdata/xds-conformance/<version>/
#   XDS_SCENARIOS="a b"  run only these scenarios
#   XDS_OUT=/dir   keep the observations in /dir/<version>/ (default: a fresh
#       temporary directory per run, printed at the end, so that two runs at
#       once never write into each other's observations)
#
# Builds are cached under $HOME/.cache/rolloutlint-build/xds-conformance-<version>.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3
root=$(pwd)
cache_root=${ROLLOUTLINT_BUILD_CACHE:-$HOME/.cache/rolloutlint-build}
versions=${XDS_VERSIONS:-"1.31.0 1.30.3 1.28.2"}

# The module proxy serves 1.31.0 as this pseudo-version (conformance/xds/go.mod).
proxy_module_1_31_0=$(grep -o "istio.io/istio v[^ ]*" conformance/xds/go.mod | head -1 | cut -d" " -f2)

model_of() { echo "${1%.*}"; }

# Dependencies pinned by the release trees that the module proxy refuses, and
# the served neighbour each is replaced with (the harness builds and the
# recorded behaviour is istiod's own code; these modules are API types):
# - 1.28.2: the go-control-plane root module (holds no package istio imports);
# - 1.30.3: go-control-plane envoy/contrib, agentgateway api and istio client-go
#   pseudo-versions, replaced by the ones 1.31.0 pins.
substitutions=(
  "github.com/envoyproxy/go-control-plane v0.13.5-0.20251013182109-58535202ab44 => github.com/envoyproxy/go-control-plane v0.13.5-0.20251024222203-75eaa193e329"
  "github.com/agentgateway/agentgateway/api v0.0.0-20260506232448-6ae4ab07bb06 => github.com/agentgateway/agentgateway/api v0.0.0-20260501213430-773586679f1c"
  "github.com/envoyproxy/go-control-plane/contrib v1.36.1-0.20260409083702-98966259b99a => github.com/envoyproxy/go-control-plane/contrib v1.36.1-0.20260713214202-ca8ce173c36f"
  "github.com/envoyproxy/go-control-plane/envoy v1.37.1-0.20260409083702-98966259b99a => github.com/envoyproxy/go-control-plane/envoy v1.37.1-0.20260713214202-ca8ce173c36f"
  "istio.io/client-go v1.30.3-0.20260710004929-5146bfac9969 => istio.io/client-go v1.31.0-rc.0.0.20260824155257-512e1cfc6c15"
)

scenarios=()
if [ -n "${XDS_SCENARIOS:-}" ]; then
  for s in $XDS_SCENARIOS; do scenarios+=("testdata/xds-conformance/scenarios/$s.yaml"); done
else
  for f in testdata/xds-conformance/scenarios/*.yaml; do scenarios+=("$f"); done
fi

make -s build
mkdir -p "$cache_root"

# build_harness VERSION → prints the binary path, or fails with a reason.
build_harness() {
  local v=$1 dir="$cache_root/xds-conformance-$1" src var
  mkdir -p "$dir"
  local stamp; stamp=$(cat conformance/xds/*.go conformance/xds/go.mod conformance/xds/go.sum | sha256sum | cut -c1-16)
  if [ "$v" = 1.31.0 ]; then
    if [ ! -x "$dir/xdsconformance-$stamp" ]; then
      (cd conformance/xds && go build -o "$dir/.xdsconformance.tmp.$$" .) >&2
      mv "$dir/.xdsconformance.tmp.$$" "$dir/xdsconformance-$stamp"
    fi
    echo "$dir/xdsconformance-$stamp"
    return
  fi
  var="ISTIO_SRC_$(echo "${v%.*}" | tr . _)"
  src=${!var:-}
  if [ -z "$src" ] || [ ! -f "$src/go.mod" ]; then
    echo "Istio $v: no source tree (set $var to a checkout of the istio repository at tag $v)" >&2
    return 1
  fi
  src=$(cd "$src" && pwd)
  stamp=$(printf '%s %s' "$stamp" "$src" | sha256sum | cut -c1-16)
  if [ ! -x "$dir/xdsconformance-$stamp" ]; then
    local mod="$dir/mod-$stamp.tmp.$$"
    rm -rf "$mod"; mkdir -p "$mod"
    cp conformance/xds/*.go "$mod/"
    # The go.mod is generated here, outside the repository: istio from the
    # source tree, every other module from the module proxy, checked against
    # the tree's own go.sum.
    {
      echo "module github.com/rolloutlint/rolloutlint/conformance/xds"
      echo
      echo "go 1.26.10"
      echo
      echo "require istio.io/istio v0.0.0-00010101000000-000000000000"
      echo
      echo "replace istio.io/istio => $src"
      # Pseudo-versions the tree pins that the module proxy refuses: use the
      # served neighbour (see substitutions below).
      for sub in "${substitutions[@]}"; do
        if grep -qF "${sub%% => *}" "$src/go.mod"; then echo "replace $sub"; fi
      done
    } > "$mod/go.mod"
    cp "$src/go.sum" "$mod/go.sum"
    (cd "$mod" && go mod tidy >&2 && go build -o xdsconformance . >&2)
    mv "$mod/xdsconformance" "$dir/xdsconformance-$stamp"
    rm -rf "$mod"
  fi
  echo "$dir/xdsconformance-$stamp"
}

commit_of() {
  local v=$1
  if [ "$v" = 1.31.0 ]; then echo "${proxy_module_1_31_0##*-}"; return; fi
  local var="ISTIO_SRC_$(echo "${v%.*}" | tr . _)"
  local cvar="${var}_COMMIT"
  if [ -n "${!cvar:-}" ]; then echo "${!cvar}"; return; fi
  git -C "${!var}" rev-parse HEAD 2>/dev/null || echo unknown
}

out_root=${XDS_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/xds-conformance.XXXXXX")}
status=0
summary=()
for v in $versions; do
  echo "== Istio $v"
  start=$(date +%s)
  if ! bin=$(build_harness "$v"); then
    summary+=("Istio $v: NOT RUN (no build; see above)")
    status=1
    continue
  fi
  built=$(date +%s)
  out="$out_root/$v"
  rm -rf "$out.tmp"; mkdir -p "$out.tmp"
  module=$proxy_module_1_31_0
  [ "$v" = 1.31.0 ] || module="source tree"
  if ! "$bin" -rolloutlint bin/rolloutlint -root "$root" -istio-version "$v" -model "$(model_of "$v")" \
      -istio-module "$module" -istio-commit "$(commit_of "$v")" -out "$out.tmp" "${scenarios[@]}"; then
    summary+=("Istio $v: harness FAILED")
    status=1
    continue
  fi
  rm -rf "$out"; mv "$out.tmp" "$out"
  ran=$(date +%s)
  echo "Istio $v: build $((built - start)) s, scenarios $((ran - built)) s"
  if [ -n "${XDS_RECORD:-}" ]; then
    mkdir -p "testdata/xds-conformance/$v"
    cp "$out"/*.json "testdata/xds-conformance/$v/"
  fi
  if go run ./internal/tools/xdsconform -all -root "$root" "$out"; then
    summary+=("Istio $v: every push matches")
  else
    summary+=("Istio $v: MISMATCH")
    status=1
  fi
done
echo "== summary (observations in $out_root)"
printf '%s\n' "${summary[@]}"
exit $status
