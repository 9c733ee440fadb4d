package kinds

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// errGoDecode is wrapped by every DecodeGo error: the input or the type needs
// something the direct decoder does not do, or the reference converter would
// fail too. Either way the caller decodes the same value with the converter.
var errGoDecode = errors.New("not decoded by the direct Go decoder")

// goPlan is how DecodeGo fills one struct type, following the field rules of
// apimachinery's unstructured converter (not those of encoding/json): every
// field is named by its JSON tag, or by its Go name when the tag has none; a
// json:"-" field is named "-"; an anonymous field without a tag name is
// decoded from the whole object.
type goPlan struct {
	// byName lists the fields each key fills. Fields of embedded structs
	// without their own decoding are flattened in, so one key can fill
	// several fields, as it does in the converter.
	byName map[string][]goField
	// whole are embedded fields decoded from the whole object: pointers to
	// structs and types with their own JSON decoding.
	whole []goField
	// unsupported says why this struct is left to the converter, if it is.
	unsupported string
}

// goField is one field of a plan.
type goField struct {
	index  []int // from the planned struct, through embedded struct values
	schema *goSchema
}

// addPlanFields adds the fields of struct t, at index prefix, to p.
func addPlanFields(r *goRegistry, t reflect.Type, prefix []int, p *goPlan) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(slices.Clip(prefix), i)
		if !f.IsExported() {
			// The converter sets every field, and reflection cannot set this
			// one: it would panic.
			p.unsupported = fmt.Sprintf("unexported field %s.%s", t, f.Name)
			continue
		}
		name, whole, ok := converterFieldName(f)
		if !ok {
			p.unsupported = fmt.Sprintf("field %s.%s: tag %q", t, f.Name, f.Tag.Get("json"))
			continue
		}
		fs := r.of(f.Type)
		switch {
		case whole && f.Type.Kind() == reflect.Struct && !fs.custom:
			addPlanFields(r, f.Type, index, p)
		case whole:
			p.whole = append(p.whole, goField{index: index, schema: fs})
		default:
			p.byName[name] = append(p.byName[name], goField{index: index, schema: fs})
		}
	}
}

// converterFieldName names field f as the unstructured converter does, and
// says whether it is decoded from the whole object instead. ok is false for
// the "embed" option, whose meaning depends on the Go version.
func converterFieldName(f reflect.StructField) (name string, whole, ok bool) {
	tag := f.Tag.Get("json")
	if tag == "" {
		if f.Anonymous {
			return "", true, true
		}
		return f.Name, false, true
	}
	items := strings.Split(tag, ",")
	if slices.Contains(items[1:], "embed") {
		return "", false, false
	}
	if items[0] == "" {
		if f.Anonymous {
			return "", true, true
		}
		return f.Name, false, true
	}
	return items[0], false, true
}

// DecodeGo fills typed, a pointer to a Go API object (a Rollout, a Service),
// from obj, the object's generic value (map[string]any, []any, string, int64,
// float64, bool and nil, as the loader produces them). It gives exactly the
// result of runtime.DefaultUnstructuredConverter.FromUnstructured, without
// its per-field locked cache and reflective map lookups: per-type plans are
// compiled once with the schema walks' Go schema.
//
// Whenever it returns nil, typed is reflect.DeepEqual to what the converter
// makes of the same input. It returns an error wherever the converter would,
// and also for inputs and types it does not reproduce (odd number
// conversions, arrays, non-empty interfaces, unexported fields); the caller
// then decodes with the converter, which gives the reference result and
// error message. typed is zeroed first; on error it may be partly filled.
// typed never shares a map or list with obj (values taken as they are, in
// interfaces and map[string]any, are copied).
func DecodeGo(typed any, obj map[string]any) error {
	pv := reflect.ValueOf(typed)
	if pv.Kind() != reflect.Pointer || pv.IsNil() {
		return fmt.Errorf("%w: need a non-nil pointer, got %T", errGoDecode, typed)
	}
	dv := pv.Elem()
	dv.SetZero()
	return decodeGo(goSchemaOf(dv.Type()), obj, dv)
}

// DecodeGoFresh is DecodeGo for a typed value that is already zero (as k.New
// returns it), leaving out obj's top-level key skip, as if obj had no such
// key. The loader decodes an Istio object's spec with DecodeProto and the rest
// of it here; skipping the key spares it a copy of the object without its spec,
// and the zero value spares clearing a struct that has just been allocated.
// The result and errors are those of DecodeGo on a fresh value and obj
// without skip.
func DecodeGoFresh(typed any, obj map[string]any, skip string) error {
	pv := reflect.ValueOf(typed)
	if pv.Kind() != reflect.Pointer || pv.IsNil() {
		return fmt.Errorf("%w: need a non-nil pointer, got %T", errGoDecode, typed)
	}
	dv := pv.Elem()
	s := goSchemaOf(dv.Type())
	_, has := obj[skip]
	if has && (s.kind != reflect.Struct || s.custom || len(s.body().plan.whole) > 0 || dv.Kind() == reflect.Pointer) {
		// Something here would read obj as a whole: give it obj without skip.
		rest := make(map[string]any, len(obj))
		for k, v := range obj {
			if k != skip {
				rest[k] = v
			}
		}
		return decodeGo(s, rest, dv)
	}
	if !has {
		return decodeGo(s, obj, dv)
	}
	if s.body().plan.unsupported != "" {
		return fmt.Errorf("%w: %s", errGoDecode, s.body().plan.unsupported)
	}
	return decodeGoFields(s.body().plan, obj, dv, skip)
}

var (
	intOrStringType   = reflect.TypeFor[intstr.IntOrString]()
	stringMapType     = reflect.TypeFor[map[string]string]()
	stringSliceType   = reflect.TypeFor[[]string]()
	genericMapType    = reflect.TypeFor[map[string]any]()
	errNotConvertible = fmt.Errorf("%w: value does not fit the type", errGoDecode)
)

// decodeGo fills dv, a zero settable value whose base type (after pointers)
// s describes, from v.
func decodeGo(s *goSchema, v any, dv reflect.Value) error {
	if v == nil {
		return nil // the converter leaves the zero value
	}
	for dv.Kind() == reflect.Pointer {
		p := reflect.New(dv.Type().Elem())
		dv.Set(p)
		dv = p.Elem()
	}
	switch s.kind {
	case reflect.Interface:
		if dv.NumMethod() != 0 {
			return fmt.Errorf("%w: interface %s", errGoDecode, dv.Type())
		}
		dv.Set(reflect.ValueOf(copyGeneric(v)))
		return nil
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch decodeGoScalar(v, dv) {
		case scalarSet:
			return nil
		case scalarOwnDecoding:
			if s.custom {
				return decodeGoCustom(v, dv)
			}
		}
		return fmt.Errorf("%w: %T into %s", errNotConvertible, v, dv.Type())
	case reflect.Struct, reflect.Map, reflect.Slice:
	default: // arrays and kinds no API type uses
		return fmt.Errorf("%w: %s", errGoDecode, dv.Type())
	}
	if s.custom {
		return decodeGoCustom(v, dv)
	}
	switch s.kind {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %T into struct %s", errNotConvertible, v, dv.Type())
		}
		return decodeGoStruct(s.body().plan, m, dv)
	case reflect.Map:
		return decodeGoMap(s, v, dv)
	}
	return decodeGoSlice(s, v, dv)
}

func decodeGoStruct(p *goPlan, m map[string]any, dv reflect.Value) error {
	if p.unsupported != "" {
		return fmt.Errorf("%w: %s", errGoDecode, p.unsupported)
	}
	if err := decodeGoFields(p, m, dv, ""); err != nil {
		return err
	}
	for _, f := range p.whole {
		if err := decodeGo(f.schema, m, fieldOf(dv, f.index)); err != nil {
			return err
		}
	}
	return nil
}

// decodeGoFields fills the named fields of dv from m's keys, other than skip
// when skip is not "".
func decodeGoFields(p *goPlan, m map[string]any, dv reflect.Value, skip string) error {
	for key, x := range m {
		if x == nil || key == skip && skip != "" {
			continue // a null leaves the zero value
		}
		for _, f := range p.byName[key] {
			if err := decodeGo(f.schema, x, fieldOf(dv, f.index)); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyGeneric returns v with its maps and lists copied: DecodeGo keeps no
// reference to a map or list of its input, whose maps the loader recycles
// (fastyaml.Recycle) once the typed object is built.
func copyGeneric(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = copyGeneric(x)
		}
		return out
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = copyGeneric(x)
		}
		return out
	}
	return v
}

func fieldOf(dv reflect.Value, index []int) reflect.Value {
	for _, i := range index {
		dv = dv.Field(i)
	}
	return dv
}

func decodeGoMap(s *goSchema, v any, dv reflect.Value) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: %T into map %s", errNotConvertible, v, dv.Type())
	}
	if m == nil {
		return nil
	}
	dt := dv.Type()
	switch {
	case dt == stringMapType: // labels, annotations, selectors
		out := make(map[string]string, len(m))
		for k, x := range m {
			switch x := x.(type) {
			case string:
				out[k] = x
			case nil:
				out[k] = ""
			default:
				return fmt.Errorf("%w: %T into string", errNotConvertible, x)
			}
		}
		dv.Set(reflect.ValueOf(out))
		return nil
	case dt == genericMapType: // elements are taken as they are (copied)
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = copyGeneric(x)
		}
		dv.Set(reflect.ValueOf(out))
		return nil
	case dt.Key().Kind() != reflect.String:
		return fmt.Errorf("%w: map key %s", errGoDecode, dt.Key())
	}
	out := reflect.MakeMapWithSize(dt, len(m))
	kt, et := dt.Key(), dt.Elem()
	for k, x := range m {
		elem := reflect.New(et).Elem()
		if err := decodeGo(s.body().elem, x, elem); err != nil {
			return err
		}
		out.SetMapIndex(reflect.ValueOf(k).Convert(kt), elem)
	}
	dv.Set(out)
	return nil
}

func decodeGoSlice(s *goSchema, v any, dv reflect.Value) error {
	dt := dv.Type()
	if str, ok := v.(string); ok && dt.Elem().Kind() == reflect.Uint8 {
		// Bytes are base64 text, decoded through a JSON round trip of the
		// string, which gives the string back when it is valid UTF-8.
		if str == "" {
			dv.Set(reflect.MakeSlice(dt, 0, 0))
			return nil
		}
		if !utf8.ValidString(str) {
			return fmt.Errorf("%w: bytes from invalid UTF-8", errGoDecode)
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return fmt.Errorf("%w: %w", errNotConvertible, err)
		}
		dv.SetBytes(b)
		return nil
	}
	l, ok := v.([]any)
	if !ok || s.bytes {
		// A list into []byte converts element by element in the converter;
		// the compiled schema has no element for bytes, so leave it.
		return fmt.Errorf("%w: %T into slice %s", errNotConvertible, v, dt)
	}
	if l == nil {
		return nil
	}
	if dt == stringSliceType {
		out := make([]string, len(l))
		for i, x := range l {
			switch x := x.(type) {
			case string:
				out[i] = x
			case nil:
			default:
				return fmt.Errorf("%w: %T into string", errNotConvertible, x)
			}
		}
		dv.Set(reflect.ValueOf(out))
		return nil
	}
	out := reflect.MakeSlice(dt, len(l), len(l))
	for i, x := range l {
		if err := decodeGo(s.body().elem, x, out.Index(i)); err != nil {
			return err
		}
	}
	dv.Set(out)
	return nil
}

// goScalarOutcome is what decodeGoScalar did.
type goScalarOutcome int

const (
	scalarSet         goScalarOutcome = iota // dv holds the value
	scalarRefused                            // the converter fails here
	scalarOwnDecoding                        // the converter hands it to the type's own decoding, if any
)

// decodeGoScalar converts v into dv, a bool, string or number kind, by the
// converter's rules: the value's own kind or a conversion within the
// integers and floats (integers wrap as Go conversions do; floats go into
// integers only when whole), and nothing across bools, numbers and strings.
// Values that are not even convertible in Go (a string into an int, a map
// into a string) go to the type's own JSON decoding if it has one.
func decodeGoScalar(v any, dv reflect.Value) goScalarOutcome {
	k := dv.Kind()
	switch x := v.(type) {
	case string:
		if k == reflect.String {
			dv.SetString(x)
			return scalarSet
		}
	case bool:
		if k == reflect.Bool {
			dv.SetBool(x)
			return scalarSet
		}
	case int64:
		switch {
		case isInt(k):
			dv.SetInt(x)
		case isUint(k):
			dv.SetUint(uint64(x))
		case k == reflect.Float32 || k == reflect.Float64:
			dv.SetFloat(float64(x))
		case k == reflect.String:
			return scalarRefused // convertible in Go (to a rune), refused by the converter
		default:
			return scalarOwnDecoding
		}
		return scalarSet
	case float64:
		switch {
		case k == reflect.Float32 || k == reflect.Float64:
			dv.SetFloat(x)
		case isInt(k) || isUint(k):
			// Out-of-range conversions are implementation-defined in Go:
			// leave them to the converter.
			if x != math.Trunc(x) {
				return scalarRefused
			}
			if isInt(k) && x >= -twoTo63 && x < twoTo63 {
				dv.SetInt(int64(x))
			} else if isUint(k) && x >= 0 && x < 2*twoTo63 {
				dv.SetUint(uint64(x))
			} else {
				return scalarRefused
			}
		default:
			return scalarOwnDecoding
		}
		return scalarSet
	case map[string]any, []any:
	default:
		return scalarRefused // not a value the loader produces
	}
	return scalarOwnDecoding
}

func isInt(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Int64
}

func isUint(k reflect.Kind) bool {
	return k >= reflect.Uint && k <= reflect.Uint64
}

// decodeGoCustom decodes v into dv, a type with its own JSON decoding, as the
// converter does: v written as JSON and handed to the type's UnmarshalJSON.
// IntOrString is filled directly where the result provably is the same; for
// strings and integers the JSON text is written without encoding/json.
func decodeGoCustom(v any, dv reflect.Value) error {
	if dv.Type() == intOrStringType {
		switch x := v.(type) {
		// Stored through a pointer: reflect.ValueOf would box the struct.
		case string:
			if utf8.ValidString(x) { // JSON round trips it unchanged
				*dv.Addr().Interface().(*intstr.IntOrString) = intstr.IntOrString{Type: intstr.String, StrVal: x}
				return nil
			}
		case int64:
			if x >= math.MinInt32 && x <= math.MaxInt32 {
				*dv.Addr().Interface().(*intstr.IntOrString) = intstr.IntOrString{Type: intstr.Int, IntVal: int32(x)}
				return nil
			}
		}
	}
	data, err := marshalJSON(v)
	if err != nil {
		return fmt.Errorf("%w: %w", errNotConvertible, err)
	}
	u, ok := dv.Addr().Interface().(json.Unmarshaler)
	if !ok {
		return fmt.Errorf("%w: %s has no UnmarshalJSON", errGoDecode, dv.Type())
	}
	if err := u.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("%w: %s: %w", errNotConvertible, dv.Type(), err)
	}
	return nil
}

// marshalJSON is json.Marshal(v), with the common scalars written directly.
func marshalJSON(v any) ([]byte, error) {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(nil, x, 10), nil
	case bool:
		return strconv.AppendBool(nil, x), nil
	case string:
		if plainJSONString(x) {
			b := make([]byte, 0, len(x)+2)
			b = append(b, '"')
			b = append(b, x...)
			return append(b, '"'), nil
		}
	}
	return json.Marshal(v)
}

// plainJSONString reports whether encoding/json writes s between quotes as
// it is: printable ASCII other than the quote, the backslash and the
// characters it escapes for HTML.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
