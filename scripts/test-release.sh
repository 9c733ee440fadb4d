#!/usr/bin/env bash
# Builds a snapshot release (scripts/release.sh --snapshot) and checks what a
# user would get from it:
#   1. every archive and SBOM is in the checksums file, and the checksums verify;
#   2. the linux binary is static, runs, and prints the snapshot version, this
#      commit and its date; it lints the bundled example (exit 1, its 5 errors);
#   3. each SBOM is CycloneDX naming rolloutlint and its real dependencies;
#   4. the OCI image: config with the entrypoint, user 65532:65532 and labels;
#      its flattened filesystem has the nonroot user and CA certificates, and
#      the binary runs in it as uid 65532 (chroot, when run as root).
# CI builds linux/amd64 only (RELEASE_TARGETS to change; the full matrix costs
# five more cross-compiles). RELEASE_DIST=DIR checks an existing dist/ instead;
# RELEASE_OUT=DIR keeps the one built (CI passes it to the Action's tests as
# ROLLOUTLINT_RELEASE_DIST); RELEASE_VERSION=vX.Y.Z checks a real release's dist/.
# Usage: scripts/test-release.sh   (make test-release)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
targets="${RELEASE_TARGETS:-linux/amd64}"
host="linux/$(go env GOARCH)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fails=0 passes=0
pass() { echo "ok   $*"; passes=$((passes + 1)); }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

dist="${RELEASE_DIST:-}"
if [ -z "$dist" ]; then
	dist="${RELEASE_OUT:-$work/dist}"
	start=$SECONDS
	bash scripts/release.sh --snapshot --targets "$targets" --out "$dist"
	echo "== release.sh took $((SECONDS - start)) s"
fi
commit="$(git rev-parse HEAD)"
version="${RELEASE_VERSION:-$(tr -d ' \n' <VERSION)-snapshot.$(git rev-parse --short=7 HEAD)}"
v="${version#v}"
sums="$dist/rolloutlint_${v}_checksums.txt"

# 1. Checksums.
if [ -s "$sums" ] && (cd "$dist" && sha256sum --strict -c "$(basename "$sums")" >/dev/null); then
	pass "checksums verify ($(wc -l <"$sums") files)"
else fail "checksums do not verify: $sums"; fi
for t in $targets; do
	os="${t%/*}" arch="${t#*/}" ext=tar.gz
	[ "$os" = windows ] && ext=zip
	for f in "rolloutlint_${v}_${os}_${arch}.$ext" "rolloutlint_${v}_${os}_${arch}.sbom.cdx.json"; do
		if grep -q "  $f\$" "$sums" && [ -s "$dist/$f" ]; then pass "$f is released and checksummed"; else fail "$f missing or not in $sums"; fi
	done
done
# A corrupted archive must not verify.
cp -r "$dist" "$work/tampered"
f="$(ls "$work/tampered"/*.tar.gz | head -1)"
printf 'x' >>"$f"
if (cd "$work/tampered" && sha256sum --strict -c "$(basename "$sums")" >/dev/null 2>&1); then
	fail "a modified archive still verifies"
else pass "a modified archive fails verification"; fi

# 2. The linux binary.
archive="$dist/rolloutlint_${v}_${host/\//_}.tar.gz"
if [ -f "$archive" ]; then
	mkdir "$work/x"
	tar -xzf "$archive" -C "$work/x"
	listing="$(tar -tzf "$archive" | sort | tr '\n' ' ')"
	if [ "$listing" = "CHANGELOG.md LICENSE README.md rolloutlint " ]; then pass "archive holds rolloutlint, LICENSE, README.md, CHANGELOG.md"; else
		fail "archive contents: $listing"; fi
	bin="$work/x/rolloutlint"
	if readelf -l "$bin" | grep -q "Requesting program interpreter"; then fail "binary is dynamically linked"; else pass "binary is static"; fi
	out="$("$bin" version)"
	want="rolloutlint $version (commit $commit, built "
	if [[ "$out" == "$want"* ]] && [[ "$out" != *dirty* ]]; then pass "version: $out"; else fail "version printed '$out', want prefix '$want'"; fi
	set +e
	lint="$(cd "$root" && "$bin" lint --color never examples/checkout 2>&1)"
	rc=$?
	set -e
	if [ $rc = 1 ] && grep -q "^5 errors" <<<"$(tail -1 <<<"$lint")"; then pass "binary lints examples/checkout (exit 1, 5 errors)"; else
		fail "lint examples/checkout: exit $rc"; echo "$lint"; fi
else
	fail "no archive for the host platform $host: $archive"
fi

# 3. SBOMs.
for sbom in "$dist"/*.sbom.cdx.json; do
	if python3 - "$sbom" "$version" <<'PY'; then pass "$(basename "$sbom"): CycloneDX for rolloutlint $version with its modules"; else fail "$(basename "$sbom") is not a usable SBOM"; fi
import json, sys
bom = json.load(open(sys.argv[1]))
assert bom["bomFormat"] == "CycloneDX", bom.get("bomFormat")
main = bom["metadata"]["component"]
assert main["name"] == "github.com/rolloutlint/rolloutlint", main["name"]
assert main["version"] == sys.argv[2], main["version"]
names = {c["name"] for c in bom.get("components", [])}
for dep in ("github.com/argoproj/argo-rollouts", "istio.io/api", "k8s.io/api", "github.com/open-policy-agent/opa"):
    assert dep in names, dep + " missing"
PY
done

# The image assembler is a module of its own: vet it here, as make vet does the main one.
if (cd tools/ociimage && go vet ./...); then pass "tools/ociimage: go vet"; else fail "tools/ociimage: go vet"; fi

# 4. The image.
layout="$dist/rolloutlint_${v}_image"
if [ -d "$layout" ]; then
	(cd tools/ociimage && go build -o "$work/ociimage" .)
	"$work/ociimage" inspect "$layout" >"$work/inspect.json"
	if python3 - "$work/inspect.json" "$version" "$commit" "$targets" <<'PY'; then pass "image config: entrypoint /usr/bin/rolloutlint, user 65532:65532, labels, platforms $targets"; else fail "image config (see above)"; cat "$work/inspect.json"; fi
import json, sys
imgs = json.load(open(sys.argv[1]))
want = sorted(t for t in sys.argv[4].split() if t.startswith("linux/"))
assert sorted(i["platform"] for i in imgs) == want, [i["platform"] for i in imgs]
for i in imgs:
    c = i["config"]
    assert c["Entrypoint"] == ["/usr/bin/rolloutlint"], c["Entrypoint"]
    assert c["User"] == "65532:65532", c["User"]
    assert c["Labels"]["org.opencontainers.image.version"] == sys.argv[2]
    assert c["Labels"]["org.opencontainers.image.revision"] == sys.argv[3]
    assert c["Labels"]["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert len(i["layers"]) == 2, i["layers"]
PY
	rootfs="$work/rootfs"
	"$work/ociimage" export "$layout" "$host" "$rootfs"
	if grep -q '^nonroot:x:65532:65532:' "$rootfs/etc/passwd" && [ -s "$rootfs/etc/ssl/certs/ca-certificates.crt" ] &&
		[ "$(stat -c %a "$rootfs/tmp")" = 1777 ] && [ ! -e "$rootfs/bin/sh" ]; then
		pass "image filesystem: nonroot in /etc/passwd, CA certificates, /tmp 1777, no shell"
	else fail "image filesystem lacks the nonroot user, CA certificates or /tmp"; ls -laR "$rootfs" | head -40; fi
	if [ "$(id -u)" = 0 ] && command -v chroot >/dev/null; then
		cp -r examples/checkout "$rootfs/tmp/checkout"
		chmod -R a+rX "$rootfs/tmp/checkout"
		set +e
		out="$(chroot --userspec=65532:65532 "$rootfs" /usr/bin/rolloutlint lint --color never --format json -o /tmp/report.json /tmp/checkout 2>&1)"
		rc=$?
		set -e
		owner="$(stat -c %u "$rootfs/tmp/report.json" 2>/dev/null || echo none)"
		if [ $rc = 1 ] && [ "$owner" = 65532 ] && grep -q '"diagnostics"' "$rootfs/tmp/report.json"; then
			pass "image runs as uid 65532: lint wrote /tmp/report.json (exit 1 on the example's errors)"
		else fail "running the image's binary as 65532: exit $rc, report owner $owner: $out"; fi
		out="$(chroot --userspec=65532:65532 "$rootfs" /usr/bin/rolloutlint version)"
		if [[ "$out" == "rolloutlint $version "* ]]; then pass "image's binary prints $version"; else fail "image version: $out"; fi
	else
		echo "skip running the image's binary (needs root for chroot)"
	fi
else
	fail "no OCI layout $layout"
fi

echo "release: $passes passed, $fails failed"
[ $fails = 0 ]
