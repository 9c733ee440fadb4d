package load_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// typedDoc is one document of a known typed kind, as generic values.
type typedDoc struct {
	where string
	kind  *kinds.Kind
	obj   map[string]any
}

// typedDocs returns every typed document of the inputs (List items too), as
// the loader's node path converts them.
func typedDocs(t testing.TB, inputs []load.Input) []typedDoc {
	t.Helper()
	var docs []typedDoc
	var add func(where string, obj map[string]any)
	add = func(where string, obj map[string]any) {
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		if items, ok := obj["items"].([]any); ok && strings.HasSuffix(kind, "List") {
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					add(where, m)
				}
			}
			return
		}
		group, _, _ := strings.Cut(apiVersion, "/")
		if !strings.Contains(apiVersion, "/") {
			group = ""
		}
		if k := kinds.Lookup(group, kind); k != nil && k.New != nil {
			docs = append(docs, typedDoc{where: where + ": " + kind, kind: k, obj: obj})
		}
	}
	for _, in := range inputs {
		for i, chunk := range load.SplitDocuments(in.Data) {
			if obj, ok := load.SlowDecode(chunk, 1<<20); ok {
				add(in.Path+"#"+strconv.Itoa(i), obj)
			}
		}
	}
	return docs
}

func repositoryInputs(t testing.TB) []load.Input {
	t.Helper()
	var inputs []load.Input
	for _, root := range []string{"../../testdata", "../../examples"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == "observed" {
				// Recorded controller observations (conformance/argo): JSON
				// the harness wrote, not manifests.
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() || !load.IsManifestName(path) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			inputs = append(inputs, load.Input{Path: path, Data: data})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return inputs
}

// withoutSpec is the object as decodeDirect hands it to DecodeGo for kinds
// with an Istio proto spec.
func withoutSpec(obj map[string]any) map[string]any {
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "spec" {
			rest[k] = v
		}
	}
	return rest
}

// DecodeGo must give exactly the converter's typed object for every typed
// document of the repository and of generated corpora (with mistakes), and
// fail wherever the converter fails. Istio objects are decoded whole (the
// spec through its own JSON decoding) and without spec, as the loader does.
func TestDecodeGoMatchesConverter(t *testing.T) {
	inputs := repositoryInputs(t)
	repoFiles := len(inputs)
	for _, seed := range []uint64{1, 7, 42} {
		inputs = append(inputs, corpus.Generate(corpus.Options{Rollouts: 40, MistakeRate: 0.3, Seed: seed})...)
	}
	docs := typedDocs(t, inputs)
	var direct, refused, bothFail int
	corpusDocs, corpusDirect := 0, 0
	for _, d := range docs {
		objs := []map[string]any{d.obj}
		if d.kind.Spec != nil {
			objs = append(objs, withoutSpec(d.obj))
		}
		if d.kind.Spec != nil {
			// The loader decodes the whole object leaving out its spec.
			want, got := d.kind.New(), d.kind.New()
			wantErr, gotErr := kinds.DecodeGo(want, objs[1]), kinds.DecodeGoFresh(got, d.obj, "spec")
			if (wantErr == nil) != (gotErr == nil) || wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%s: DecodeGoFresh(skip spec) = %v, %#v; DecodeGo without spec = %v, %#v", d.where, gotErr, got, wantErr, want)
			}
		}
		for _, obj := range objs {
			want := d.kind.New()
			wantErr := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, want)
			got := d.kind.New()
			gotErr := kinds.DecodeGo(got, obj)
			fromCorpus := strings.HasPrefix(d.where, "corpus/")
			if fromCorpus {
				corpusDocs++
			}
			switch {
			case gotErr == nil && wantErr != nil:
				t.Errorf("%s: DecodeGo succeeded where the converter failed: %v", d.where, wantErr)
			case gotErr == nil:
				direct++
				if fromCorpus {
					corpusDirect++
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: DecodeGo differs from the converter:\n got %#v\nwant %#v", d.where, got, want)
				}
			case wantErr == nil:
				refused++
				t.Logf("%s: left to the converter: %v", d.where, gotErr)
			default:
				bothFail++
			}
		}
	}
	t.Logf("%d repository files and 3 corpora: %d decodings, %d direct, %d left to the converter, %d failed both ways",
		repoFiles, direct+refused+bothFail, direct, refused, bothFail)
	if direct < 1000 {
		t.Fatalf("the comparison is too weak: %d direct decodings", direct)
	}
	if corpusDirect != corpusDocs {
		t.Errorf("%d of %d corpus decodings took the direct path, want all", corpusDirect, corpusDocs)
	}
}

// BenchmarkDecodeGo decodes the typed documents of a generated corpus with
// the converter and with DecodeGo, as decodeDirect calls them (Istio objects
// without their spec); ns/op and allocs/op are per document.
func BenchmarkDecodeGo(b *testing.B) {
	docs := typedDocs(b, corpus.Generate(corpus.Options{Rollouts: 200, Seed: 3}))
	objs := make([]map[string]any, len(docs))
	for i, d := range docs {
		objs[i] = d.obj
		if d.kind.Spec != nil {
			objs[i] = withoutSpec(d.obj)
		}
	}
	run := func(b *testing.B, decode func(typed any, obj map[string]any) error) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			d := docs[i%len(docs)]
			if err := decode(d.kind.New(), objs[i%len(docs)]); err != nil {
				b.Fatalf("%s: %v", d.where, err)
			}
		}
	}
	b.Run("converter", func(b *testing.B) {
		run(b, func(typed any, obj map[string]any) error {
			return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed)
		})
	})
	b.Run("DecodeGo", func(b *testing.B) { run(b, kinds.DecodeGo) })
	// As decodeDirect calls them: before, a copy without the spec then
	// DecodeGo; now DecodeGoFresh on the whole object.
	whole := func(b *testing.B, decode func(k *kinds.Kind, typed any, obj map[string]any) error) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			d := docs[i%len(docs)]
			if err := decode(d.kind, d.kind.New(), d.obj); err != nil {
				b.Fatalf("%s: %v", d.where, err)
			}
		}
	}
	b.Run("copy+DecodeGo", func(b *testing.B) {
		whole(b, func(k *kinds.Kind, typed any, obj map[string]any) error {
			if k.Spec != nil {
				obj = withoutSpec(obj)
			}
			return kinds.DecodeGo(typed, obj)
		})
	})
	b.Run("DecodeGoFresh", func(b *testing.B) {
		whole(b, func(k *kinds.Kind, typed any, obj map[string]any) error {
			skip := ""
			if k.Spec != nil {
				skip = "spec"
			}
			return kinds.DecodeGoFresh(typed, obj, skip)
		})
	})
}

// BenchmarkDecodeTape compares, on the typed documents of a generated corpus,
// the fast path's two routes to a typed object: generic maps (DecodeShared,
// SchemaClean, DecodeGoFresh, DecodeProto, WeightsSetOf, Recycle) and the
// tape (DecodeTapeShared, DecodeTape, the tape's WeightsSet); one op is one
// document.
func BenchmarkDecodeTape(b *testing.B) {
	docs := tapeDocs()
	b.Run("maps", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			d := docs[i%len(docs)]
			obj, ok := fastyaml.DecodeShared(d.data, fastyaml.DefaultMaxNodes)
			if !ok || !d.kind.SchemaClean(obj) {
				b.Fatal("declined")
			}
			typed := d.kind.New()
			if d.kind.Spec == nil {
				ok = kinds.DecodeGoFresh(typed, obj, "") == nil
			} else {
				spec, _ := obj["spec"].(map[string]any)
				ok = kinds.DecodeGoFresh(typed, obj, "spec") == nil && kinds.DecodeProto(d.kind.Spec(typed), spec) == nil
				if d.kind.Kind == kinds.VirtualService {
					graph.WeightsSetOf(obj)
				}
			}
			if !ok {
				b.Fatal("declined")
			}
			fastyaml.Recycle(obj)
		}
	})
	b.Run("tape", func(b *testing.B) {
		b.ReportAllocs()
		var t fastyaml.Tape
		for i := 0; b.Loop(); i++ {
			d := docs[i%len(docs)]
			if !fastyaml.DecodeTapeShared(d.data, fastyaml.DefaultMaxNodes, &t) || !d.kind.DecodeTape(d.kind.New(), &t) {
				b.Fatal("declined")
			}
			if d.kind.Kind == kinds.VirtualService {
				load.TapeWeightsSet(&t)
			}
		}
	})
}

// tapeDoc is one document of a kind the tape decoder takes.
type tapeDoc struct {
	data []byte
	kind *kinds.Kind
}

// tapeDocs are the documents of a generated corpus the tape decoder takes,
// for the DecodeTape benchmarks.
func tapeDocs() []tapeDoc {
	var docs []tapeDoc
	for _, in := range corpus.Generate(corpus.Options{Rollouts: 200, Seed: 3}) {
		for _, c := range load.SplitDocuments(in.Data) {
			obj, ok := fastyaml.Decode(c)
			kind, _ := obj["kind"].(string)
			if !ok || !kinds.TapeKind(kind) {
				continue
			}
			apiVersion, _ := obj["apiVersion"].(string)
			group, _, _ := strings.Cut(apiVersion, "/")
			if !strings.Contains(apiVersion, "/") {
				group = ""
			}
			docs = append(docs, tapeDoc{c, kinds.Lookup(group, kind)})
		}
	}
	return docs
}

// BenchmarkDecodeTapeTyped is BenchmarkDecodeTape's tape route without the
// parse: the tapes are recorded once, so an op is one DecodeTape of a fresh
// typed object.
func BenchmarkDecodeTapeTyped(b *testing.B) {
	type doc struct {
		tape *fastyaml.Tape
		kind *kinds.Kind
	}
	var docs []doc
	for _, d := range tapeDocs() {
		t := new(fastyaml.Tape)
		if !fastyaml.DecodeTapeShared(d.data, fastyaml.DefaultMaxNodes, t) {
			b.Fatal("not taped")
		}
		docs = append(docs, doc{t, d.kind})
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d := docs[i%len(docs)]
		if !d.kind.DecodeTape(d.kind.New(), d.tape) {
			b.Fatal("declined")
		}
	}
}
