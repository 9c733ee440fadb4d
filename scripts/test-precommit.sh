#!/usr/bin/env bash
# End-to-end test of .pre-commit-hooks.yaml with the real pre-commit:
# a temporary git repository whose .pre-commit-config.yaml points at a snapshot
# of this checkout, then real `git commit`s through the installed hook:
#   1. a clean bundle commits;
#   2. a broken Rollout is blocked and the finding is printed;
#   3. the fixed Rollout commits;
#   4. a commit touching only the VirtualService is linted with the Rollout
#      and the other objects of the configured paths loaded as context;
#   5. rolloutlint-all (pass_filenames: false) lints all configured paths on a
#      commit that changes no manifest, and blocks a broken one.
# The system hooks use the binary built here. Set TEST_PRECOMMIT_GOLANG=1 to
# also run the `rolloutlint` hook, which pre-commit builds with `go install`.
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

# The binary the system hooks run.
mkdir -p "$work/bin"
(cd "$root" && go build -o "$work/bin/rolloutlint" ./cmd/rolloutlint)
export PATH="$work/bin:$PATH"

# The hook repository: a snapshot of this checkout's files as they are now
# (committed or not), so the .pre-commit-hooks.yaml under test is the current one.
hooks="$work/hooks"
mkdir -p "$hooks"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
	[ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf -) | tar -xf - -C "$hooks"
git -C "$hooks" init -q
git -C "$hooks" add -A
git -C "$hooks" commit -qm snapshot
rev="$(git -C "$hooks" rev-parse HEAD)"

# The project under test.
proj="$work/project"
mkdir -p "$proj/deploy"
cd "$proj"
git init -q
cat >.rolloutlint.yaml <<'YAML'
paths: [deploy]
YAML
use_hooks() { # use_hooks ID... : write .pre-commit-config.yaml for these hooks
	{
		echo "repos:"
		echo "- repo: $hooks"
		echo "  rev: $rev"
		echo "  hooks:"
		for id in "$@"; do
			echo "  - id: $id"
			echo "    verbose: true" # print the report when the hook passes too
		done
	} >.pre-commit-config.yaml
	pre-commit install -f >/dev/null
}

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
objects=4 # Rollout, two Services, VirtualService

commit() { # commit MESSAGE: runs the hook through `git commit`; output in $out, status in $rc
	set +e
	out="$(git commit -m "$1" 2>&1)"
	rc=$?
	set -e
}

hook_ids=(rolloutlint-system)
if [ "${TEST_PRECOMMIT_GOLANG:-0}" = 1 ]; then
	hook_ids=(rolloutlint) # pre-commit builds it from the snapshot with `go install ./...`
fi
for id in "${hook_ids[@]}"; do
	echo "== hook $id"
	use_hooks "$id"

	# 1. A clean bundle commits.
	git add -A
	commit "clean bundle ($id)"
	if [ $rc = 0 ] && grep -q "0 errors" <<<"$out"; then pass "clean bundle commits"; else
		fail "clean bundle should commit (exit $rc):"; echo "$out"; fi

	# 2. A broken Rollout is blocked, with the finding at its line:column.
	before="$(git rev-parse HEAD)"
	sed -i 's/- setWeight: 50/- setWeight: 150/' deploy/rollout.yaml
	git add deploy/rollout.yaml
	commit "broken rollout ($id)"
	if [ $rc != 0 ] && [ "$(git rev-parse HEAD)" = "$before" ] &&
		grep -q "deploy/rollout.yaml:32:20: error RL1001 step 2: setWeight 150 is outside 0..100" <<<"$out"; then
		pass "broken Rollout is blocked with the finding printed"
	while IFS= read -r line; do echo "     | $line"; done <<<"$out"
	else fail "broken Rollout should be blocked with RL1001 at deploy/rollout.yaml:32:20 (exit $rc):"; echo "$out"; fi

	# 3. The fixed Rollout commits.
	sed -i 's/- setWeight: 150/- setWeight: 60/' deploy/rollout.yaml
	git add deploy/rollout.yaml
	commit "fixed rollout ($id)"
	if [ $rc = 0 ]; then pass "fixed Rollout commits"; else fail "fixed Rollout should commit (exit $rc):"; echo "$out"; fi

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
		fail "VirtualService-only commit should be linted as 1 file with $objects objects loaded:"; echo "$out"
	elif [ "$involved" -gt 0 ] && [ $rc != 0 ]; then
		pass "VirtualService-only commit is checked against its Rollout: blocked by $involved finding(s)"
	elif [ "$involved" = 0 ] && [ $rc = 0 ]; then
		pass "VirtualService-only commit is linted with its Rollout as context (no rule reports the renamed route in this build)"
	else fail "VirtualService-only commit: $involved finding(s) involve it, commit exit $rc:"; echo "$out"; fi
	if [ $rc != 0 ]; then # the commit was blocked: put the route back as committed
		git checkout -q HEAD -- deploy/virtualservice.yaml
	fi
done

# 5. rolloutlint-all lints every configured path even when no manifest changed.
echo "== hook rolloutlint-all-system"
use_hooks rolloutlint-all-system
echo "# checkout" >README.md
git add -A
commit "docs only"
if [ $rc = 0 ] && grep -q "0 errors.* in 3 files, $objects objects" <<<"$out"; then pass "rolloutlint-all lints the configured paths on a docs-only commit"; else
	fail "rolloutlint-all should lint 3 files and pass (exit $rc):"; echo "$out"; fi
sed -i 's/- setWeight: 10/- setWeight: 101/' deploy/rollout.yaml
echo "more" >>README.md
git add -A
commit "broken again"
if [ $rc != 0 ] && grep -q "deploy/rollout.yaml:30:20: error RL1001" <<<"$out"; then pass "rolloutlint-all blocks a broken Rollout"; else
	fail "rolloutlint-all should block RL1001 (exit $rc):"; echo "$out"; fi

echo "pre-commit: $passes passed, $fails failed"
if [ $fails -gt 0 ]; then exit 1; fi
