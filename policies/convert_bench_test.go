package policies

import (
	"testing"
	"time"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/internal/proccpu"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// BenchmarkConvert1000 measures converting a 1,000-Rollout bundle (about
// 5,500 objects) into policy input, the part of a Rego lint that does not
// depend on the policies. Run with:
//
//	go test ./policies/ -run '^$' -bench Convert1000 -benchmem
func BenchmarkConvert1000(b *testing.B) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 1000, MistakeRate: 0.1, Seed: 7}), load.Options{})
	g.Refs() // resolved once per graph by the driver; not part of the conversion
	builtins := kindSet{}
	rs, err := LoadBuiltin()
	if err != nil {
		b.Fatal(err)
	}
	if err := prepareBuiltin(); err != nil { // compiles them: builtin.fields is their projection
		b.Fatal(err)
	}
	for _, r := range rs {
		builtins = builtins.union(newKindSet(r.Kinds))
	}
	for _, bc := range []struct {
		name      string
		kinds     kindSet
		fields    *fieldTree
		templates bool
		parts     inputParts
	}{
		{"builtin-kinds", builtins, builtin.fields, builtin.templates, builtin.parts},  // what a lint with the built-in policies converts
		{"rollout-bundle", builtins, builtin.fields, false, 0},                         // a bundle without Applications: the Rollouts' references, refs on demand
		{"builtin-kinds-items", builtins, builtin.fields, builtin.templates, allParts}, // the same with every item built
		{"builtin-kinds-whole", builtins, wholeObjects(), true, allParts},              // the same kinds, whole objects
		{"all-kinds", newKindSet([]string{AllKinds}), wholeObjects(), true, allParts},  // a user policy (every kind, whole objects)
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				c0 := proccpu.Self()
				convert(g, bc.kinds, bc.fields, bc.templates, bc.parts)
				cpu += proccpu.Self() - c0
			}
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkConvertSmall measures converting a one-Rollout bundle (about six
// objects, a webhook review's graph) with the built-in policies' kinds and
// fields, none of its objects converted before. Run with:
//
//	go test ./policies/ -run '^$' -bench ConvertSmall -benchmem
func BenchmarkConvertSmall(b *testing.B) {
	g := load.Inputs(corpus.Generate(corpus.Options{Rollouts: 1, MistakeRate: 0.1, Seed: 7}), load.Options{})
	g.Refs()
	if _, err := LoadBuiltin(); err != nil {
		b.Fatal(err)
	}
	if err := prepareBuiltin(); err != nil {
		b.Fatal(err)
	}
	ks, fields := declaredKinds(), allDeclaredFields()
	b.ReportAllocs()
	for b.Loop() {
		convert(g, ks, fields, declaredTemplates.Load(), allDeclaredParts())
	}
}
