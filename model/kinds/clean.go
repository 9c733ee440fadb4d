package kinds

import (
	"reflect"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// GoClean reports whether CheckGo(t, n, ...) would report no problem for the
// yaml node n that the generic value v was converted from (map[string]any,
// []any, string, int64, float64, bool, nil: what the loader's converter
// makes of a node). It shares the field tables and scalar rules of CheckGo,
// builds no paths and allocates nothing.
//
// It never says true when CheckGo would report. Where the value forgot what
// the node said it says false, and the caller runs the node walk: a number 5
// may have been written 5.0 (no enum takes that), a string .inf may have been
// a plain float. A few node details cannot be seen in a value at all, so the
// contract holds only for documents without them, and the fast decoder must
// fall back to nodes when it meets one:
//   - local tags and ill-fitting standard tags on scalars (`!foo x`,
//     `!!int abc`, `!!float x`): the text decodes to a string and is taken
//     for a !!str;
//   - merge keys (`<<: *base`): the node walks skip them in objects but check
//     them as a value in maps, and the value holds the merged keys instead;
//   - duplicate keys: the node walks check every copy, the value keeps the
//     last;
//   - aliases used as keys: the node walks read the alias, the value its
//     target.
func GoClean(t reflect.Type, v any) bool {
	return goClean(goSchemaOf(t), v)
}

func goClean(s *goSchema, v any) bool {
	if v == nil {
		return true
	}
	if s.custom {
		return !s.text || !isCollection(v)
	}
	switch s.kind {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, x := range m {
			if k == "<<" {
				continue // skipped by CheckGo too
			}
			f, ok := s.body().fields[k]
			if !ok || !goClean(f, x) {
				return false
			}
		}
		return true
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, x := range m {
			if !goClean(s.body().elem, x) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if s.bytes {
			return true
		}
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, x := range l {
			if !goClean(s.body().elem, x) {
				return false
			}
		}
		return true
	case reflect.Interface:
		return true
	}
	set, ok := valueClasses(v)
	return ok && set&^s.accept == 0
}

// ProtoClean reports whether CheckProto(md, n, ...) would report no problem
// for the node n that the generic value v was converted from, with the same
// contract as GoClean.
func ProtoClean(md protoreflect.MessageDescriptor, v any) bool {
	if v == nil {
		return true
	}
	if wk := wellKnown(md); wk != "" {
		return wellKnownClean(wk, v)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	fields := md.Fields()
	for k, x := range m {
		if k == "<<" {
			continue // skipped by CheckProto too
		}
		fd := fields.ByJSONName(k)
		if fd == nil || !protoFieldClean(fd, x) {
			return false
		}
	}
	return true
}

func protoFieldClean(fd protoreflect.FieldDescriptor, v any) bool {
	switch {
	case v == nil:
		return true
	case fd.IsMap():
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, x := range m {
			if !protoSingleClean(fd.MapValue(), x) {
				return false
			}
		}
		return true
	case fd.IsList():
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, x := range l {
			if !protoSingleClean(fd, x) {
				return false
			}
		}
		return true
	}
	return protoSingleClean(fd, v)
}

func protoSingleClean(fd protoreflect.FieldDescriptor, v any) bool {
	if v == nil {
		return true
	}
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return ProtoClean(fd.Message(), v)
	}
	set, ok := valueClasses(v)
	if !ok {
		return false
	}
	text, _ := v.(string) // only a string's text is known
	return set.each(func(c scalarClass) bool { return protoScalarFit(fd, c, text) == fitOK })
}

func wellKnownClean(name string, v any) bool {
	switch name {
	case "Struct", "Value", "ListValue", "Any", "Empty":
		return true
	case "Duration":
		s, ok := v.(string) // a number's text never ends in a unit
		return ok && validDuration(s)
	case "BoolValue":
		_, ok := v.(bool)
		return ok
	case "Timestamp", "StringValue", "BytesValue":
		return !isCollection(v)
	}
	set, ok := valueClasses(v)
	if !ok {
		return false
	}
	text, _ := v.(string)
	return set.each(func(c scalarClass) bool { return wrapperFit(name, c, text) == fitOK })
}

func isCollection(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// kindSchema is what the schema walks need of a typed kind, computed once.
type kindSchema struct {
	goType reflect.Type
	schema *goSchema                      // goSchemaOf(goType.Elem())
	spec   protoreflect.MessageDescriptor // nil unless the spec is an Istio proto
}

var kindSchemas = func() map[*Kind]kindSchema {
	m := make(map[*Kind]kindSchema, len(table))
	for _, k := range table {
		if k.New == nil {
			continue
		}
		obj := k.New()
		s := kindSchema{goType: reflect.TypeOf(obj)}
		s.schema = goSchemaOf(s.goType.Elem())
		if k.Spec != nil {
			s.spec = k.Spec(obj).ProtoReflect().Descriptor()
		}
		m[k] = s
	}
	return m
}()

// SchemaClean reports whether the loader's strict schema walk of an object
// of this kind (CheckGo over the whole object, CheckProto over an Istio spec)
// would report no problem, given the object as generic values; see GoClean
// for the contract. Untyped kinds have no schema walk and are always clean.
func (k *Kind) SchemaClean(obj map[string]any) bool {
	s, ok := kindSchemas[k]
	if !ok {
		return true
	}
	return GoClean(s.goType, obj) && (s.spec == nil || ProtoClean(s.spec, obj["spec"]))
}
