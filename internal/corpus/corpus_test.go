package corpus

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

// TestGeneratedCorpusLoads checks the generator writes valid manifests, as
// many objects as it says, with no input problems.
func TestGeneratedCorpusLoads(t *testing.T) {
	g := load.Inputs(Generate(Options{Rollouts: 20, Seed: 7}), load.Options{})
	if len(g.Problems) != 0 {
		t.Fatalf("generated corpus has input problems, first: %v %s", g.Problems[0].Pos, g.Problems[0].Message)
	}
	if got, want := len(g.Resources), Objects(20); got != want {
		t.Fatalf("got %d objects, want %d", got, want)
	}
	if n := len(g.Refs().Rollouts); n != 20 {
		t.Fatalf("got %d resolved Rollouts, want 20", n)
	}
}
