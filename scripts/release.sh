#!/usr/bin/env bash
# Builds the release artifacts of rolloutlint into dist/ (see docs/releasing.md):
#   rolloutlint_<V>_<os>_<arch>.tar.gz   linux and darwin: the static binaries rolloutlint and
#                                        rolloutlint-helm (its Helm chart renderer, which it runs
#                                        from beside itself), LICENSE, README.md, CHANGELOG.md
#   rolloutlint_<V>_windows_<arch>.zip   the same with rolloutlint.exe and rolloutlint-helm.exe
#   rolloutlint_<V>_<os>_<arch>.sbom.cdx.json        CycloneDX SBOM of rolloutlint (cyclonedx-gomod bin)
#   rolloutlint-helm_<V>_<os>_<arch>.sbom.cdx.json   the same of rolloutlint-helm
#   rolloutlint_<V>_checksums.txt        SHA-256 of every file above (sha256sum -c format)
#   rolloutlint_<V>_image/               OCI image layout: one index, one non-root image per linux
#                                        arch with both binaries in /usr/bin
# <V> is the version without its "v" (the names GoReleaser uses, which the Action
# and the pre-commit release hook download).
#
# Usage: scripts/release.sh [--snapshot] [--targets "OS/ARCH ..."] [--out DIR]
#   release:   HEAD must be the tag named in VERSION, and the tree clean.
#   --snapshot any tree; version <VERSION>-snapshot.<short commit>.
#   --targets  default: every OS/ARCH of the release matrix (linux, darwin, windows x amd64, arm64).
# Built only with the go command (cross-compiled, CGO_ENABLED=0), tar/gzip/zip,
# sha256sum, cyclonedx-gomod and tools/ociimage (go-containerregistry), both
# pinned and built from the Go module proxy. Nothing is published: the release
# workflow (.github/workflows/release.yml) uploads dist/ and pushes the image.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
CYCLONEDX_GOMOD=github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
module=github.com/rolloutlint/rolloutlint
all_targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"

snapshot=0 targets="$all_targets" out=dist
while [ $# -gt 0 ]; do
	case "$1" in
	--snapshot) snapshot=1 ;;
	--targets) targets="$2"; shift ;;
	--out) out="$2"; shift ;;
	*) echo "release: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

base_version="$(tr -d ' \n' <VERSION)"
if ! [[ "$base_version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	echo "release: VERSION must hold a semantic version such as v0.1.0, got '$base_version'" >&2
	exit 2
fi
commit="$(git rev-parse HEAD)"
# The commit time, not the clock: the same commit gives the same archives.
epoch="$(git log -1 --format=%ct HEAD)"
date="$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)"
if [ $snapshot = 1 ]; then
	version="$base_version-snapshot.$(git rev-parse --short=7 HEAD)"
else
	tag="$(git describe --tags --exact-match HEAD 2>/dev/null || true)"
	if [ "$tag" != "$base_version" ]; then
		echo "release: HEAD is tagged '${tag:-nothing}' but VERSION says $base_version; tag the commit (git tag $base_version) or use --snapshot" >&2
		exit 2
	fi
	if [ -n "$(git status --porcelain)" ]; then
		echo "release: the tree has uncommitted changes; commit them or use --snapshot" >&2
		exit 2
	fi
	if ! grep -Eq "^## \[${base_version#v}\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$" CHANGELOG.md; then
		echo "release: CHANGELOG.md has no '## [${base_version#v}] - YYYY-MM-DD' section (date the release)" >&2
		exit 2
	fi
	version="$base_version"
fi
v="${version#v}"

rm -rf "$out"
mkdir -p "$out/build"
out_abs="$(cd "$out" && pwd)" # zip runs in the build directory; --out may be relative or absolute
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
echo "== rolloutlint $version ($commit, $date) for: $targets"

# Pinned tools, built once per run from the module proxy (cached by the go command).
GOBIN="$tools" go install "$CYCLONEDX_GOMOD"
(cd tools/ociimage && go build -trimpath -o "$tools/ociimage" .)

ldflags="-s -w -buildid= -X $module/internal/version.Version=$version -X $module/internal/version.Commit=$commit -X $module/internal/version.Date=$date"
image_args=()
for t in $targets; do
	os="${t%/*}" arch="${t#*/}"
	case "$os/$arch" in
	linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64 | windows/amd64 | windows/arm64) ;;
	*) echo "release: target $t is not in the matrix ($all_targets)" >&2; exit 2 ;;
	esac
	suffix=""
	[ "$os" = windows ] && suffix=.exe
	exe="rolloutlint$suffix" helm="rolloutlint-helm$suffix"
	dir="$out/build/${os}_${arch}"
	mkdir -p "$dir"
	echo "== build $t"
	# One go build for both: the same flags and version, and the two links run in parallel.
	CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -tags kustomize_disable_go_plugin_support -ldflags "$ldflags" \
		-o "$dir/" ./cmd/rolloutlint ./cmd/rolloutlint-helm
	[ -f "$dir/$exe" ] && [ -f "$dir/$helm" ] || { echo "release: go build did not write $dir/$exe and $dir/$helm" >&2; exit 1; }
	cp LICENSE README.md CHANGELOG.md "$dir/"
	touch -d "@$epoch" "$dir"/*
	name="rolloutlint_${v}_${os}_${arch}"
	if [ "$os" = windows ]; then
		(cd "$dir" && TZ=UTC zip -X -q "$out_abs/$name.zip" "$exe" "$helm" LICENSE README.md CHANGELOG.md)
	else
		tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
			-C "$dir" -cf - "$exe" "$helm" LICENSE README.md CHANGELOG.md | gzip -n -9 >"$out/$name.tar.gz"
	fi
	"$tools/cyclonedx-gomod" bin -json -version "$version" -output "$out/$name.sbom.cdx.json" "$dir/$exe"
	"$tools/cyclonedx-gomod" bin -json -version "$version" -output "$out/rolloutlint-helm_${v}_${os}_${arch}.sbom.cdx.json" "$dir/$helm"
	if [ "$os" = linux ]; then
		image_args+=("$t=$dir/$exe,$dir/$helm")
	fi
done

(
	cd "$out"
	shopt -s nullglob
	files=(*.tar.gz *.zip *.sbom.cdx.json)
	sha256sum -- "${files[@]}" | sort -k2 >"rolloutlint_${v}_checksums.txt"
)

if [ ${#image_args[@]} -gt 0 ]; then
	echo "== image (${image_args[*]%%=*})"
	"$tools/ociimage" build -out "$out/rolloutlint_${v}_image" -version "$version" -revision "$commit" \
		-created "$date" -ca-certs "${CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" -license LICENSE "${image_args[@]}"
fi

echo "== $out/"
(cd "$out" && shopt -s nullglob && ls -l -- *.tar.gz *.zip *.json *.txt && du -sh -- *_image)
