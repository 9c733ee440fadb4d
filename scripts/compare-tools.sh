#!/usr/bin/env bash
# Times rolloutlint against what users run today, on the same generated corpus:
#   istioctl analyze --use-kube=false (its analyzers only), conftest test --combine with
#   an equivalent Rego policy set (scripts/bench/conftest-policy), and kubeconform
#   (schema parsing only) as the throughput floor, and internal/tools/yamlfloor (yaml.v3
#   parsing the files into nodes, nothing more: the floor issue 21's target is measured against).
# The other tools are built from the Go module proxy into $TOOLS_DIR (never committed).
# Usage: scripts/compare-tools.sh [ROLLOUTS]   (default 9000, about 50,000 objects)
#        PROFILE=gateways scripts/compare-tools.sh   (the generator's second shape; default mixed)
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3
N=${1:-9000}
TOOLS_DIR=${TOOLS_DIR:-$HOME/.cache/rolloutlint-bench/bin}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$TOOLS_DIR"

build_tool() { # name module@version
	if [ ! -x "$TOOLS_DIR/$1" ]; then
		echo "building $1 ($2) ..." >&2
		GOBIN="$TOOLS_DIR" GOFLAGS=-mod=mod nice go install "$2" >&2
	fi
}
build_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0
build_tool conftest github.com/open-policy-agent/conftest@v0.71.1
build_tool istioctl istio.io/istio/istioctl/cmd/istioctl@v0.0.0-20260827124520-eed52ebb66ad

make -s build
go build -o "$WORK/yamlfloor" ./internal/tools/yamlfloor
go run ./internal/tools/gencorpus -rollouts "$N" -profile "${PROFILE:-mixed}" -out "$WORK/corpus"
objects=$(grep -c '^kind:' "$WORK"/corpus/*.yaml | awk -F: '{s+=$2} END {print s}')
echo "corpus: $N rollouts, $objects objects, $(du -sh "$WORK/corpus" | cut -f1)"

LIMIT=${LIMIT:-300} # seconds one run of a tool may take
measure() { # label command...
	local label=$1; shift
	local best_wall=999999 best_rss=0 best_cpu=0
	for _ in 1 2 3; do
		if ! /usr/bin/time -f '%e %M %U %S' -o "$WORK/time" timeout "$LIMIT" "$@" > /dev/null 2>&1; then
			if [ "$(tail -c 4 "$WORK/time" 2>/dev/null)" = "" ] || grep -q "status 124" "$WORK/time"; then
				printf '| %s | over %s s (stopped) | - |\n' "$label" "$LIMIT"
				return
			fi
		fi
		read -r wall rss user sys < <(tail -1 "$WORK/time")
		if awk "BEGIN {exit !($wall < $best_wall)}"; then
			best_wall=$wall; best_rss=$rss; best_cpu=$(awk "BEGIN {print $user + $sys}")
		fi
	done
	printf '| %s | %s s | %s s | %d MB |\n' "$label" "$best_wall" "$best_cpu" "$((best_rss / 1024))"
}

echo
echo "| tool | wall (best of 3) | CPU (user+sys) | peak RSS |"
echo "|---|---|---|---|"
measure "rolloutlint lint" ./bin/rolloutlint lint --color never "$WORK/corpus"
measure "istioctl analyze --use-kube=false" "$TOOLS_DIR/istioctl" analyze --use-kube=false -A "$WORK/corpus"
measure "conftest test --combine" "$TOOLS_DIR/conftest" test --combine -p scripts/bench/conftest-policy "$WORK/corpus"
measure "yaml.v3 parse only (internal/tools/yamlfloor)" "$WORK/yamlfloor" "$WORK/corpus"
measure "kubeconform (schemas skipped)" "$TOOLS_DIR/kubeconform" -ignore-missing-schemas -schema-location "$WORK/none" -summary "$WORK/corpus"
go run ./internal/tools/gencorpus -rollouts 2 -out "$WORK/small"
measure "rolloutlint lint (2 apps, the pre-commit case)" ./bin/rolloutlint lint --color never "$WORK/small"
