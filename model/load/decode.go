package load

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// decode fills res.Typed. The document is first walked against the kind's
// schema (Go types via JSON tags, Istio specs via their proto descriptors) so
// that every unknown field and mistyped value is reported at its own line. The
// mistyped values are then dropped from a copy and the rest is decoded
// leniently, so every other rule still runs on the object.
func (l *loader) decode(res *graph.Resource, k *kinds.Kind) {
	if k.New == nil {
		return
	}
	typed := k.New()
	var mistyped []string
	report := func(p kinds.FieldProblem) {
		pos := graph.NodePos(res.File, p.Node)
		l.problem(RuleSchema, pos, res, p.Path, "%s: %s", res.Kind, p.Message)
		if !p.Unknown {
			mistyped = append(mistyped, p.Path)
		}
	}
	node := res.Node()
	kinds.CheckGo(reflect.TypeOf(typed), node, "", report)
	if k.Spec != nil {
		if spec := childNode(node, "spec"); spec != nil {
			// The descriptor from an object of its own: ProtoReflect marks the
			// message it is called on, and typed must stay zero for decodeDirect.
			kinds.CheckProto(k.Spec(k.New()).ProtoReflect().Descriptor(), spec, "spec", report)
		}
	}
	m := res.Object()
	if len(mistyped) > 0 {
		m = pruned(m, mistyped)
	}
	// Decoding the already-decoded maps avoids a JSON round trip; only types
	// with their own JSON decoding (quantities, times) are handed the JSON of
	// their own value, and everything decodeDirect declines goes through the
	// converter.
	typed, _, err := decodeDirect(k, m, typed)
	res.DecodeFailed = err != nil
	if err != nil && len(mistyped) == 0 {
		// The schema walk accepted the document but decoding did not (a custom
		// decoder's own rule, e.g. a malformed quantity): report it on the object.
		l.problem(RuleSchema, res.Pos("metadata.name"), res, "", "%s could not be decoded: %v", res.Kind, err)
	}
	res.Typed = typed
}

// decodeDirect decodes m into typed. The Go part goes through
// kinds.DecodeGo (compiled per-type plans) instead of apimachinery's
// reflective converter; for kinds with an Istio proto spec the object without
// its spec is decoded that way and the spec straight from the generic values
// (kinds.DecodeProto) instead of through JSON text and jsonpb. If any step
// fails it starts over on a fresh object the reference way (the converter on
// the whole object), so results and error messages are exactly those of the
// converter. It returns the object to keep, and whether the direct decoders
// made it: they copy what they keep, so the object then shares no map or
// list with m.
func decodeDirect(k *kinds.Kind, m map[string]any, typed any) (any, bool, error) {
	// typed is fresh from k.New and untouched, so zero (DecodeGoFresh).
	if spec, ok := m["spec"].(map[string]any); ok && k.Spec != nil {
		if kinds.DecodeGoFresh(typed, m, "spec") == nil && kinds.DecodeProto(k.Spec(typed), spec) == nil {
			return typed, true, nil
		}
	} else if kinds.DecodeGoFresh(typed, m, "") == nil {
		return typed, true, nil
	}
	typed = k.New()
	return typed, false, runtime.DefaultUnstructuredConverter.FromUnstructured(m, typed)
}

// pruned returns a copy of obj with the values at paths replaced by null.
func pruned(obj map[string]any, paths []string) map[string]any {
	out := deepCopy(obj).(map[string]any)
	for _, p := range paths {
		elems := graph.ParsePath(p)
		var cur any = out
		for i, e := range elems {
			last := i == len(elems)-1
			switch c := cur.(type) {
			case map[string]any:
				if !e.IsKey {
					cur = nil
				} else if last {
					c[e.Key] = nil
				} else {
					cur = c[e.Key]
				}
			case []any:
				if e.IsKey || e.Index < 0 || e.Index >= len(c) {
					cur = nil
				} else if last {
					c[e.Index] = nil
				} else {
					cur = c[e.Index]
				}
			default:
				cur = nil
			}
			if cur == nil {
				break
			}
		}
	}
	return out
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}
