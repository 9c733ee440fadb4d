#!/usr/bin/env bash
# The install steps of the rolloutlint GitHub Action (action.yml).
#
#   action-install.sh resolve   which version, OS, arch and cache directory; step outputs
#                               version, source, asset, dir (restored by actions/cache)
#   action-install.sh install   put rolloutlint and rolloutlint-helm (its Helm chart renderer,
#                               which it runs from beside itself) in that directory, unless
#                               a verified copy is already there; step outputs bin (rolloutlint),
#                               version, cache-hit
#
# Env (as an Actions runner sets it): GITHUB_ACTION_PATH, GITHUB_OUTPUT, RUNNER_TEMP,
# RUNNER_OS, RUNNER_ARCH, optional RUNNER_TOOL_CACHE and GITHUB_ACTION_REF; from the
# inputs: INPUT_VERSION (empty: the release of this action's ref; vX.Y.Z; or source)
# and INPUT_RELEASE_URL (where release assets are downloaded from).
#
# The release binaries are downloaded (scripts/release-download.sh) only with the
# archive's checksum verified against the release's checksums file; each
# binary's own SHA-256 is kept beside it and checked again when the cache
# restores them. Nothing is built unless version is "source", which builds both.
set -euo pipefail

: "${GITHUB_ACTION_PATH:?not run by GitHub Actions: GITHUB_ACTION_PATH is unset}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is unset}"
: "${RUNNER_TEMP:?RUNNER_TEMP is unset}"
mode="${1:-install}"
module=github.com/rolloutlint/rolloutlint
semver='^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'

die() {
	echo "::error title=rolloutlint::$*" >&2
	exit 2
}

# --- resolve ---------------------------------------------------------------
version="${INPUT_VERSION:-}"
source=false
if [ "$version" = source ]; then
	source=true
	version="source"
elif [ -z "$version" ]; then
	# The release this action belongs to: the tag in `uses:` when it is one,
	# else the VERSION file of the action's tree (a commit pinned by SHA).
	if [[ "${GITHUB_ACTION_REF:-}" =~ $semver ]]; then
		version="$GITHUB_ACTION_REF"
	else
		version="$(tr -d ' \r\n' <"$GITHUB_ACTION_PATH/VERSION")"
	fi
fi
if [ "$source" = false ] && ! [[ "$version" =~ $semver ]]; then
	die "input 'version' must be a release tag such as v0.1.0, 'source', or empty; got: $version"
fi

case "${RUNNER_OS:-$(uname -s)}" in
Linux) os=linux ;;
macOS | Darwin) os=darwin ;;
Windows | MINGW* | MSYS* | CYGWIN*) os=windows ;;
*) die "unsupported runner OS '${RUNNER_OS:-$(uname -s)}' (Linux, macOS, Windows)" ;;
esac
case "${RUNNER_ARCH:-$(uname -m)}" in
X64 | x86_64 | amd64) arch=amd64 ;;
ARM64 | arm64 | aarch64) arch=arm64 ;;
*) die "unsupported runner architecture '${RUNNER_ARCH:-$(uname -m)}' (X64, ARM64)" ;;
esac
exe=rolloutlint helm=rolloutlint-helm
ext=tar.gz
if [ $os = windows ]; then
	exe=rolloutlint.exe helm=rolloutlint-helm.exe
	ext=zip
fi
v="${version#v}"
asset="rolloutlint_${v}_${os}_${arch}.$ext"
dir="${RUNNER_TOOL_CACHE:-$RUNNER_TEMP}/rolloutlint/$v/$arch"
if [ "$source" = true ]; then
	dir="$RUNNER_TEMP/rolloutlint-source"
	asset=""
fi

if [ "$mode" = resolve ]; then
	{
		echo "version=$version"
		echo "source=$source"
		echo "asset=$asset"
		echo "dir=$dir"
	} >>"$GITHUB_OUTPUT"
	exit 0
fi
[ "$mode" = install ] || die "action-install.sh: unknown mode '$mode' (resolve, install)"

# --- install ---------------------------------------------------------------
bin="$dir/$exe"
hit=false
mkdir -p "$dir"
if [ "$source" = true ]; then
	command -v go >/dev/null 2>&1 || die "version 'source' builds rolloutlint with Go: add actions/setup-go before this action, or use a release version"
	echo "Building rolloutlint and rolloutlint-helm from $GITHUB_ACTION_PATH (${GITHUB_ACTION_REF:-local})"
	# -o DIR/: each binary under its package's name (.exe on windows), side by side.
	(cd "$GITHUB_ACTION_PATH" && CGO_ENABLED=0 go build -trimpath -tags kustomize_disable_go_plugin_support \
		-ldflags "-s -w -X $module/internal/version.Commit=${GITHUB_ACTION_REF:-unknown}" -o "$dir/" ./cmd/rolloutlint ./cmd/rolloutlint-helm)
elif bash "$GITHUB_ACTION_PATH/scripts/release-download.sh" --check "$bin"; then
	hit=true
	echo "rolloutlint $version from the cache ($dir)"
else
	ROLLOUTLINT_ERROR_PREFIX="::error title=rolloutlint::" bash "$GITHUB_ACTION_PATH/scripts/release-download.sh" \
		"$version" "$os" "$arch" "$dir" "${INPUT_RELEASE_URL:-}" >/dev/null ||
		die "no rolloutlint $version binary for $os/$arch (see above); version: source builds from the action's source"
fi

"$bin" version
"$dir/$helm" --version
{
	echo "bin=$bin"
	echo "version=$version"
	echo "cache-hit=$hit"
} >>"$GITHUB_OUTPUT"
