package policies

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/rules"
)

// BenchmarkCompileBuiltin is what a process pays before its first built-in
// policy runs. "full" compiles the embedded policies as user policies are
// compiled (METADATA, every compiler check, the contract checks, the
// queries), which every lint did before the table; "lazy" is what
// prepareBuiltin parses and compiles now (no METADATA, no check-only
// stages, the library pruned to what they reach), without the queries;
// "lazy-RL5001-RL5002" what a lint of a bundle without Applications and
// HorizontalPodAutoscalers compiles. Run with:
//
//	go test ./policies -run '^$' -bench CompileBuiltin -benchmem
func BenchmarkCompileBuiltin(b *testing.B) {
	all, err := builtinSources()
	if err != nil {
		b.Fatal(err)
	}
	var srcs []Source
	for _, s := range all {
		if !s.IsTest() {
			srcs = append(srcs, s)
		}
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			if _, err := compile(srcs, rules.SourceRego); err != nil {
				b.Fatal(err)
			}
		}
	})
	if _, err := LoadBuiltin(); err != nil {
		b.Fatal(err)
	}
	b.Run("lazy", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := compileBuiltin(builtin.policies); err != nil {
				b.Fatal(err)
			}
		}
	})
	var two []*policy
	for _, p := range builtin.policies {
		if p.rule.ID == "RL5001" || p.rule.ID == "RL5002" {
			two = append(two, p)
		}
	}
	b.Run("lazy-RL5001-RL5002", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := compileBuiltin(two); err != nil {
				b.Fatal(err)
			}
		}
	})
}
