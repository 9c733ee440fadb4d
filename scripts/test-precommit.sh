#!/usr/bin/env bash
# End-to-end test of every hook in .pre-commit-hooks.yaml with the real
# pre-commit: temporary git repositories whose .pre-commit-config.yaml points
# at a snapshot of this checkout, then real `git commit`s through the hook.
# Each hook that lints changed files (rolloutlint, -system, -release):
#   1. a clean bundle commits;
#   2. a broken Rollout is blocked and the finding is printed;
#   3. the fixed Rollout commits;
#   4. a commit touching only the VirtualService is linted with the Rollout
#      and the other objects of the configured paths loaded as context;
#   5. a Helm chart is rendered by the hook's rolloutlint-helm, the companion
#      beside its rolloutlint: a clean chart commits, and a values.yaml change
#      that breaks a template is blocked with the finding at the template line.
# Each hook that lints all configured paths (rolloutlint-all, -all-system,
# -all-release):
#   6. it lints them on a commit that changes no manifest, and blocks a broken one.
# The golang hooks are built by pre-commit (`go install ./...`, which builds
# both binaries) with the machine's Go and GOTOOLCHAIN=local, as with a
# distribution's Go; the system hooks run the binaries on PATH; the release
# hooks download a snapshot release of this checkout (file:// URL), verify its
# checksum and keep both binaries. A hook id in .pre-commit-hooks.yaml that
# this script does not exercise is a failure.
# ROLLOUTLINT_RELEASE_DIST=DIR uses an existing snapshot (scripts/release.sh).
# Usage: scripts/test-precommit.sh   (make test-precommit)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

if ! command -v pre-commit >/dev/null 2>&1; then
	echo "test-precommit: pre-commit is not installed; run scripts/install-precommit.sh" >&2
	exit 1
fi
echo "== $(pre-commit --version), $(git --version)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PRE_COMMIT_HOME="$work/cache" # keep pre-commit's clones out of ~/.cache
export GIT_CONFIG_GLOBAL="$work/gitconfig" GIT_CONFIG_NOSYSTEM=1
git config --global user.name "rolloutlint test"
git config --global user.email "test@rolloutlint.invalid"
git config --global init.defaultBranch main
git config --global advice.detachedHead false

fails=0 passes=0
pass() { echo "ok   $*"; passes=$((passes + 1)); }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# The binaries the system hooks run: rolloutlint and its Helm companion, side by side on PATH.
mkdir -p "$work/bin"
(cd "$root" && go build -tags kustomize_disable_go_plugin_support -o "$work/bin/" ./cmd/rolloutlint ./cmd/rolloutlint-helm)
export PATH="$work/bin:$PATH"

# The release the release hooks download: a snapshot of this checkout for
# this machine, laid out as GitHub serves it (<base>/<version>/<asset>).
dist="${ROLLOUTLINT_RELEASE_DIST:-}"
if [ -z "$dist" ]; then
	dist="$work/dist"
	bash "$root/scripts/release.sh" --snapshot --targets "linux/$(go env GOARCH)" --out "$dist" >"$work/release.log" 2>&1 ||
		{ cat "$work/release.log"; echo "test-precommit: scripts/release.sh failed" >&2; exit 1; }
fi
sums="$(cd "$dist" && ls rolloutlint_*_checksums.txt)"
release_version="v$(sed -e 's/^rolloutlint_//' -e 's/_checksums.txt$//' <<<"$sums")"
mkdir -p "$work/releases"
ln -s "$dist" "$work/releases/$release_version"
export ROLLOUTLINT_RELEASE_URL="file://$work/releases"
export ROLLOUTLINT_CACHE_DIR="$work/release-cache"

# The hook repository: a snapshot of this checkout's files as they are now
# (committed or not), so the .pre-commit-hooks.yaml under test is the current
# one; its VERSION names the snapshot release.
hooks="$work/hooks"
mkdir -p "$hooks"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
	[ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf -) | tar -xf - -C "$hooks"
echo "$release_version" >"$hooks/VERSION"
git -C "$hooks" init -q
git -C "$hooks" add -A
git -C "$hooks" commit -qm snapshot
rev="$(git -C "$hooks" rev-parse HEAD)"
declared="$(sed -n 's/^- id: *//p' "$hooks/.pre-commit-hooks.yaml" | sort | tr '\n' ' ')"
exercised=()

# hook_env ID: run what follows with the environment the hook is meant for.
# The golang hooks build with the machine's Go as it is (GOTOOLCHAIN=local, as
# distributions ship it), sharing this machine's module cache.
hook_env() {
	case "$1" in
	rolloutlint | rolloutlint-all) echo "GOTOOLCHAIN=local GOMODCACHE=$(go env GOMODCACHE)" ;;
	*) echo "GOTOOLCHAIN=local" ;;
	esac
}

# new_project: a fresh project repository with a clean bundle in deploy/.
new_project() {
	proj="$work/project-$1"
	rm -rf "$proj"
	mkdir -p "$proj/deploy"
	cd "$proj"
	git init -q
	cat >.rolloutlint.yaml <<'YAML'
paths: [deploy]
YAML
cat >deploy/rollout.yaml <<'YAML'
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
  namespace: shop
spec:
  replicas: 4
  selector:
    matchLabels:
      app: checkout
  template:
    metadata:
      labels:
        app: checkout
    spec:
      containers:
      - name: checkout
        image: registry.example.com/shop/checkout:2.4.0
  strategy:
    canary:
      stableService: checkout-stable
      canaryService: checkout-canary
      trafficRouting:
        istio:
          virtualService:
            name: checkout
            routes:
            - primary
      steps:
      - setWeight: 10
      - pause: {duration: 5m}
      - setWeight: 50
      - pause: {duration: 5m}
YAML
cat >deploy/services.yaml <<'YAML'
apiVersion: v1
kind: Service
metadata:
  name: checkout-stable
  namespace: shop
spec:
  selector:
    app: checkout
  ports:
  - name: http
    port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: checkout-canary
  namespace: shop
spec:
  selector:
    app: checkout
  ports:
  - name: http
    port: 80
    targetPort: 8080
YAML
cat >deploy/virtualservice.yaml <<'YAML'
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: checkout
  namespace: shop
spec:
  hosts:
  - checkout.shop.svc.cluster.local
  http:
  - name: primary
    route:
    - destination:
        host: checkout-stable
      weight: 100
    - destination:
        host: checkout-canary
      weight: 0
YAML
}
objects=4 # Rollout, two Services, VirtualService

# new_chart: a Helm chart in deploy/chart whose values.yaml sets the canary weight.
new_chart() {
	mkdir -p deploy/chart/templates
	cat >deploy/chart/Chart.yaml <<'YAML'
apiVersion: v2
name: payments
version: 0.1.0
YAML
	cat >deploy/chart/values.yaml <<'YAML'
image: registry.example.com/shop/payments:1.0.0
canaryWeight: 20
YAML
	cat >deploy/chart/templates/rollout.yaml <<'YAML'
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: {{ .Chart.Name }}
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels:
      app: {{ .Chart.Name }}
  template:
    metadata:
      labels:
        app: {{ .Chart.Name }}
    spec:
      containers:
      - name: {{ .Chart.Name }}
        image: {{ .Values.image }}
  strategy:
    canary:
      steps:
      - setWeight: {{ .Values.canaryWeight }}
      - pause: {duration: 1m}
YAML
}

use_hooks() { # use_hooks ID: write .pre-commit-config.yaml for this hook
	{
		echo "repos:"
		echo "- repo: $hooks"
		echo "  rev: $rev"
		echo "  hooks:"
		echo "  - id: $1"
		echo "    verbose: true" # print the report when the hook passes too
	} >.pre-commit-config.yaml
	pre-commit install -f >/dev/null
	exercised+=("$1")
}

commit() { # commit MESSAGE: runs the hook through `git commit` in the hook's environment; output in $out, status in $rc
	set +e
	out="$(env $(hook_env "$id") git commit -m "$1" 2>&1)"
	rc=$?
	set -e
}

# Hooks that lint the changed files.
for id in rolloutlint rolloutlint-system rolloutlint-release; do
	echo "== hook $id"
	new_project "$id"
	use_hooks "$id"
	start=$SECONDS

	# 1. A clean bundle commits.
	git add -A
	commit "clean bundle ($id)"
	if [ $rc = 0 ] && grep -q "0 errors" <<<"$out"; then pass "$id: clean bundle commits ($((SECONDS - start)) s with the hook's install)"; else
		fail "$id: clean bundle should commit (exit $rc):"; echo "$out"; fi
	case "$id" in
	rolloutlint) # built by pre-commit with the local Go: its version is the module's "dev"
		built="$(ls "$PRE_COMMIT_HOME"/repo*/golangenv-*/bin/rolloutlint 2>/dev/null | head -1)"
		local_go="$(GOTOOLCHAIN=local go env GOVERSION)"
		for b in "$built" "${built%/*}/rolloutlint-helm"; do
			if [ -n "$built" ] && [ -f "$b" ] && [ "$(go version "$b" | awk '{print $2}')" = "$local_go" ]; then
				pass "$id: pre-commit built ${b##*/} with the machine's $local_go (GOTOOLCHAIN=local)"
			else fail "$id: pre-commit's golang environment has no ${b##*/} built by $local_go: ${built:-none}"; fi
		done ;;
	rolloutlint-release)
		cached="$(ls "$ROLLOUTLINT_CACHE_DIR"/*/*/rolloutlint 2>/dev/null || true)"
		if [ -n "$cached" ] && [[ "$("$cached" version)" == "rolloutlint $release_version "* ]]; then
			pass "$id: ran the downloaded $release_version binary ($cached)"
		else fail "$id: no downloaded $release_version binary in $ROLLOUTLINT_CACHE_DIR"; fi
		cache_files="$(LC_ALL=C ls "${cached%/*}" 2>/dev/null | tr '\n' ' ')"
		helm_version="$("${cached%/*}/rolloutlint-helm" version 2>&1 || true)"
		if [ "$cache_files" = "rolloutlint rolloutlint-helm rolloutlint-helm.sha256 rolloutlint.sha256 " ] &&
			bash "$hooks/scripts/release-download.sh" --check "$cached" &&
			[[ "$helm_version" == "rolloutlint-helm $release_version "* ]]; then
			pass "$id: the cache holds both binaries, verified, of $release_version"
		else fail "$id: the cache holds '$cache_files' (rolloutlint-helm: $helm_version)"; fi
		# A changed companion fails the check: the next run downloads again.
		cp "${cached%/*}/rolloutlint-helm" "$work/helm.good"
		printf 'x' >>"${cached%/*}/rolloutlint-helm"
		if bash "$hooks/scripts/release-download.sh" --check "$cached"; then fail "$id: a changed cached rolloutlint-helm still passes the check"; else
			pass "$id: a changed cached rolloutlint-helm fails the check"; fi
		cp "$work/helm.good" "${cached%/*}/rolloutlint-helm" ;;
	esac

	# 2. A broken Rollout is blocked, with the finding at its line:column.
	before="$(git rev-parse HEAD)"
	sed -i 's/- setWeight: 50/- setWeight: 150/' deploy/rollout.yaml
	git add deploy/rollout.yaml
	commit "broken rollout ($id)"
	if [ $rc != 0 ] && [ "$(git rev-parse HEAD)" = "$before" ] &&
		grep -q "deploy/rollout.yaml:32:20: error RL1001 step 2: setWeight 150 is outside 0..100" <<<"$out"; then
		pass "$id: broken Rollout is blocked with the finding printed"
		while IFS= read -r line; do echo "     | $line"; done <<<"$(grep RL1001 <<<"$out")"
	else fail "$id: broken Rollout should be blocked with RL1001 at deploy/rollout.yaml:32:20 (exit $rc):"; echo "$out"; fi

	# 3. The fixed Rollout commits.
	sed -i 's/- setWeight: 150/- setWeight: 60/' deploy/rollout.yaml
	git add deploy/rollout.yaml
	commit "fixed rollout ($id)"
	if [ $rc = 0 ]; then pass "$id: fixed Rollout commits"; else fail "$id: fixed Rollout should commit (exit $rc):"; echo "$out"; fi

	# 4. Only the VirtualService changes: it is the one file reported on, and
	#    the Rollout and Services come in as context from .rolloutlint.yaml.
	sed -i 's/- name: primary/- name: main/' deploy/virtualservice.yaml
	git add deploy/virtualservice.yaml
	# What the whole bundle says about this change: an error in the
	# VirtualService or pointing at it must block the commit.
	involved="$(rolloutlint lint --fail-level none --format json deploy | python3 -c '
import json, sys
ds = json.load(sys.stdin)["diagnostics"]
print(sum(1 for d in ds if d["severity"] == "error" and (d["file"].endswith("virtualservice.yaml") or any(r["file"].endswith("virtualservice.yaml") for r in d["related"]))))')"
	commit "rename the route ($id)"
	if ! grep -q "in 1 file, $objects objects" <<<"$out"; then
		fail "$id: VirtualService-only commit should be linted as 1 file with $objects objects loaded:"; echo "$out"
	elif [ "$involved" -gt 0 ] && [ $rc != 0 ]; then
		pass "$id: VirtualService-only commit is checked against its Rollout: blocked by $involved finding(s)"
	elif [ "$involved" = 0 ] && [ $rc = 0 ]; then
		pass "$id: VirtualService-only commit is linted with its Rollout as context (no rule reports the renamed route in this build)"
	else fail "$id: VirtualService-only commit: $involved finding(s) involve it, commit exit $rc:"; echo "$out"; fi

	# 5. A Helm chart, rendered by the hook's rolloutlint-helm: without it, the
	#    chart would be an RL0010 finding and block even the clean commit.
	git reset -q --hard # drop what step 4 left staged when it was blocked
	new_chart
	git add deploy/chart
	commit "payments chart ($id)"
	if [ $rc = 0 ] && ! grep -q RL0010 <<<"$out"; then pass "$id: a clean Helm chart commits (rendered)"; else
		fail "$id: a clean Helm chart should commit (exit $rc):"; echo "$out"; fi
	before="$(git rev-parse HEAD)"
	sed -i 's/canaryWeight: 20/canaryWeight: 120/' deploy/chart/values.yaml
	git add deploy/chart/values.yaml
	commit "canary weight 120 ($id)"
	if [ $rc != 0 ] && [ "$(git rev-parse HEAD)" = "$before" ] && ! grep -q RL0010 <<<"$out" &&
		grep -q "deploy/chart/templates/rollout.yaml:22:9: error RL1001 step 0: setWeight 120 is outside 0..100" <<<"$out"; then
		pass "$id: a values.yaml change that breaks the chart is blocked at the template line"
	else fail "$id: the broken chart value should be blocked with RL1001 at deploy/chart/templates/rollout.yaml:22:9 (exit $rc):"; echo "$out"; fi
done

# 6. Hooks that lint every configured path, even when no manifest changed.
for id in rolloutlint-all rolloutlint-all-system rolloutlint-all-release; do
	echo "== hook $id"
	new_project "$id"
	git add -A
	git commit -qm "bundle" --no-verify
	use_hooks "$id"
	echo "# checkout" >README.md
	git add -A
	commit "docs only"
	if [ $rc = 0 ] && grep -q "0 errors.* in 3 files, $objects objects" <<<"$out"; then pass "$id: lints the configured paths on a docs-only commit"; else
		fail "$id: should lint 3 files and pass (exit $rc):"; echo "$out"; fi
	sed -i 's/- setWeight: 10/- setWeight: 101/' deploy/rollout.yaml
	echo "more" >>README.md
	git add -A
	commit "broken again"
	if [ $rc != 0 ] && grep -q "deploy/rollout.yaml:30:20: error RL1001" <<<"$out"; then pass "$id: blocks a broken Rollout"; else
		fail "$id: should block RL1001 (exit $rc):"; echo "$out"; fi
done

# Every declared hook was exercised.
tested="$(printf '%s\n' "${exercised[@]}" | sort -u | tr '\n' ' ')"
if [ "$tested" = "$declared" ]; then pass "every hook id of .pre-commit-hooks.yaml was exercised: $declared"; else
	fail "hook ids declared: $declared; exercised: $tested"; fi

echo "pre-commit: $passes passed, $fails failed"
if [ $fails -gt 0 ]; then exit 1; fi
