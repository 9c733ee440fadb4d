#!/usr/bin/env bash
# Downloads one rolloutlint release binary, verified against the release's
# checksums file, into a directory: DEST/rolloutlint (rolloutlint.exe on
# windows) and DEST/rolloutlint.sha256, the binary's own SHA-256, which
# callers check before reusing a cached copy (release-download.sh --check).
# Used by the GitHub Action (scripts/action-install.sh) and the pre-commit
# release hook (scripts/precommit-release.sh). Needs bash 3.2+, curl, tar (and
# unzip or pwsh for windows), sha256sum or shasum.
#
# Usage: release-download.sh VERSION OS ARCH DEST [BASE_URL]
#        release-download.sh --check DEST/rolloutlint   (exit 0: present and unchanged)
# BASE_URL defaults to GitHub's release downloads; assets are BASE_URL/VERSION/NAME.
# Errors are prefixed with $ROLLOUTLINT_ERROR_PREFIX (default "rolloutlint: ").
set -euo pipefail

prefix="${ROLLOUTLINT_ERROR_PREFIX:-rolloutlint: }"
die() {
	echo "$prefix$*" >&2
	exit 2
}
sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | awk '{print $1}'
	else
		shasum -a 256 "$1" | awk '{print $1}'
	fi
}

if [ "${1:-}" = --check ]; then
	bin="${2:?--check needs the binary path}"
	[ -x "$bin" ] && [ -f "$bin.sha256" ] && [ "$(sha256 "$bin")" = "$(cat "$bin.sha256")" ]
	exit
fi

[ $# -ge 4 ] || die "usage: release-download.sh VERSION OS ARCH DEST [BASE_URL]"
version="$1" os="$2" arch="$3" dest="$4"
base="${5:-https://github.com/rolloutlint/rolloutlint/releases/download}"
base="${base%/}/$version"
v="${version#v}"
exe=rolloutlint ext=tar.gz
if [ "$os" = windows ]; then
	exe=rolloutlint.exe ext=zip
fi
asset="rolloutlint_${v}_${os}_${arch}.$ext"
sums="rolloutlint_${v}_checksums.txt"

mkdir -p "$dest"
tmp="$(mktemp -d "$dest/.download.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "Downloading $base/$asset" >&2
curl -fsSL --retry 3 -o "$tmp/$sums" "$base/$sums" ||
	die "cannot download $base/$sums: is $version a rolloutlint release?"
curl -fsSL --retry 3 -o "$tmp/$asset" "$base/$asset" ||
	die "cannot download $base/$asset: the release has no binary for $os/$arch"
want="$(awk -v f="$asset" '$2 == f || $2 == "*" f {print $1}' "$tmp/$sums")"
[ -n "$want" ] || die "$sums does not list $asset"
have="$(sha256 "$tmp/$asset")"
[ "$want" = "$have" ] || die "checksum mismatch for $asset: $sums says $want, the download is $have"
mkdir -p "$tmp/x"
if [ $ext = zip ]; then
	if command -v unzip >/dev/null 2>&1; then
		unzip -q -o "$tmp/$asset" "$exe" -d "$tmp/x"
	else
		pwsh -NoProfile -Command "Expand-Archive -LiteralPath '$tmp/$asset' -DestinationPath '$tmp/x' -Force"
	fi
else
	tar -xzf "$tmp/$asset" -C "$tmp/x" "$exe"
fi
chmod +x "$tmp/x/$exe"
sha256 "$tmp/x/$exe" >"$tmp/x/$exe.sha256"
# The binary and its checksum replace an old copy only once both are complete.
mv -f "$tmp/x/$exe.sha256" "$dest/$exe.sha256.new"
mv -f "$tmp/x/$exe" "$dest/$exe"
mv -f "$dest/$exe.sha256.new" "$dest/$exe.sha256"
echo "$dest/$exe"
