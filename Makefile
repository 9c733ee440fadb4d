# rolloutlint — every target works from a fresh clone; see README.md.
# go.mod needs Go >= 1.26.10; the go command fetches this toolchain from the module proxy.
export GOTOOLCHAIN := go1.27.3

GO              ?= go
BIN             := bin/rolloutlint
GOLANGCI_VERSION := v2.15.0
GOLANGCI        := $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
VERSION         ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS         := -s -w -X github.com/rolloutlint/rolloutlint/cmd/rolloutlint/cli.Version=$(VERSION)

.PHONY: conformance fuzz all build test test-short lint fmt fmt-check vet check bench docs example clean test-precommit install-precommit test-webhook-e2e bench-webhook

all: build

build: ## build bin/rolloutlint
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/rolloutlint

test: ## run every test (rules, Rego, golden outputs, integrations whose tools are present)
	$(GO) test ./...

test-short: ## unit tests only
	$(GO) test -short ./...

test-webhook-e2e: ## webhook behind a real kube-apiserver + etcd (builds kube-apiserver once, cached; see docs/webhook.md)
	bash webhook/e2e/run.sh

bench-webhook: ## webhook load test: 200 req/s and a 1,000-review burst with a 10,000-object view, 8 concurrent 1.4 MB reviews (P99=5ms asserts the steady p99; see docs/webhook.md)
	@# one process per test, so that the memory test's peak RSS is its own
	@rc=0; for t in TestLoad TestLoadBurst TestLoadBigObjectsMemory; do \
	  WEBHOOK_LOAD=1 WEBHOOK_LOAD_P99=$(P99) $(GO) test -count=1 -timeout 20m -run "^$$t\$$" -v ./webhook/ || rc=1; \
	done; exit $$rc

conformance: ## xDS conformance: every scenario against the real istiod push machinery, per Istio version (docs/xds-conformance.md)
	bash scripts/xds-conformance.sh

lint: ## golangci-lint at a pinned version (config: .golangci.yml)
	$(GOLANGCI) run ./...

fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

check: fmt-check vet lint test ## everything CI checks

FUZZTIME ?= 10s
fuzz: ## run every fuzz target for FUZZTIME each (CI runs them briefly)
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./model/load/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeProto$$' -fuzztime $(FUZZTIME) ./model/kinds/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeGo$$' -fuzztime $(FUZZTIME) ./model/kinds/
	$(GO) test -run '^$$' -fuzz '^FuzzFastYAML$$' -fuzztime $(FUZZTIME) ./model/load/
	$(GO) test -run '^$$' -fuzz '^FuzzFastYAMLFields$$' -fuzztime $(FUZZTIME) ./model/fastyaml/
	$(GO) test -run '^$$' -fuzz '^FuzzSchemaClean$$' -fuzztime $(FUZZTIME) ./model/load/
	$(GO) test -run '^$$' -fuzz '^FuzzPos$$' -fuzztime $(FUZZTIME) ./model/graph/
	$(GO) test -run '^$$' -fuzz '^FuzzSubstitute$$' -fuzztime $(FUZZTIME) ./semantics/promql/
	$(GO) test -run '^$$' -fuzz '^FuzzWriters$$' -fuzztime $(FUZZTIME) ./report/
	$(GO) test -run '^$$' -fuzz '^FuzzRules$$' -fuzztime $(FUZZTIME) ./rules/all/
	$(GO) test -run '^$$' -fuzz '^FuzzAdmissionReview$$' -fuzztime $(FUZZTIME) ./webhook/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./analyzer/config/
	$(GO) test -run '^$$' -fuzz '^FuzzRegoInput$$' -fuzztime $(FUZZTIME) ./policies/

bench: ## benchmarks (see docs/performance.md)
	$(GO) test -run '^$$' -bench . -benchmem ./...

docs: ## regenerate docs/rules and the README rules table
	$(GO) run ./internal/tools/gendocs

test-precommit: ## end-to-end test of .pre-commit-hooks.yaml with the real pre-commit (scripts/install-precommit.sh installs it)
	bash scripts/test-precommit.sh

install-precommit: ## install the pre-commit framework if missing
	bash scripts/install-precommit.sh

example: build ## lint the bundled example
	./$(BIN) lint examples/checkout

clean:
	rm -rf bin
