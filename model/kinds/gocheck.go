package kinds

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// goSchema is a Go type compiled for the schema walks: what its JSON decoding
// accepts, with the field table of structs (inline structs flattened). It is
// built once per root type and shared by CheckGo and GoClean.
type goSchema struct {
	name   string       // the Go type name, for messages
	kind   reflect.Kind // after dereferencing pointers
	custom bool         // the type decodes its own JSON: anything goes...
	text   bool         // ...except, for text types, a collection
	bytes  bool         // []byte: base64 text, not a list
	elem   *goSchema    // maps, slices and arrays
	fields map[string]*goSchema
	accept scalarClass // the scalars a scalar kind takes
	plan   *goPlan     // structs: how DecodeGo fills them
	// byKey is, for structs, fields and plan.byName side by side: what one
	// look-up of a key gives DecodeTape's walk.
	byKey map[string]keyFields
}

// keyFields is what a struct's key names: the schema the strict walks check
// its value against (nil: an unknown field) and the fields DecodeGo fills.
// fused is set when the key fills exactly one field, of that same schema, so
// one walk of the value can both check and decode it.
type keyFields struct {
	check  *goSchema
	fields []goField
	fused  bool
}

var (
	goSchemas   sync.Map // reflect.Type → *goSchema, complete graphs only
	goSchemasMu sync.Mutex
)

// goSchemaOf returns the compiled schema of t, building it on first use.
func goSchemaOf(t reflect.Type) *goSchema {
	if s, ok := goSchemas.Load(t); ok {
		return s.(*goSchema)
	}
	goSchemasMu.Lock()
	defer goSchemasMu.Unlock()
	if s, ok := goSchemas.Load(t); ok {
		return s.(*goSchema)
	}
	// Recursive types refer back to schemas still being built, so nothing is
	// published before the whole graph is done.
	built := map[reflect.Type]*goSchema{}
	s := compileGo(t, built)
	for bt, bs := range built {
		goSchemas.LoadOrStore(bt, bs)
	}
	goSchemas.Store(t, s)
	return s
}

func compileGo(t reflect.Type, built map[reflect.Type]*goSchema) *goSchema {
	t = indirect(t)
	if s, ok := built[t]; ok {
		return s
	}
	if s, ok := goSchemas.Load(t); ok {
		return s.(*goSchema)
	}
	s := &goSchema{name: t.Name(), kind: t.Kind()}
	built[t] = s
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || t.Implements(jsonUnmarshaler) {
		s.custom = true
		s.text = reflect.PointerTo(t).Implements(textUnmarshaler)
		return s
	}
	switch t.Kind() {
	case reflect.Struct:
		s.fields = map[string]*goSchema{}
		addGoFields(t, s.fields, built)
		s.plan = &goPlan{byName: map[string][]goField{}}
		addPlanFields(t, nil, s.plan, built)
		s.byKey = make(map[string]keyFields, len(s.fields))
		for name, check := range s.fields {
			fs := s.plan.byName[name]
			s.byKey[name] = keyFields{check: check, fields: fs, fused: len(fs) == 1 && fs[0].schema == check}
		}
		for name, fs := range s.plan.byName {
			if _, ok := s.byKey[name]; !ok {
				s.byKey[name] = keyFields{fields: fs}
			}
		}
	case reflect.Map:
		s.elem = compileGo(t.Elem(), built)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			s.bytes = true
		} else {
			s.elem = compileGo(t.Elem(), built)
		}
	default:
		s.accept = goAccepts(t.Kind())
	}
	return s
}

// addGoFields adds the JSON fields of struct t to fields, flattening inline
// and untagged embedded structs; the first of two same-named fields wins.
func addGoFields(t reflect.Type, fields map[string]*goSchema, built map[reflect.Type]*goSchema) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			if et := indirect(f.Type); et.Kind() == reflect.Struct {
				addGoFields(et, fields, built)
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
			fields[name] = compileGo(f.Type, built)
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
			fs, ok := s.fields[k.Value]
			if !ok {
				hint := ""
				if sug := suggestName(k.Value, s.fields); sug != "" {
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
			checkGo(s.elem, n.Content[i+1], child, report)
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
			checkGo(s.elem, c, child, report)
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
