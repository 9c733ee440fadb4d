package policies

import (
	"context"
	"fmt"
	"sort"

	"github.com/open-policy-agent/opa/v1/tester"
)

// TestResult is the outcome of one Rego test rule.
type TestResult struct {
	Name     string // package.test_name
	File     string
	Line     int
	Passed   bool
	Skipped  bool
	Duration string
	// Failure explains a failed or errored test (the error, or "false").
	Failure string
	Output  string // print() output
}

// TestBuiltin runs the `*_test.rego` files of the embedded policies.
func TestBuiltin(ctx context.Context) ([]TestResult, error) {
	srcs, err := builtinSources()
	if err != nil {
		return nil, err
	}
	return runTests(ctx, srcs)
}

// TestDirs runs the Rego tests in user policy directories, compiled with the
// shared library and in the same sandbox as at lint time.
func TestDirs(ctx context.Context, dirs []string) ([]TestResult, error) {
	srcs, err := readDirs(dirs)
	if err != nil {
		return nil, err
	}
	lib, err := libSources()
	if err != nil {
		return nil, err
	}
	return runTests(ctx, append(lib, srcs...))
}

func runTests(ctx context.Context, srcs []Source) ([]TestResult, error) {
	mods, err := parse(srcs)
	if err != nil {
		return nil, err
	}
	// Compile first so a contract or sandbox violation reads the same as at lint time.
	if _, err := compileModules(mods); err != nil {
		return nil, err
	}
	// A nil transaction lets each test evaluation open its own read transaction
	// on the runner's empty in-memory store: the policies read only their input.
	// The runner only enables print() on a compiler it builds itself, so the
	// sandbox compiler enables it here; lint-time compiles keep it off.
	ch, err := tester.NewRunner().SetCompiler(newCompiler().WithEnablePrintStatements(true)).
		CapturePrintOutput(true).RaiseBuiltinErrors(true).SetModules(mods).RunTests(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("running Rego tests: %w", err)
	}
	var out []TestResult
	for r := range ch {
		tr := TestResult{Name: r.Package + "." + r.Name, Passed: r.Pass(), Skipped: r.Skip, Duration: r.Duration.String(), Output: string(r.Output)}
		if r.Location != nil {
			tr.File, tr.Line = r.Location.File, r.Location.Row
		}
		switch {
		case r.Error != nil:
			tr.Failure = r.Error.Error()
		case r.Fail:
			tr.Failure = "the test body was false or undefined"
		}
		out = append(out, tr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
