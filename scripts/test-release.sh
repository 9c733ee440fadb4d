#!/usr/bin/env bash
# Builds a snapshot release (scripts/release.sh --snapshot) and checks what a
# user would get from it:
#   1. every archive and SBOM is in the checksums file, and the checksums verify;
#      every archive holds rolloutlint and its Helm companion rolloutlint-helm
#      (.exe on windows) with the three documents, and on linux both are static;
#   2. both linux binaries run and print the snapshot version, this commit and
#      its date; rolloutlint lints the bundled example (exit 1, its 5 errors) and
#      renders a Helm chart through the rolloutlint-helm beside it (the finding
#      at the template line), while without the companion the chart is RL0010;
#   3. each SBOM is CycloneDX for the version with its binary's real
#      dependencies (Helm's JSON-schema library in rolloutlint-helm's only);
#   4. the OCI image: config with the entrypoint, user 65532:65532 and labels;
#      its flattened filesystem has the nonroot user, CA certificates and both
#      binaries in /usr/bin, and they run in it as uid 65532 with the image's
#      environment (chroot, when run as root), the chart rendered there too.
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
# same_build LINE: rolloutlint-helm's --version line as rolloutlint's `version`
# prints the build after the name: "rolloutlint-helm V (protocol N, commit …"
# gives "V (commit …".
same_build() { sed -n 's/^rolloutlint-helm \([^ ]*\) (protocol [0-9]*, /\1 (/p' <<<"$1"; }
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
	for f in "rolloutlint_${v}_${os}_${arch}.$ext" "rolloutlint_${v}_${os}_${arch}.sbom.cdx.json" "rolloutlint-helm_${v}_${os}_${arch}.sbom.cdx.json"; do
		if grep -q "  $f\$" "$sums" && [ -s "$dist/$f" ]; then pass "$f is released and checksummed"; else fail "$f missing or not in $sums"; fi
	done
done
# Nothing ships unlisted, and the list names nothing that does not ship.
shipped="$(cd "$dist" && shopt -s nullglob && printf '%s\n' *.tar.gz *.zip *.sbom.cdx.json | sort | tr '\n' ' ')"
listed="$(awk '{print $2}' "$sums" | sort | tr '\n' ' ')"
if [ "$shipped" = "$listed" ]; then pass "the checksums file lists exactly the archives and SBOMs"; else
	fail "checksums list '$listed', dist/ has '$shipped'"; fi
# A corrupted archive must not verify.
cp -r "$dist" "$work/tampered"
f="$(ls "$work/tampered"/*.tar.gz | head -1)"
printf 'x' >>"$f"
if (cd "$work/tampered" && sha256sum --strict -c "$(basename "$sums")" >/dev/null 2>&1); then
	fail "a modified archive still verifies"
else pass "a modified archive fails verification"; fi

# Every archive: both binaries and the documents, nothing else; on linux both binaries are static.
for t in $targets; do
	os="${t%/*}" arch="${t#*/}"
	if [ "$os" = windows ]; then
		a="$dist/rolloutlint_${v}_${os}_${arch}.zip"
		want="CHANGELOG.md LICENSE README.md rolloutlint-helm.exe rolloutlint.exe "
		listing="$( (unzip -Z1 "$a" 2>/dev/null || true) | sort | tr '\n' ' ')"
	else
		a="$dist/rolloutlint_${v}_${os}_${arch}.tar.gz"
		want="CHANGELOG.md LICENSE README.md rolloutlint rolloutlint-helm "
		listing="$( (tar -tzf "$a" 2>/dev/null || true) | sort | tr '\n' ' ')"
	fi
	if [ "$listing" = "$want" ]; then pass "$(basename "$a") holds ${want% }"; else fail "$(basename "$a") holds '$listing', want '$want'"; fi
	if [ "$os" = linux ] && [ -f "$a" ]; then
		mkdir -p "$work/x/$arch"
		tar -xzf "$a" -C "$work/x/$arch"
		for b in rolloutlint rolloutlint-helm; do
			if [ -f "$work/x/$arch/$b" ] && ! readelf -l "$work/x/$arch/$b" | grep -q "Requesting program interpreter"; then
				pass "$t $b is static"
			else fail "$t $b is missing or dynamically linked"; fi
		done
	fi
done

# 2. The linux binaries, as extracted from the host's archive.
if [ -f "$work/x/${host#*/}/rolloutlint" ]; then
	bin="$work/x/${host#*/}/rolloutlint" helm="$work/x/${host#*/}/rolloutlint-helm"
	out="$("$bin" version)"
	want="rolloutlint $version (commit $commit, built "
	if [[ "$out" == "$want"* ]] && [[ "$out" != *dirty* ]]; then pass "version: $out"; else fail "version printed '$out', want prefix '$want'"; fi
	hout="$("$helm" --version 2>&1 || true)"
	if [ "$(same_build "$hout")" = "${out#rolloutlint }" ]; then pass "rolloutlint-helm prints the same version: $hout"; else
		fail "rolloutlint-helm --version printed '$hout', want 'rolloutlint-helm ${out#rolloutlint }' with its protocol"; fi
	set +e
	lint="$(cd "$root" && "$bin" lint --color never examples/checkout 2>&1)"
	rc=$?
	set -e
	if [ $rc = 1 ] && grep -q "^5 errors" <<<"$(tail -1 <<<"$lint")"; then pass "binary lints examples/checkout (exit 1, 5 errors)"; else
		fail "lint examples/checkout: exit $rc"; echo "$lint"; fi
	# A chart whose values-prod.yaml breaks a template: the finding is at the
	# template line, so the chart was rendered, by the companion beside the
	# binary (ROLLOUTLINT_HELM unset, none on PATH).
	chart=testdata/repos/mixed/charts/reviews
	chart_lint() { # chart_lint BINARY: lint the chart with values-prod.yaml; output in $lint, status in $rc
		set +e
		lint="$(cd "$root" && env -u ROLLOUTLINT_HELM PATH=/usr/bin:/bin "$1" lint --color never --values "$chart/values-prod.yaml" "$chart" 2>&1)"
		rc=$?
		set -e
	}
	chart_finding="$chart/templates/rollout.yaml:34:9: error RL1001 step 2: setWeight 150 is outside 0..100"
	chart_lint "$bin"
	if [ $rc = 1 ] && grep -qF "$chart_finding" <<<"$lint" && ! grep -q RL0010 <<<"$lint"; then
		pass "rolloutlint renders $chart through the rolloutlint-helm beside it (RL1001 at the template line)"
	else fail "lint $chart with the companion: exit $rc, want 1 with '$chart_finding' and no RL0010:"; echo "$lint"; fi
	mkdir "$work/alone"
	cp "$bin" "$work/alone/"
	chart_lint "$work/alone/rolloutlint"
	if [ $rc = 1 ] && grep -q "error RL0010 .*rolloutlint-helm" <<<"$lint" && ! grep -qF "$chart_finding" <<<"$lint"; then
		pass "without the companion the chart is an RL0010 finding naming rolloutlint-helm"
	else fail "lint $chart without the companion: exit $rc, want 1 with an RL0010 naming rolloutlint-helm:"; echo "$lint"; fi
else
	fail "no archive with binaries for the host platform $host"
fi

# 3. SBOMs: rolloutlint's lists the linter's modules and not Helm's JSON-schema
# library (Helm's chart code, which links it, is the companion's; rolloutlint
# keeps only helm.sh/helm/v4/pkg/strvals for --set); rolloutlint-helm's lists both.
for sbom in "$dist"/*.sbom.cdx.json; do
	kind=rolloutlint
	[[ "$(basename "$sbom")" == rolloutlint-helm_* ]] && kind=rolloutlint-helm
	if python3 - "$sbom" "$version" "$kind" <<'PY'; then pass "$(basename "$sbom"): CycloneDX for $kind $version with its modules"; else fail "$(basename "$sbom") is not a usable SBOM of $kind"; fi
import json, sys
bom = json.load(open(sys.argv[1]))
assert bom["bomFormat"] == "CycloneDX", bom.get("bomFormat")
main = bom["metadata"]["component"]
assert main["name"] == "github.com/rolloutlint/rolloutlint", main["name"]
assert main["version"] == sys.argv[2], main["version"]
names = {c["name"] for c in bom.get("components", [])}
schema = "github.com/santhosh-tekuri/jsonschema/v6"
if sys.argv[3] == "rolloutlint":
    for dep in ("github.com/argoproj/argo-rollouts", "istio.io/api", "k8s.io/api", "github.com/open-policy-agent/opa"):
        assert dep in names, dep + " missing"
    assert schema not in names, schema + " is linked into rolloutlint"
else:
    for dep in ("helm.sh/helm/v4", schema):
        assert dep in names, dep + " missing"
PY
done

# The image assembler is a module of its own: vet and test it here, as make vet and make test do the main one.
if (cd tools/ociimage && go vet ./... && go test ./...); then pass "tools/ociimage: go vet, go test"; else fail "tools/ociimage: go vet, go test"; fi

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
	# The image's binaries are the archive's, byte for byte.
	for b in rolloutlint rolloutlint-helm; do
		if [ "$(stat -c %a "$rootfs/usr/bin/$b" 2>/dev/null)" = 755 ] && cmp -s "$rootfs/usr/bin/$b" "$work/x/${host#*/}/$b"; then
			pass "image has /usr/bin/$b (0755), the archive's binary"
		else fail "image's /usr/bin/$b is missing, not 0755 or not the archive's"; ls -la "$rootfs/usr/bin"; fi
	done
	if [ "$(id -u)" = 0 ] && command -v chroot >/dev/null; then
		# Run as the image would: its user and its config's environment (PATH=/usr/bin:/bin, …).
		mapfile -t image_env < <(python3 -c 'import json, sys
for i in json.load(open(sys.argv[1])):
    if i["platform"] == sys.argv[2]:
        print("\n".join(i["config"]["Env"]))' "$work/inspect.json" "$host")
		chroot="$(command -v chroot)" # env -i drops this PATH
		in_image() { env -i "${image_env[@]}" "$chroot" --userspec=65532:65532 "$rootfs" "$@"; }
		cp -r examples/checkout "$rootfs/tmp/checkout"
		cp -r "$root/testdata/repos/mixed/charts/reviews" "$rootfs/tmp/reviews"
		chmod -R a+rX "$rootfs/tmp/checkout" "$rootfs/tmp/reviews"
		set +e
		out="$(in_image /usr/bin/rolloutlint lint --color never --format json -o /tmp/report.json /tmp/checkout 2>&1)"
		rc=$?
		set -e
		owner="$(stat -c %u "$rootfs/tmp/report.json" 2>/dev/null || echo none)"
		if [ $rc = 1 ] && [ "$owner" = 65532 ] && grep -q '"diagnostics"' "$rootfs/tmp/report.json"; then
			pass "image runs as uid 65532: lint wrote /tmp/report.json (exit 1 on the example's errors)"
		else fail "running the image's binary as 65532: exit $rc, report owner $owner: $out"; fi
		out="$(in_image /usr/bin/rolloutlint version 2>&1 || true)"
		if [[ "$out" == "rolloutlint $version "* ]]; then pass "image's binary prints $version"; else fail "image version: $out"; fi
		hout="$(in_image /usr/bin/rolloutlint-helm --version 2>&1 || true)"
		if [ "$(same_build "$hout")" = "${out#rolloutlint }" ]; then pass "image's rolloutlint-helm prints the same version"; else
			fail "image's rolloutlint-helm --version: '$hout', want 'rolloutlint-helm ${out#rolloutlint }' with its protocol"; fi
		set +e
		out="$(in_image /usr/bin/rolloutlint lint --color never --values /tmp/reviews/values-prod.yaml /tmp/reviews 2>&1)"
		rc=$?
		set -e
		want="/tmp/reviews/templates/rollout.yaml:34:9: error RL1001 step 2: setWeight 150 is outside 0..100"
		if [ $rc = 1 ] && grep -qF "$want" <<<"$out" && ! grep -q RL0010 <<<"$out"; then
			pass "image renders a Helm chart through its rolloutlint-helm (RL1001 at the template line)"
		else fail "chart lint in the image: exit $rc, want 1 with '$want' and no RL0010:"; echo "$out"; fi
	else
		echo "skip running the image's binary (needs root for chroot)"
	fi
else
	fail "no OCI layout $layout"
fi

echo "release: $passes passed, $fails failed"
[ $fails = 0 ]
