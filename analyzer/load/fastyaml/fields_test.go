package fastyaml_test

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer/load"
	"github.com/rolloutlint/rolloutlint/analyzer/load/fastyaml"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
)

// DecodeSharedFields keeps, of every document Decode accepts, exactly the
// selected fields with their full values; it may keep more (a selection ends
// at sequences and flow collections) but never less, and never a key the
// document does not have. Checked with random selections drawn from each
// document's own keys, over the repository's manifests and a corpus.
func TestDecodeSharedFieldsKeepsTheSelection(t *testing.T) {
	var docs [][]byte
	_ = filepath.WalkDir("../../../testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && load.IsManifestName(path) {
			data, _ := os.ReadFile(path)
			docs = append(docs, splitDocs(data)...)
		}
		return nil
	})
	for _, in := range corpus.Generate(corpus.Options{Rollouts: 40, MistakeRate: 0.2, Seed: 3}) {
		docs = append(docs, splitDocs(in.Data)...)
	}
	rng := rand.New(rand.NewSource(1))
	checked := 0
	for _, d := range docs {
		full, ok := fastyaml.Decode(d)
		if !ok {
			continue
		}
		for range 4 {
			sel := randomSelection(rng, full, 0)
			got, ok := fastyaml.DecodeSharedFields(d, sel)
			if !ok {
				t.Fatalf("declined with a selection a document it accepts whole:\n%s", d)
			}
			if msg := covers(got, full, sel, ""); msg != "" {
				t.Fatalf("%s\nselection %s in:\n%s", msg, describe(sel), d)
			}
			checked++
		}
		if got, _ := fastyaml.DecodeSharedFields(d, nil); !reflect.DeepEqual(got, full) {
			t.Fatalf("a nil selection must decode everything:\n%s", d)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d selections checked", checked)
	}
}

// randomSelection picks some keys of m at each level, sometimes keeping a
// value whole (nil), sometimes selecting a key the document lacks.
func randomSelection(rng *rand.Rand, m map[string]any, depth int) *fastyaml.Fields {
	sel := &fastyaml.Fields{Sub: map[string]*fastyaml.Fields{}}
	for k, v := range m {
		if rng.Intn(3) == 0 {
			continue
		}
		if sub, isMap := v.(map[string]any); isMap && depth < 6 && rng.Intn(4) != 0 {
			sel.Sub[k] = randomSelection(rng, sub, depth+1)
		} else {
			sel.Sub[k] = nil
		}
	}
	if rng.Intn(3) == 0 {
		sel.Sub["not-in-the-document"] = nil
	}
	return sel
}

// covers reports how got fails to hold full's selected fields, or "".
func covers(got, full map[string]any, sel *fastyaml.Fields, at string) string {
	for k := range got {
		if _, ok := full[k]; !ok {
			return "kept " + at + k + ", which the document does not have"
		}
	}
	for k, sub := range sel.Sub {
		fv, inFull := full[k]
		gv, inGot := got[k]
		if inFull != inGot {
			return "selected " + at + k + " missing"
		}
		if !inFull {
			continue
		}
		fm, fIsMap := fv.(map[string]any)
		gm, gIsMap := gv.(map[string]any)
		if sub != nil && fIsMap && gIsMap {
			if msg := covers(gm, fm, sub, at+k+"."); msg != "" {
				return msg
			}
			continue
		}
		if !reflect.DeepEqual(gv, fv) {
			return "selected " + at + k + " differs"
		}
	}
	return ""
}

func describe(sel *fastyaml.Fields) string {
	if sel == nil {
		return "*"
	}
	s := "{"
	for k, sub := range sel.Sub {
		s += k + ":" + describe(sub) + " "
	}
	return s + "}"
}

// splitDocs cuts a stream at `---` lines, enough for these tests (a chunk the
// decoder declines is skipped).
func splitDocs(data []byte) [][]byte {
	return bytes.Split(data, []byte("\n---\n"))
}
