package kinds_test

import (
	"errors"
	"runtime"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// istioDoc is one Istio object's spec as the loader produced it.
type istioDoc struct {
	where string
	kind  *kinds.Kind
	spec  map[string]any
}

// istioDocs loads inputs and returns the spec of every object whose kind has a
// proto spec.
func istioDocs(t testing.TB, inputs []load.Input) []istioDoc {
	t.Helper()
	g := load.Inputs(inputs, load.Options{})
	var docs []istioDoc
	for _, r := range g.Resources {
		k := kinds.Lookup(r.Group, r.Kind)
		if k == nil || k.Spec == nil {
			continue
		}
		spec, ok := r.Object()["spec"].(map[string]any)
		if !ok {
			continue
		}
		docs = append(docs, istioDoc{where: r.File + ": " + r.Kind + " " + r.Name, kind: k, spec: spec})
	}
	return docs
}

// corpusInputs is a generated corpus with mistakes, so odd values occur.
func corpusInputs() []load.Input {
	return corpus.Generate(corpus.Options{Rollouts: 400, MistakeRate: 0.2, Seed: 7})
}

// TestDecodeProtoMatchesJSONPB decodes every Istio spec of the repository's
// test bundles, examples and a generated corpus both ways: wherever
// DecodeProto succeeds jsonpb must succeed with an equal message, and
// DecodeProto may decline only rarely.
func TestDecodeProtoMatchesJSONPB(t *testing.T) {
	repo, err := load.Expand([]string{"../../testdata", "../../examples"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		name   string
		inputs []load.Input
		// maxFallback is the share of specs DecodeProto may leave to jsonpb.
		maxFallback float64
	}{
		// The test bundles hold deliberately malformed specs, which
		// DecodeProto rejects like jsonpb; the share is still small.
		{"testdata+examples", repo, 0.05},
		{"corpus", corpusInputs(), 0},
	} {
		t.Run(set.name, func(t *testing.T) {
			docs := istioDocs(t, set.inputs)
			if len(docs) < 50 {
				t.Fatalf("only %d Istio specs found; the test would prove little", len(docs))
			}
			direct, fallback, bothFail := 0, 0, 0
			for _, d := range docs {
				got := d.kind.Spec(d.kind.New())
				err := kinds.DecodeProto(got, d.spec)
				want := d.kind.Spec(d.kind.New())
				refErr := jsonpbDecode(want, d.spec)
				switch {
				case err == nil && refErr != nil:
					t.Errorf("%s: DecodeProto accepted a spec jsonpb rejects (%v)", d.where, refErr)
				case err == nil && !proto.Equal(got, want):
					t.Errorf("%s: DecodeProto and jsonpb differ:\n got %v\nwant %v", d.where, got, want)
				case err == nil:
					direct++
				case refErr != nil:
					bothFail++
				default:
					fallback++
					t.Logf("%s: declined (jsonpb accepts it): %v", d.where, err)
				}
				if err != nil && refErr == nil && !errors.Is(err, kinds.ErrUnsupported) {
					t.Errorf("%s: DecodeProto reports %v as malformed but jsonpb accepts it", d.where, err)
				}
			}
			t.Logf("%d Istio specs: %d decoded directly, %d fall back to jsonpb, %d rejected by both", len(docs), direct, fallback, bothFail)
			if share := float64(fallback+bothFail) / float64(len(docs)); share > set.maxFallback {
				t.Errorf("%.1f%% of specs fall back (%d declined, %d malformed), want at most %.1f%%",
					100*share, fallback, bothFail, 100*set.maxFallback)
			}
		})
	}
}

// BenchmarkDecodeIstioSpecs compares decoding the corpus's Istio specs
// directly with the JSON text + jsonpb path it replaces.
func BenchmarkDecodeIstioSpecs(b *testing.B) {
	docs := istioDocs(b, corpusInputs())
	for _, bc := range []struct {
		name   string
		decode func(proto.Message, map[string]any) error
	}{
		{"direct", kinds.DecodeProto},
		{"jsonpb", jsonpbDecode},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				for _, d := range docs {
					if err := bc.decode(d.kind.Spec(d.kind.New()), d.spec); err != nil {
						b.Fatalf("%s: %v", d.where, err)
					}
				}
			}
			runtime.ReadMemStats(&after)
			perDoc := float64(b.N) * float64(len(docs))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perDoc, "ns/doc")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/perDoc, "allocs/doc")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/perDoc, "B/doc")
		})
	}
}
