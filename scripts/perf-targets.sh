#!/usr/bin/env bash
# Measures issue 21's performance targets of the CLI side by side, as
# docs/performance.md ("Targets of issue 21") reports them: the small
# pre-commit bundle, the lint against yaml.v3 merely parsing the same files
# (internal/tools/yamlfloor), plan against lint, and the cost an object at
# 250,000 objects against 49,500 (internal/tools/scaleratio). Every group
# runs its commands interleaved, round by round (internal/tools/perfrun),
# so a busy period of a shared host falls on all of them alike.
# istioctl is timed by scripts/compare-tools.sh, the webhook by
# make bench-webhook and go test ./webhook -run '^$' -bench Review.
#
# Usage: scripts/perf-targets.sh [BINARY...]
#   With no BINARY, a release-flag build of this tree is measured; with
#   several (say, main's and a branch's), each group compares them.
#   RUNS=7 rounds a group (the small bundle runs five times as many).
#   CORPORA=DIR keeps the generated corpora between runs
#   (default ~/.cache/rolloutlint-bench/corpora, about 170 MB).
# Paths must not contain spaces (perfrun splits its commands on them).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=go1.27.3
RUNS=${RUNS:-7}
CORPORA=${CORPORA:-$HOME/.cache/rolloutlint-bench/corpora}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

go build -o "$WORK/perfrun" ./internal/tools/perfrun
go build -o "$WORK/scaleratio" ./internal/tools/scaleratio
go build -o "$WORK/yamlfloor" ./internal/tools/yamlfloor
if [ $# -eq 0 ]; then
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -tags kustomize_disable_go_plugin_support \
		-o "$WORK/rolloutlint" ./cmd/rolloutlint
	set -- "$WORK/rolloutlint"
fi

corpus() { # name gencorpus-args...
	local name=$1; shift
	if [ ! -d "$CORPORA/$name" ]; then
		echo "generating $name ($*) into $CORPORA/$name" >&2
		go run ./internal/tools/gencorpus "$@" -out "$CORPORA/$name.tmp" > /dev/null
		mv "$CORPORA/$name.tmp" "$CORPORA/$name"
	fi
}
mkdir -p "$CORPORA"
corpus small -rollouts 2
corpus mixed -rollouts 9000
corpus gateways -rollouts 9000 -profile gateways -mistakes 0.02
corpus 250k -rollouts 45455

N=$#
label() { if [ "$N" -gt 1 ]; then echo "@$(basename "$1")"; fi; } # which binary, when several
echo "== small bundle, process start to exit (target <= 20 ms)"
args=()
for b in "$@"; do
	args+=("lint-small$(label "$b")=$b lint --color never $CORPORA/small" "version$(label "$b")=$b version")
done
"$WORK/perfrun" -runs $((RUNS * 5)) "${args[@]}"

echo
echo "== lint against yaml.v3 parsing the same files (target: no more CPU)"
args=("floor-mixed=$WORK/yamlfloor $CORPORA/mixed" "floor-gateways=$WORK/yamlfloor $CORPORA/gateways")
for b in "$@"; do
	args+=("lint-mixed$(label "$b")=$b lint -f json $CORPORA/mixed" "lint-gateways$(label "$b")=$b lint -f json $CORPORA/gateways")
done
"$WORK/perfrun" -runs "$RUNS" "${args[@]}"

echo
echo "== plan against lint, mixed (target <= 1.5x)"
args=()
for b in "$@"; do
	args+=("lint$(label "$b")=$b lint -f json $CORPORA/mixed" "plan$(label "$b")=$b plan $CORPORA/mixed"
		"plan-json$(label "$b")=$b plan -f json $CORPORA/mixed")
done
"$WORK/perfrun" -runs "$RUNS" "${args[@]}"

echo
echo "== cost an object at 250,003 objects against 49,500 (target: linear)"
"$WORK/scaleratio" -runs "$RUNS" -small "$CORPORA/mixed" -big "$CORPORA/250k" "$@"
