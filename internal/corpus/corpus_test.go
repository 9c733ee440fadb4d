package corpus

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

// TestGeneratedCorpusLoads checks the generator writes valid manifests, as
// many objects as it says, with no input problems.
func TestGeneratedCorpusLoads(t *testing.T) {
	for _, o := range []Options{{Rollouts: 20, Seed: 7}, {Profile: Gateways, Rollouts: 20, Seed: 7}, {Profile: Gateways, Rollouts: 31, Seed: 7, MistakeRate: 0.5}} {
		in := Generate(o)
		g := load.Inputs(in, load.Options{})
		if len(g.Problems) != 0 {
			t.Fatalf("%+v: generated corpus has input problems, first: %v %s", o, g.Problems[0].Pos, g.Problems[0].Message)
		}
		if got, want := len(g.Resources), ObjectsOf(o); got != want {
			t.Fatalf("%+v: got %d objects, want %d", o, got, want)
		}
		if n := len(g.Refs().Rollouts); n != o.Rollouts {
			t.Fatalf("%+v: got %d resolved Rollouts, want %d", o, n, o.Rollouts)
		}
		kinds := map[string]int{}
		for _, r := range g.Resources {
			kinds[r.Kind]++
		}
		if o.Profile == Gateways {
			// Every application behind a Gateway, one in ten with a
			// DestinationRule, one application a file.
			if kinds["Gateway"] != o.Rollouts || kinds["DestinationRule"] != (o.Rollouts+1)/10 || len(in) != o.Rollouts {
				t.Errorf("%+v: %d Gateways, %d DestinationRules, %d files", o, kinds["Gateway"], kinds["DestinationRule"], len(in))
			}
		} else if kinds["Gateway"] != (o.Rollouts+1)/2 || kinds["DestinationRule"] != o.Rollouts/2 {
			t.Errorf("%+v: %d Gateways, %d DestinationRules", o, kinds["Gateway"], kinds["DestinationRule"])
		}
	}
}
