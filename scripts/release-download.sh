#!/usr/bin/env bash
# Downloads the binaries of one rolloutlint release archive, verified against
# the release's checksums file, into a directory: DEST/rolloutlint and its Helm
# chart renderer DEST/rolloutlint-helm, which rolloutlint runs from beside
# itself (.exe on windows), each with DEST/<binary>.sha256, its own SHA-256,
# which callers check before reusing a cached copy (release-download.sh --check).
# Used by the GitHub Action (scripts/action-install.sh) and the pre-commit
# release hook (scripts/precommit-release.sh). Needs bash 3.2+, curl, tar (and
# unzip or pwsh for windows), sha256sum or shasum.
#
# Usage: release-download.sh VERSION OS ARCH DEST [BASE_URL]   (prints DEST/rolloutlint)
#        release-download.sh --check DEST/rolloutlint   (exit 0: it and DEST/rolloutlint-helm
#                                                        are present and unchanged)
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

# unchanged FILE: FILE is executable and its SHA-256 is the one kept beside it.
unchanged() {
	[ -x "$1" ] && [ -f "$1.sha256" ] && [ "$(sha256 "$1")" = "$(cat "$1.sha256")" ]
}

if [ "${1:-}" = --check ]; then
	bin="${2:?--check needs the binary path}"
	suffix=""
	[[ "$bin" == *.exe ]] && suffix=.exe
	unchanged "$bin" && unchanged "$(dirname "$bin")/rolloutlint-helm$suffix"
	exit
fi

[ $# -ge 4 ] || die "usage: release-download.sh VERSION OS ARCH DEST [BASE_URL]"
version="$1" os="$2" arch="$3" dest="$4"
base="${5:-https://github.com/rolloutlint/rolloutlint/releases/download}"
base="${base%/}/$version"
v="${version#v}"
suffix="" ext=tar.gz
if [ "$os" = windows ]; then
	suffix=.exe ext=zip
fi
exe="rolloutlint$suffix" helm="rolloutlint-helm$suffix"
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
		unzip -q -o "$tmp/$asset" "$exe" "$helm" -d "$tmp/x" 2>"$tmp/extract.log" || true # a missing member is reported below
	else
		pwsh -NoProfile -Command "Expand-Archive -LiteralPath '$tmp/$asset' -DestinationPath '$tmp/x' -Force" 2>"$tmp/extract.log" || true
	fi
else
	tar -xzf "$tmp/$asset" -C "$tmp/x" "$exe" "$helm" 2>"$tmp/extract.log" || true # a missing member is reported below
fi
for b in "$exe" "$helm"; do
	[ -f "$tmp/x/$b" ] || die "$asset has no $b (a rolloutlint release archive holds $exe and $helm): $(tr '\n' ' ' <"$tmp/extract.log")"
	chmod +x "$tmp/x/$b"
	sha256 "$tmp/x/$b" >"$tmp/x/$b.sha256"
done
# The binaries and their checksums replace an old copy only once all four are
# complete, checksums last: a run stopped midway leaves a copy that --check
# refuses (so the next run downloads again), never one it passes.
for b in "$exe" "$helm"; do mv -f "$tmp/x/$b.sha256" "$dest/$b.sha256.new"; done
for b in "$exe" "$helm"; do mv -f "$tmp/x/$b" "$dest/$b"; done
for b in "$exe" "$helm"; do mv -f "$dest/$b.sha256.new" "$dest/$b.sha256"; done
echo "$dest/$exe"
