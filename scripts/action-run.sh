#!/usr/bin/env bash
# Step 2 of the rolloutlint GitHub Action (action.yml): lint, write SARIF,
# annotate, set outputs, and only then fail per fail-level.
#
# Env (as an Actions runner sets it): GITHUB_WORKSPACE, GITHUB_OUTPUT,
# optional GITHUB_STEP_SUMMARY; ROLLOUTLINT_BIN from the install step; the
# inputs as INPUT_PATHS, INPUT_CONFIG, INPUT_FAIL_LEVEL, INPUT_SARIF_FILE,
# INPUT_CATEGORY. Inputs arrive only through the environment and are always
# quoted: nothing a pull request writes into them is executed.
set -euo pipefail

: "${GITHUB_WORKSPACE:?not run by GitHub Actions: GITHUB_WORKSPACE is unset}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is unset}"
bin="${ROLLOUTLINT_BIN:-rolloutlint}"
fail_level="${INPUT_FAIL_LEVEL:-error}"
sarif="${INPUT_SARIF_FILE:-rolloutlint.sarif}"
category="${INPUT_CATEGORY:-rolloutlint}"

case "$fail_level" in
error | warning | info | none) ;;
*)
	echo "::error title=rolloutlint::input 'fail-level' must be error, warning, info or none, got: $fail_level" >&2
	exit 2
	;;
esac

cd "$GITHUB_WORKSPACE"

# paths: one per line, or whitespace-separated on a single line.
paths=()
if [[ "${INPUT_PATHS:-}" == *$'\n'* ]]; then
	while IFS= read -r p; do
		p="${p#"${p%%[![:space:]]*}"}"
		p="${p%"${p##*[![:space:]]}"}"
		[ -n "$p" ] && paths+=("$p")
	done <<<"$INPUT_PATHS"
else
	read -r -a paths <<<"${INPUT_PATHS:-}"
fi

common=(--sarif-root "$GITHUB_WORKSPACE" --color never)
if [ -n "${INPUT_CONFIG:-}" ]; then
	common+=(--config "$INPUT_CONFIG")
fi
# "--" ends the flags: a path such as "--help" is a path.
targets=(-- "${paths[@]+"${paths[@]}"}")

mkdir -p "$(dirname "$sarif")"
# 1. The SARIF log, always (suppressed findings included, as dismissed).
set +e
"$bin" lint "${common[@]}" --format sarif --output "$sarif" --sarif-category "$category" --fail-level none "${targets[@]}"
rc=$?
set -e
if [ $rc -ne 0 ]; then
	echo "exit-code=$rc" >>"$GITHUB_OUTPUT"
	echo "::error title=rolloutlint::rolloutlint failed (exit $rc) before writing $sarif" >&2
	exit $rc
fi
echo "sarif-file=$sarif" >>"$GITHUB_OUTPUT"

# 2. Annotations on the run, and the exit code that decides the step.
set +e
annotations="$("$bin" lint "${common[@]}" --format github --fail-level "$fail_level" "${targets[@]}")"
rc=$?
set -e
if [ -n "$annotations" ]; then
	printf '%s\n' "$annotations"
fi
findings="$(grep -c '^::' <<<"$annotations" || true)"
echo "findings=$findings" >>"$GITHUB_OUTPUT"
echo "exit-code=$rc" >>"$GITHUB_OUTPUT"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	{
		echo "### rolloutlint"
		echo
		echo "$findings finding(s); fail level \`$fail_level\`; SARIF written to \`$sarif\`."
		if [ "$findings" -gt 0 ]; then
			echo
			echo '```'
			"$bin" lint "${common[@]}" --format text --fail-level none "${targets[@]}" || true
			echo '```'
		fi
	} >>"$GITHUB_STEP_SUMMARY"
fi

if [ $rc -ne 0 ]; then
	echo "rolloutlint: findings at or above '$fail_level' (SARIF is in $sarif)" >&2
fi
exit $rc
