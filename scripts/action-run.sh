#!/usr/bin/env bash
# The lint step of the rolloutlint GitHub Action (action.yml): write SARIF,
# print the report (annotations by default), set outputs and the job summary,
# and only then fail per fail-level.
#
# Env (as an Actions runner sets it): GITHUB_WORKSPACE, GITHUB_OUTPUT, RUNNER_TEMP,
# optional GITHUB_STEP_SUMMARY; ROLLOUTLINT_BIN from the install step; the inputs as
# INPUT_PATHS, INPUT_CONFIG, INPUT_FORMAT, INPUT_FAIL_LEVEL, INPUT_ARGS,
# INPUT_SARIF_FILE, INPUT_CATEGORY. Inputs arrive only through the environment and
# are always quoted: nothing a pull request writes into them is executed.
set -euo pipefail

: "${GITHUB_WORKSPACE:?not run by GitHub Actions: GITHUB_WORKSPACE is unset}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is unset}"
bin="${ROLLOUTLINT_BIN:-rolloutlint}"
fail_level="${INPUT_FAIL_LEVEL:-error}"
format="${INPUT_FORMAT:-github}"
sarif="${INPUT_SARIF_FILE:-rolloutlint.sarif}"
category="${INPUT_CATEGORY:-rolloutlint}"

die() {
	echo "::error title=rolloutlint::$*" >&2
	echo "exit-code=2" >>"$GITHUB_OUTPUT"
	exit 2
}

case "$fail_level" in
error | warning | info | none) ;;
*) die "input 'fail-level' must be error, warning, info or none, got: $fail_level" ;;
esac
case "$format" in
github | text | json) ;;
*) die "input 'format' must be github, text or json (the SARIF file is always written), got: $format" ;;
esac

cd "$GITHUB_WORKSPACE"

# split VALUE: sets the array split_out to the items of VALUE, one per line, or
# whitespace-separated on a single line. Nothing is expanded: "$(x)" and globs
# stay literal. (No namerefs or mapfile: macOS has bash 3.2.)
split() {
	split_out=()
	if [[ "$1" == *$'\n'* ]]; then
		local p
		while IFS= read -r p; do
			p="${p%$'\r'}"
			p="${p#"${p%%[![:space:]]*}"}"
			p="${p%"${p##*[![:space:]]}"}"
			[ -n "$p" ] && split_out+=("$p")
		done <<<"$1"
	else
		read -r -a split_out <<<"$1"
	fi
	return 0
}
split "${INPUT_PATHS:-}"
paths=("${split_out[@]+"${split_out[@]}"}")
split "${INPUT_ARGS:-}"
extra=("${split_out[@]+"${split_out[@]}"}")

common=(--sarif-root "$GITHUB_WORKSPACE" --color never)
if [ -n "${INPUT_CONFIG:-}" ]; then
	common+=(--config "$INPUT_CONFIG")
fi
common+=("${extra[@]+"${extra[@]}"}")
# "--" ends the flags: a path such as "--help" is a path.
targets=(-- "${paths[@]+"${paths[@]}"}")
tmp="$(mktemp -d "${RUNNER_TEMP:-/tmp}/rolloutlint-run.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

lint() { # lint ARGS...: runs rolloutlint lint; sets $rc
	set +e
	"$bin" lint "${common[@]}" "$@" "${targets[@]}"
	rc=$?
	set -e
}

# 1. The SARIF log, always (suppressed findings included, as dismissed), and the
#    counts from the JSON report.
mkdir -p "$(dirname "$sarif")"
lint --format sarif --output "$sarif" --sarif-category "$category" --fail-level none
if [ $rc -ne 0 ]; then
	echo "exit-code=$rc" >>"$GITHUB_OUTPUT"
	echo "::error title=rolloutlint::rolloutlint failed (exit $rc) before writing $sarif" >&2
	exit $rc
fi
echo "sarif-file=$sarif" >>"$GITHUB_OUTPUT"
lint --format json --output "$tmp/report.json" --fail-level none
[ $rc -eq 0 ] || die "rolloutlint failed (exit $rc) writing the JSON report"
count() { # count KEY: the summary's value (the summary is the report's last object)
	sed -n '/^  "summary": {/,/^  }/p' "$tmp/report.json" | sed -n "s/^ *\"$1\": *\([0-9][0-9]*\).*/\1/p"
}
errors="$(count errors)" warnings="$(count warnings)" infos="$(count infos)" suppressed="$(count suppressed)"
[ -n "$errors" ] && [ -n "$warnings" ] && [ -n "$infos" ] || die "no summary in rolloutlint's JSON report"
findings=$((errors + warnings + infos))
{
	echo "findings=$findings"
	echo "errors=$errors"
	echo "warnings=$warnings"
	echo "infos=$infos"
	echo "suppressed=${suppressed:-0}"
} >>"$GITHUB_OUTPUT"

# 2. The report in the log (workflow annotations by default), and the exit code
#    that decides the step.
lint --format "$format" --fail-level "$fail_level"
echo "exit-code=$rc" >>"$GITHUB_OUTPUT"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	{
		echo "### rolloutlint"
		echo
		echo "| errors | warnings | infos | suppressed |"
		echo "|---:|---:|---:|---:|"
		echo "| $errors | $warnings | $infos | ${suppressed:-0} |"
		echo
		echo "Fail level \`$fail_level\`; SARIF written to \`$sarif\`."
		if [ "$findings" -gt 0 ]; then
			echo
			echo '```text'
			"$bin" lint "${common[@]}" --format text --fail-level none "${targets[@]}" || true
			echo '```'
		fi
	} >>"$GITHUB_STEP_SUMMARY"
fi

if [ $rc -ne 0 ]; then
	echo "rolloutlint: findings at or above '$fail_level' (SARIF is in $sarif)" >&2
fi
exit $rc
