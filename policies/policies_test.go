package policies

import (
	"context"
	"strings"
	"testing"
)

// TestRegoUnitTests runs every *_test.rego beside the built-in policies through
// OPA's test runner, so `go test` covers the Rego tests too.
func TestRegoUnitTests(t *testing.T) {
	results, err := TestBuiltin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatal("no Rego tests found beside the built-in policies")
	}
	for _, r := range results {
		if !r.Passed && !r.Skipped {
			t.Errorf("%s:%d: %s failed: %s\n%s", r.File, r.Line, r.Name, r.Failure, r.Output)
		}
	}
}

// TestBuiltinLoads checks the embedded policies satisfy the contract and each
// has a Rego test file.
func TestBuiltinLoads(t *testing.T) {
	rs, err := LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 {
		t.Fatal("no built-in policies")
	}
	srcs, _ := builtinSources()
	names := map[string]bool{}
	for _, s := range srcs {
		names[s.Name] = true
	}
	for _, s := range srcs {
		if s.IsTest() || strings.Contains(s.Name, "/lib/") {
			continue
		}
		if !names[strings.TrimSuffix(s.Name, ".rego")+"_test.rego"] {
			t.Errorf("%s has no _test.rego beside it", s.Name)
		}
	}
}
