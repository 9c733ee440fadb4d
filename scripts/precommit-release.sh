#!/usr/bin/env bash
# Entry of the pre-commit hooks rolloutlint-release and rolloutlint-all-release
# (.pre-commit-hooks.yaml, language: script): runs the released rolloutlint
# binary of the hook's rev, so no Go is needed. The version is the VERSION file
# of the hook repository at that rev; the release archive for this OS and
# architecture is downloaded once (checksum-verified, scripts/release-download.sh)
# and its two binaries, rolloutlint and rolloutlint-helm (the Helm chart
# renderer rolloutlint runs from beside itself), kept in
# ${XDG_CACHE_HOME:-~/.cache}/rolloutlint/<version>/<os>_<arch>/; both are
# re-verified on every run. Arguments are rolloutlint's (entry: ... lint).
#
# ROLLOUTLINT_RELEASE_URL replaces the download location (a mirror, or a test's
# loopback server); ROLLOUTLINT_CACHE_DIR replaces the cache directory.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
version="$(tr -d ' \r\n' <"$here/../VERSION")"
case "$(uname -s)" in
Linux) os=linux ;;
Darwin) os=darwin ;;
MINGW* | MSYS* | CYGWIN*) os=windows ;;
*) echo "rolloutlint-release: no release binary for $(uname -s); use the rolloutlint hook (built with Go)" >&2; exit 2 ;;
esac
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
arm64 | aarch64) arch=arm64 ;;
*) echo "rolloutlint-release: no release binary for $(uname -m); use the rolloutlint hook (built with Go)" >&2; exit 2 ;;
esac
exe=rolloutlint
[ $os = windows ] && exe=rolloutlint.exe
dir="${ROLLOUTLINT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rolloutlint}/${version#v}/${os}_${arch}"
bin="$dir/$exe"
if ! bash "$here/release-download.sh" --check "$bin"; then
	ROLLOUTLINT_ERROR_PREFIX="rolloutlint-release: " bash "$here/release-download.sh" \
		"$version" "$os" "$arch" "$dir" "${ROLLOUTLINT_RELEASE_URL:-}" >/dev/null
fi
exec "$bin" "$@"
