# rolloutlint — every target works from a fresh clone; see README.md.
# go.mod needs Go >= 1.26.7 (GOTOOLCHAIN=local works with it); CI pins the toolchain
# below, which the go command fetches from the module proxy. Override: make GOTOOLCHAIN=local
export GOTOOLCHAIN ?= go1.27.3

GO              ?= go
# bin/ also gets rolloutlint-helm, the Helm chart renderer: a companion binary that rolloutlint
# starts only for a chart (it looks beside its own executable first), so that Helm's package
# initialisation stays out of every lint.
BIN             := bin/rolloutlint
GOLANGCI_VERSION := v2.15.0
GOLANGCI        := $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
# A local build is "dev" with its commit and commit time; scripts/release.sh sets the version.
VERSION         ?= dev
COMMIT          := $(shell git rev-parse HEAD 2>/dev/null)
DATE            := $(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
VPKG            := github.com/rolloutlint/rolloutlint/internal/version
LDFLAGS         := -s -w -X $(VPKG).Version=$(VERSION) -X $(VPKG).Commit=$(COMMIT) -X $(VPKG).Date=$(DATE)

.PHONY: conformance conformance-argo conformance-appset release release-snapshot test-release fuzz all build test test-short lint fmt fmt-check vet check bench docs example clean test-precommit install-precommit test-webhook-e2e test-cluster-e2e test-kube-e2e bench-webhook

all: build

# kustomize's Go plugin loader imports "plugin", which makes the linker export every symbol
# (+17 MB); rolloutlint never loads plugins, so release builds leave the loader out.
TAGS            := kustomize_disable_go_plugin_support

# CGO_ENABLED=0 as in scripts/release.sh: static binaries, which run on any Linux and start
# about 1 ms sooner than ones the dynamic loader must link first (the pre-commit case). One go
# build writes both into bin/ (their names are the packages'), with the same flags and version.
build: ## build bin/rolloutlint and its Helm companion bin/rolloutlint-helm
	CGO_ENABLED=0 $(GO) build -tags '$(TAGS)' -trimpath -ldflags '$(LDFLAGS)' -o $(dir $(BIN)) ./cmd/rolloutlint ./cmd/rolloutlint-helm

test: ## run every test (rules, Rego, golden outputs, integrations whose tools are present)
	$(GO) test ./...

test-short: ## unit tests only
	$(GO) test -short ./...

test-webhook-e2e: ## webhook behind a real kube-apiserver + etcd (builds kube-apiserver once, cached; see docs/webhook.md)
	bash webhook/e2e/run.sh

test-cluster-e2e: ## lint --cluster and plan --cluster against a real kube-apiserver + etcd (see docs/cluster.md)
	bash scripts/test-kube-e2e.sh ./cmd/rolloutlint/e2e/

test-kube-e2e: ## both e2e suites above in one go test run (what CI runs)
	bash scripts/test-kube-e2e.sh

conformance-argo: ## the plan against the real Argo Rollouts controller on kube-apiserver + etcd (builds it once, cached; RECORD=1 re-records; see docs/plan.md)
	bash conformance/argo/run.sh

conformance-appset: ## ApplicationSet expansion against Argo CD's own generators and renderer (builds the harness once, cached; RECORD=1 re-records; see docs/repositories.md)
	bash conformance/appset/run.sh

bench-webhook: ## webhook load test: 200 req/s (and the same harness against handlers that do not lint) and a 1,000-review burst with a 10,000-object view, 8 concurrent 1.4 MB reviews (P99=5ms asserts the steady p99; see docs/webhook.md)
	@# one process per test, so that the memory test's peak RSS is its own
	@rc=0; for t in TestLoad TestLoadFloor TestLoadBurst TestLoadBigObjectsMemory; do \
	  WEBHOOK_LOAD=1 WEBHOOK_LOAD_P99=$(P99) $(GO) test -count=1 -timeout 20m -run "^$$t\$$" -v ./webhook/ || rc=1; \
	done; exit $$rc

conformance: ## xDS conformance: every scenario against the real istiod push machinery, per Istio version (docs/xds-conformance.md)
	bash scripts/xds-conformance.sh

lint: ## golangci-lint at a pinned version (config: .golangci.yml), also on the tools/ociimage module
	$(GOLANGCI) run ./...
	cd tools/ociimage && $(GOLANGCI) run -c ../../.golangci.yml ./...

fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd tools/ociimage && $(GO) vet ./...

check: fmt-check vet lint test ## everything CI checks

FUZZTIME ?= 10s
# Go minimizes each new input a worker finds before it fuzzes on (up to 60 s by default), and
# counts none of those runs: minimizing a 200-byte input takes about n²/2 = 20,000 runs, which
# for FuzzRegoInput (0.2-0.4 ms a run with coverage on) kept both workers busy for all of a
# 10 s run (8 executions counted). 100 runs a minimization leaves the time to fuzzing;
# FUZZMINIMIZETIME=60s is Go's default again.
FUZZMINIMIZETIME ?= 100x
fuzz: ## run every fuzz target for FUZZTIME each (CI runs them briefly)
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/load/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeProto$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/kinds/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeGo$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/kinds/
	$(GO) test -run '^$$' -fuzz '^FuzzFastYAML$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/load/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeTape$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/load/
	$(GO) test -run '^$$' -fuzz '^FuzzValidText$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/fastyaml/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeValues$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/render/helmrpc/
	$(GO) test -run '^$$' -fuzz '^FuzzEnvelopes$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/render/helmrpc/
	$(GO) test -run '^$$' -fuzz '^FuzzFastYAMLFields$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/fastyaml/
	$(GO) test -run '^$$' -fuzz '^FuzzSchemaClean$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/load/
	$(GO) test -run '^$$' -fuzz '^FuzzPos$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./model/graph/
	$(GO) test -run '^$$' -fuzz '^FuzzSubstitute$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./semantics/promql/
	$(GO) test -run '^$$' -fuzz '^FuzzMatcherAt$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./semantics/promql/
	$(GO) test -run '^$$' -fuzz '^FuzzWriters$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./report/
	$(GO) test -run '^$$' -fuzz '^FuzzRules$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./rules/all/
	$(GO) test -run '^$$' -fuzz '^FuzzAdmissionReview$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./webhook/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./analyzer/config/
	$(GO) test -run '^$$' -fuzz '^FuzzRegoInput$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./policies/

bench: ## benchmarks (see docs/performance.md)
	$(GO) test -run '^$$' -bench . -benchmem ./...

docs: ## regenerate docs/rules, the README rules table and the sandbox table of docs/policies.md
	$(GO) run ./internal/tools/gendocs

test-precommit: ## end-to-end test of .pre-commit-hooks.yaml with the real pre-commit (scripts/install-precommit.sh installs it)
	bash scripts/test-precommit.sh

install-precommit: ## install the pre-commit framework if missing
	bash scripts/install-precommit.sh

release: ## the release artifacts into dist/ (HEAD must be the tag in VERSION; see docs/releasing.md)
	bash scripts/release.sh

release-snapshot: ## the same from any tree; RELEASE_TARGETS="linux/amd64" for one target (what CI builds)
	bash scripts/release.sh --snapshot $(if $(RELEASE_TARGETS),--targets "$(RELEASE_TARGETS)")

test-release: ## snapshot release for linux/amd64 and check it: binary, checksums, SBOM, image config, image run as uid 65532 (chroot)
	bash scripts/test-release.sh

example: build ## lint the bundled example
	./$(BIN) lint examples/checkout

clean:
	rm -rf bin
