#!/usr/bin/env bash
# Step 1 of the rolloutlint GitHub Action (action.yml): put a rolloutlint
# binary in $RUNNER_TEMP and write its path as the step output `bin`.
#
# Env (as an Actions runner sets it): GITHUB_ACTION_PATH (this action's
# checkout), GITHUB_OUTPUT, RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH, optional
# GITHUB_ACTION_REF; INPUT_VERSION from the `version` input.
set -euo pipefail

: "${GITHUB_ACTION_PATH:?not run by GitHub Actions: GITHUB_ACTION_PATH is unset}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is unset}"
: "${RUNNER_TEMP:?RUNNER_TEMP is unset}"

version="${INPUT_VERSION:-}"
module=github.com/rolloutlint/rolloutlint
dest="$RUNNER_TEMP/rolloutlint-bin"
mkdir -p "$dest"
bin="$dest/rolloutlint"
# go.mod needs a newer Go than some runners ship; the go command fetches it.
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

need_go() {
	if ! command -v go >/dev/null 2>&1; then
		echo "::error title=rolloutlint::Go is needed to build rolloutlint; add actions/setup-go before this action, or set 'version' to a release" >&2
		exit 2
	fi
}

if [ -z "$version" ]; then
	# Build the action's own source: the ref the workflow pinned in `uses:`.
	need_go
	label="${GITHUB_ACTION_REF:-action}"
	echo "Building rolloutlint ($label) from $GITHUB_ACTION_PATH"
	(cd "$GITHUB_ACTION_PATH" && go build -tags kustomize_disable_go_plugin_support \
		-ldflags "-s -w -X $module/cmd/rolloutlint/cli.Version=$label" -o "$bin" ./cmd/rolloutlint)
else
	if ! [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
		echo "::error title=rolloutlint::input 'version' must be a release tag such as v0.4.0 (or empty), got: $version" >&2
		exit 2
	fi
	case "${RUNNER_OS:-$(uname -s)}" in
	Linux) os=linux ;;
	macOS | Darwin) os=darwin ;;
	*) os="" ;;
	esac
	case "${RUNNER_ARCH:-$(uname -m)}" in
	X64 | x86_64) arch=amd64 ;;
	ARM64 | arm64 | aarch64) arch=arm64 ;;
	*) arch="" ;;
	esac
	got=""
	if [ -n "$os" ] && [ -n "$arch" ] && command -v curl >/dev/null 2>&1; then
		base="https://$module/releases/download/$version"
		# GoReleaser's default archive and checksum file names.
		asset="rolloutlint_${version#v}_${os}_${arch}.tar.gz"
		sums="rolloutlint_${version#v}_checksums.txt"
		tmp="$(mktemp -d)"
		if curl -fsSL --retry 3 -o "$tmp/$asset" "$base/$asset" && curl -fsSL --retry 3 -o "$tmp/checksums.txt" "$base/$sums"; then
			want="$(awk -v f="$asset" '$2 == f {print $1}' "$tmp/checksums.txt")"
			if command -v sha256sum >/dev/null 2>&1; then
				have="$(sha256sum "$tmp/$asset" | awk '{print $1}')"
			else
				have="$(shasum -a 256 "$tmp/$asset" | awk '{print $1}')"
			fi
			if [ -z "$want" ] || [ "$want" != "$have" ]; then
				echo "::error title=rolloutlint::checksum mismatch for $asset (want '$want', have '$have')" >&2
				exit 2
			fi
			tar -xzf "$tmp/$asset" -C "$dest" rolloutlint
			got=release
		fi
		rm -rf "$tmp"
	fi
	if [ -z "$got" ]; then
		need_go
		echo "No release binary for $version on ${os:-this OS}/${arch:-this arch}; installing with go install"
		GOBIN="$dest" go install "$module/cmd/rolloutlint@$version"
	fi
fi

"$bin" version
echo "bin=$bin" >>"$GITHUB_OUTPUT"
