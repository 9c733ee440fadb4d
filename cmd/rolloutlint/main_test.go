package main

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/internal/memlimit"
)

// TestEarlyGCRunsBeforeTheLargeInitialisers: internal/earlygc raises GOGC
// before the dependencies' initialisers that allocate most (OPA's
// built-ins and their types; Helm with its JSON Schema meta-schemas and
// client-go's scheme are in rolloutlint-helm now), so that a short run collects
// nothing before main. The test binary links the command's packages, so
// its initialisation order (GODEBUG=inittrace=1) is the command's.
func TestEarlyGCRunsBeforeTheLargeInitialisers(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: earlygc leaves it alone")
	}
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	if p != memlimit.StartupGCPercent {
		t.Errorf("GOGC after the initialisers is %d, want %d (is internal/earlygc imported?)", p, memlimit.StartupGCPercent)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	order := map[string]int{}
	for i, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			if _, seen := order[f[1]]; !seen {
				order[f[1]] = i
			}
		}
	}
	early, ok := order["github.com/rolloutlint/rolloutlint/internal/earlygc"]
	if !ok {
		t.Fatalf("internal/earlygc has no init in the trace:\n%s", out)
	}
	for _, heavy := range []string{"github.com/open-policy-agent/opa/v1/ast", "github.com/open-policy-agent/opa/v1/topdown"} {
		at, ok := order[heavy]
		if !ok {
			t.Errorf("%s has no init in the trace (no longer linked? update the test)", heavy)
			continue
		}
		if at < early {
			t.Errorf("%s is initialised before internal/earlygc: its allocations run at the default GOGC", heavy)
		}
	}
}
