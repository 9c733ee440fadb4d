package load

import (
	"bytes"
	"errors"
	"io"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/graph"
)

// ConvertNode exposes the loader's node-to-value conversion to the external
// tests: the generic value the fast path would decode for n, and false when
// the conversion ran out of budget.
func ConvertNode(n *yaml.Node) (any, bool) {
	c := converter{budget: 1 << 16}
	v := c.value(n, 0)
	return v, c.budget >= 0
}

// SplitDocuments exposes the document splitter to the external tests: the
// document chunks of a file, as the loader parses them.
func SplitDocuments(data []byte) [][]byte {
	var out [][]byte
	for _, c := range splitDocuments(data) {
		out = append(out, c.data)
	}
	return out
}

// SlowDecode runs the loader's slow path on one chunk, as document does:
// yaml.v3 nodes, the template, key (invalid and duplicate), root-kind and node-budget
// checks, then the converter. clean is false when the slow path would report
// a problem or skip the document; obj is the converted root mapping.
func SlowDecode(data []byte, maxNodes int) (obj map[string]any, clean bool) {
	var root yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&root)
	if errors.Is(err, io.EOF) || err != nil {
		return nil, false
	}
	body := &root
	if body.Kind == yaml.DocumentNode {
		if len(body.Content) == 0 {
			return nil, false
		}
		body = body.Content[0]
	}
	if body.Kind != yaml.MappingNode || templateNode(body) != nil {
		return nil, false
	}
	if invalid, dups := keyProblems(body); invalid != nil || len(dups) > 0 {
		return nil, false
	}
	conv := converter{budget: maxNodes}
	obj, ok := conv.value(body, 0).(map[string]any)
	if conv.budget < 0 || !ok {
		return nil, false
	}
	return obj, true
}

// ReadAll exposes the loader's sized read to the external tests.
func ReadAll(r io.Reader, hint int) ([]byte, error) { return readAll(r, hint) }

// MeasureExpansion exposes the alias measure to the external tests: the
// nodes a mapping document holds as written, the nodes its aliases add, and
// whether an alias is recursive.
func MeasureExpansion(body *yaml.Node) (own, adds int, recursive bool) {
	var e expansion
	own, uses := e.measure(body)
	for _, u := range uses {
		adds = satAdd(adds, u.adds)
	}
	return own, adds, e.recursive != nil
}

// ConvertsWithin reports whether the converter converts n visiting at most
// budget nodes.
func ConvertsWithin(n *yaml.Node, budget int) bool {
	c := converter{budget: budget}
	c.value(n, 0)
	return c.budget >= 0
}

// FastRoutes loads one chunk the fast way, as a document of a file: tape
// says whether the typed-from-events route (fastTape) took it, fast whether
// the fast path as a whole did (it tries that route first, then generic
// maps).
func FastRoutes(data []byte) (tape, fast bool) {
	c := chunk{data: data, line: 1}
	tape = (&loader{}).fastTape("f.yaml", 0, c)
	fast = (&loader{}).fast("f.yaml", 0, c)
	return tape, fast
}

// TapeWeightsSet is the loader's graph.WeightsSetOf for a document on a tape.
func TapeWeightsSet(t *fastyaml.Tape) *graph.WeightsSet { return weightsSetOf(t) }
