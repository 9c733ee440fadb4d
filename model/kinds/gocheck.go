package kinds

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// goSchema is a Go type compiled for the schema walks: what its JSON decoding
// accepts, with the field table of structs (inline structs flattened). There
// is one per Go type, shared by CheckGo, GoClean, DecodeGo and DecodeTape.
// What a node says of its own type is set when it is made; what it says of
// the types below it (the body) is compiled on first use, so a process pays
// only for the part of a type graph its documents reach (a Rollout's graph is
// some 470 types, most of which a small bundle never touches).
type goSchema struct {
	name   string       // the Go type name, for messages
	kind   reflect.Kind // after dereferencing pointers
	custom bool         // the type decodes its own JSON: anything goes...
	text   bool         // ...except, for text types, a collection
	bytes  bool         // []byte: base64 text, not a list
	accept scalarClass  // the scalars a scalar kind takes

	reg   *goRegistry  // where the body's nodes come from
	typ   reflect.Type // the type the body is compiled from
	ready atomic.Bool  // lazy is compiled; decoders run on every CPU
	mu    sync.Mutex   // held while lazy is compiled
	lazy  goBody
}

// goBody is the part of a goSchema that refers to other schemas.
type goBody struct {
	elem   *goSchema // maps, slices and arrays
	fields map[string]*goSchema
	plan   *goPlan // structs: how DecodeGo fills them
	// byKey is, for structs, fields and plan.byName side by side: what one
	// look-up of a key gives DecodeTape's walk.
	byKey keyTable[keyFields]
}

// body returns s's body, compiling it on first use. Compiling it only makes
// the nodes of the types it names, never their bodies, so no compilation waits
// for another and recursive types need no care.
func (s *goSchema) body() *goBody {
	if !s.ready.Load() { // the walks' hot path: one load, no closure
		s.compileOnce()
	}
	return &s.lazy
}

func (s *goSchema) compileOnce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready.Load() {
		s.compileBody()
		s.ready.Store(true)
	}
}

// keyFields is what a struct's key names: the schema the strict walks check
// its value against (nil: an unknown field) and the fields DecodeGo fills.
// fused is set when the key fills exactly one field, of that same schema, so
// one walk of the value can both check and decode it.
type keyFields struct {
	check  *goSchema
	fields []goField
	fused  bool
	// leaf, for a fused field of a plain string, bool or integer kind (not
	// a pointer, not a type with its own decoding), says how DecodeTape
	// stores a scalar of that kind at offset from the struct's address,
	// without reflection.
	leaf   leafKind
	offset uintptr
}

// goRegistry holds the one node of each type (pointers dereferenced):
// reflect.Type → *goSchema. Nodes are compared by identity (keyFields.fused).
type goRegistry struct{ nodes sync.Map }

// goSchemas is the process's registry; tests make fresh ones.
var goSchemas goRegistry

// goSchemaOf returns the schema node of t, making it on first use; its body
// is compiled when a walk first needs it.
func goSchemaOf(t reflect.Type) *goSchema { return goSchemas.of(t) }

func (r *goRegistry) of(t reflect.Type) *goSchema {
	if s, ok := r.nodes.Load(t); ok {
		return s.(*goSchema)
	}
	it := indirect(t)
	if it != t {
		if s, ok := r.nodes.Load(it); ok {
			return s.(*goSchema)
		}
	}
	s, _ := r.nodes.LoadOrStore(it, newGoSchema(r, it))
	return s.(*goSchema)
}

// newGoSchema makes the node of t, a type that is not a pointer, without its
// body.
func newGoSchema(r *goRegistry, t reflect.Type) *goSchema {
	s := &goSchema{name: t.Name(), kind: t.Kind(), reg: r, typ: t}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || t.Implements(jsonUnmarshaler) {
		s.custom = true
		s.text = reflect.PointerTo(t).Implements(textUnmarshaler)
		return s
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
	case reflect.Slice, reflect.Array:
		s.bytes = t.Elem().Kind() == reflect.Uint8
	default:
		s.accept = goAccepts(t.Kind())
	}
	return s
}

// compileBody fills s.lazy; only compileOnce calls it.
func (s *goSchema) compileBody() {
	if s.custom {
		return
	}
	t, b := s.typ, &s.lazy
	switch t.Kind() {
	case reflect.Struct:
		b.fields = map[string]*goSchema{}
		addGoFields(s.reg, t, b.fields)
		b.plan = &goPlan{byName: map[string][]goField{}}
		addPlanFields(s.reg, t, nil, b.plan)
		byKey := make(map[string]keyFields, len(b.fields))
		for name, check := range b.fields {
			fs := b.plan.byName[name]
			kf := keyFields{check: check, fields: fs, fused: len(fs) == 1 && fs[0].schema == check}
			if kf.fused {
				kf.leaf, kf.offset = leafOf(t, fs[0])
			}
			byKey[name] = kf
		}
		for name, fs := range b.plan.byName {
			if _, ok := byKey[name]; !ok {
				byKey[name] = keyFields{fields: fs}
			}
		}
		b.byKey = newKeyTable(byKey)
	case reflect.Map:
		b.elem = s.reg.of(t.Elem())
	case reflect.Slice, reflect.Array:
		if !s.bytes {
			b.elem = s.reg.of(t.Elem())
		}
	}
}

// addGoFields adds the JSON fields of struct t to fields, flattening inline
// and untagged embedded structs; the first of two same-named fields wins.
func addGoFields(r *goRegistry, t reflect.Type, fields map[string]*goSchema) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			if et := indirect(f.Type); et.Kind() == reflect.Struct {
				addGoFields(r, et, fields)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := fields[name]; !dup {
			fields[name] = r.of(f.Type)
		}
	}
}

// goAccepts is the set of scalars a Go scalar kind decodes from. Integers take
// integral floats ("5.0" reaches the decoder as 5); unsigned integers take no
// negative number.
func goAccepts(k reflect.Kind) scalarClass {
	switch k {
	case reflect.String:
		return clsString
	case reflect.Bool:
		return clsBool
	case reflect.Float32, reflect.Float64:
		return intTags | floatTags
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intTags | clsWholeFloat | clsNegWholeFloat
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return clsInt | clsBigInt | clsWholeFloat
	}
	return anyScalar
}

func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// CheckGo walks n against the Go type t through its JSON tags, the schema
// Kubernetes and Argo Rollouts decode with. It reports unknown fields at their
// key and scalars of the wrong type at their value. Types with their own JSON
// decoding (quantities, IntOrString, raw JSON, times) are accepted as they come.
func CheckGo(t reflect.Type, n *yaml.Node, path string, report func(FieldProblem)) {
	var links [maxInlineDepth]pathLink
	root := fieldPath{root: path, links: links[:0]}
	checkGo(goSchemaOf(t), n, root, report)
}

func checkGo(s *goSchema, n *yaml.Node, p fieldPath, report func(FieldProblem)) {
	n = deref(n)
	if n == nil || isNull(n) {
		return
	}
	if s.custom {
		if s.text && n.Kind != yaml.ScalarNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be a string, found %s", lastName(path), describe(n))})
		}
		return
	}
	switch s.kind {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be an object, found %s", lastName(path), describe(n))})
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				continue
			}
			child := p.key(k.Value)
			fs, ok := s.body().fields[k.Value]
			if !ok {
				hint := ""
				if sug := suggestName(k.Value, s.body().fields); sug != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", sug)
				}
				report(FieldProblem{Path: child.String(), Node: k, Unknown: true,
					Message: fmt.Sprintf("unknown field %q in %s%s", k.Value, s.name, hint)})
				continue
			}
			checkGo(fs, v, child, report)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be a map, found %s", lastName(path), describe(n))})
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			child := p.key(n.Content[i].Value)
			checkGo(s.body().elem, n.Content[i+1], child, report)
		}
	case reflect.Slice, reflect.Array:
		if s.bytes { // []byte is base64 text
			return
		}
		if n.Kind != yaml.SequenceNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be a list, found %s", lastName(path), describe(n))})
			return
		}
		for i, c := range n.Content {
			child := p.at(i)
			checkGo(s.body().elem, c, child, report)
		}
	case reflect.Interface:
		return
	default:
		if n.Kind != yaml.ScalarNode || nodeClass(n)&s.accept == 0 {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be %s, found %s", lastName(path), goKindName(s.kind), describe(n))})
		}
	}
}

func goKindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	}
	return "an integer"
}

func lastName(path string) string {
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return strings.Trim(path[i:], ".[]\"")
	}
	return path
}

func suggestName(name string, fields map[string]*goSchema) string {
	best, bestDist := "", 3
	for cand := range fields {
		d := textdist.Distance(strings.ToLower(name), strings.ToLower(cand))
		if d < bestDist || d == bestDist && cand < best {
			best, bestDist = cand, d
		}
	}
	return best
}
