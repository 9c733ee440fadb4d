package kinds

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"unicode/utf8"
	"unsafe"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
)

// TapeKind reports whether some kind named kind decodes with DecodeTape,
// which tells the loader which decoder to try first on a document whose kind
// line says kind.
func TapeKind(kind string) bool { return tapeKinds[kind] }

var tapeKinds = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range table {
		if k.New != nil {
			m[k.Kind] = true
		}
	}
	return m
}()

// DecodeTape fills typed, fresh from k.New, from a document recorded on t
// (fastyaml.DecodeTapeShared). It reports true only when SchemaClean would
// accept the document's value (t.Value(0)) and the loader's direct decoders
// would succeed on it: DecodeGoFresh(typed, value, "") for a Go kind; for a
// kind with an Istio proto spec, a spec that is a mapping,
// DecodeGoFresh(typed, value, "spec") and DecodeProto of the spec. typed
// then equals what they make. On false typed may be partly filled and the
// caller decodes the document the generic way. It builds no generic map but
// where a type takes generic values (interfaces, map[string]any, types with
// their own JSON decoding), and hashes no key but the field look-ups.
func (k *Kind) DecodeTape(typed any, t *fastyaml.Tape) bool {
	ks, ok := kindSchemas[k]
	if !ok || len(t.Events) == 0 {
		return false
	}
	pv := reflect.ValueOf(typed)
	if pv.Kind() != reflect.Pointer || pv.IsNil() || pv.Type() != ks.goType {
		return false
	}
	s := ks.schema
	if ks.spec == nil {
		return cleanDecodeTape(s, t, 0, pv.Elem()) == nil
	}
	spec := t.Lookup(0, "spec")
	if spec < 0 || t.Events[spec].Kind != fastyaml.EvMap {
		return false
	}
	// DecodeGoFresh skipping spec, where it needs no copy of the object.
	if s.kind != reflect.Struct || s.custom || len(s.body().plan.whole) > 0 || s.body().plan.unsupported != "" {
		return false
	}
	// The spec's ProtoClean goes with its decoding (ks.spec is the
	// descriptor of k.Spec's message).
	return cleanDecodeFields(s, t, 0, pv.Elem(), "spec") == nil && decodeTapeProto(k.Spec(typed), t, spec, true) == nil
}

// errUnclean is cleanDecodeTape's error for a value tapeClean refuses.
var errUnclean = errors.New("not clean by the strict schema walk")

// cleanDecodeTape is tapeClean(s, t, i) and decodeTape(s, t, i, dv) in one
// walk, where both walk the same collection with the same schemas (structs,
// and lists other than []string and bytes): nil exactly when tapeClean says
// true and decodeTape succeeds. On error dv may be partly filled.
func cleanDecodeTape(s *goSchema, t *fastyaml.Tape, i int, dv reflect.Value) error {
	e := &t.Events[i]
	if e.Kind == fastyaml.EvNull {
		return nil // clean, and decodeGo leaves the zero value
	}
	// A struct with its own decoding (IntOrString, Quantity) has no plan.
	structs := e.Kind == fastyaml.EvMap && s.kind == reflect.Struct && !s.custom && s.body().plan.unsupported == ""
	lists := e.Kind == fastyaml.EvSeq && s.kind == reflect.Slice && !s.bytes && indirect(dv.Type()) != stringSliceType
	if s.custom || !structs && !lists {
		if !tapeClean(s, t, i) {
			return errUnclean
		}
		return decodeTape(s, t, i, dv)
	}
	for dv.Kind() == reflect.Pointer {
		p := reflect.New(dv.Type().Elem())
		dv.Set(p)
		dv = p.Elem()
	}
	if lists {
		n := 0
		for j := i + 1; j < e.End; j = t.Next(j) {
			n++
		}
		newSlice(dv, n)
		k := 0
		for j := i + 1; j < e.End; j = t.Next(j) {
			if err := cleanDecodeTape(s.body().elem, t, j, dv.Index(k)); err != nil {
				return err
			}
			k++
		}
		return nil
	}
	if err := cleanDecodeFields(s, t, i, dv, ""); err != nil {
		return err
	}
	return decodeTapeWhole(s.body().plan, t, i, dv)
}

// cleanDecodeFields is, for the mapping at event i, tapeClean of the struct
// s's fields and decodeTapeFields of its plan in one walk (the
// key skip is checked, not decoded).
func cleanDecodeFields(s *goSchema, t *fastyaml.Tape, i int, dv reflect.Value, skip string) error {
	end := t.Events[i].End
	keys := &s.body().byKey
	var base unsafe.Pointer // dv's address, once a leaf needs it
	for j := i + 1; j < end; j = t.Next(j + 1) {
		key, v := t.Str(j), j+1
		kf := keys.get(key)
		if kf == nil {
			kf = &noFields
		}
		switch {
		case key == "<<": // not checked (CheckGo skips it), but decoded
		case kf.check == nil:
			return errUnclean
		case key == skip && skip != "" || t.IsNull(v):
			if !tapeClean(kf.check, t, v) {
				return errUnclean
			}
			continue
		case kf.fused:
			if kf.leaf != noLeaf {
				if base == nil {
					base = unsafe.Pointer(dv.UnsafeAddr())
				}
				if storeLeaf(kf, t, v, base) {
					continue
				}
			}
			if err := cleanDecodeTape(kf.check, t, v, fieldOf(dv, kf.fields[0].index)); err != nil {
				return err
			}
			continue
		default:
			if !tapeClean(kf.check, t, v) {
				return errUnclean
			}
		}
		if t.IsNull(v) || key == skip && skip != "" {
			continue
		}
		for _, f := range kf.fields {
			if err := decodeTape(f.schema, t, v, fieldOf(dv, f.index)); err != nil {
				return err
			}
		}
	}
	return nil
}

// noFields is what cleanDecodeFields finds for a key a struct does not have.
var noFields keyFields

// leafKind is how storeLeaf stores a field's scalar.
type leafKind uint8

const (
	noLeaf             leafKind = iota
	leafString                  // a string kind, from an EvString
	leafBool                    // a bool kind, from an EvBool
	leafInt                     // an int or int64 kind, from an EvInt
	leafInt32                   // an int32 kind, from an EvInt
	leafPtrInt32                // a pointer to an int32 kind, from an EvInt
	leafPtrBool                 // a pointer to a bool kind, from an EvBool
	leafIntOrString             // an IntOrString, from an EvString or EvInt
	leafPtrIntOrString          // a pointer to one
	leafStringMap               // a map[string]string, from an EvMap
	leafStringSlice             // a []string, from an EvSeq
)

// leafOf says how storeLeaf stores field f of struct t, and where the field
// is from the struct's address; noLeaf for a field it does not store.
func leafOf(t reflect.Type, f goField) (leafKind, uintptr) {
	var off uintptr
	for _, i := range f.index {
		if t.Kind() != reflect.Struct {
			return noLeaf, 0
		}
		sf := t.Field(i)
		off += sf.Offset
		t = sf.Type
	}
	switch {
	case t == intOrStringType:
		return leafIntOrString, off
	case t == reflect.PointerTo(intOrStringType):
		return leafPtrIntOrString, off
	case t == stringMapType:
		return leafStringMap, off
	case t == stringSliceType:
		return leafStringSlice, off
	case f.schema.custom:
		return noLeaf, 0
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Int32:
		return leafPtrInt32, off
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
		return leafPtrBool, off
	}
	switch t.Kind() {
	case reflect.String:
		return leafString, off
	case reflect.Bool:
		return leafBool, off
	case reflect.Int, reflect.Int64:
		if t.Size() == 8 {
			return leafInt, off
		}
	case reflect.Int32:
		return leafInt32, off
	}
	return noLeaf, 0
}

// storeLeaf is cleanDecodeTape(kf.check, t, i, field) for a leaf field kf of
// the struct at base, where the scalar at event i is one it stores and clean:
// it then stores what decodeTape would and reports true. On false nothing is
// stored, and cleanDecodeTape takes the field (to decode it, or to refuse
// it).
func storeLeaf(kf *keyFields, t *fastyaml.Tape, i int, base unsafe.Pointer) bool {
	p := unsafe.Add(base, kf.offset)
	switch e := &t.Events[i]; kf.leaf {
	case leafString:
		if e.Kind != fastyaml.EvString {
			return false
		}
		str := t.Str(i)
		if stringClasses(str)&^kf.check.accept != 0 {
			return false
		}
		*(*string)(p) = str
	case leafBool:
		if e.Kind != fastyaml.EvBool || clsBool&^kf.check.accept != 0 {
			return false
		}
		*(*bool)(p) = t.Bool(i)
	case leafInt, leafInt32, leafPtrInt32:
		if e.Kind != fastyaml.EvInt {
			return false
		}
		x := t.Int(i)
		if intClasses(x)&^kf.check.accept != 0 {
			return false
		}
		switch kf.leaf { // int32s wrap, as reflect's SetInt does
		case leafInt32:
			*(*int32)(p) = int32(x)
		case leafPtrInt32:
			v := int32(x)
			*(**int32)(p) = &v
		default:
			*(*int64)(p) = x
		}
	case leafPtrBool:
		if e.Kind != fastyaml.EvBool || clsBool&^kf.check.accept != 0 {
			return false
		}
		v := t.Bool(i)
		*(**bool)(p) = &v
	case leafIntOrString, leafPtrIntOrString:
		// decodeTape's steps for a string or an int32 into an IntOrString
		// (which takes any scalar as clean).
		var v intstr.IntOrString
		switch e.Kind {
		case fastyaml.EvString:
			str := t.Str(i)
			if !utf8.ValidString(str) {
				return false
			}
			v = intstr.IntOrString{Type: intstr.String, StrVal: str}
		case fastyaml.EvInt:
			x := t.Int(i)
			if x < math.MinInt32 || x > math.MaxInt32 {
				return false
			}
			v = intstr.IntOrString{Type: intstr.Int, IntVal: int32(x)}
		default:
			return false
		}
		if kf.leaf == leafPtrIntOrString {
			pv := new(intstr.IntOrString) // v itself stays on the stack
			*pv = v
			*(**intstr.IntOrString)(p) = pv
		} else {
			*(*intstr.IntOrString)(p) = v
		}
	case leafStringMap:
		m, ok := tapeStringMap(t, i)
		if !ok {
			return false
		}
		*(*map[string]string)(p) = m
	case leafStringSlice:
		l, ok := tapeStringSlice(t, i)
		if !ok {
			return false
		}
		*(*[]string)(p) = l
	default:
		return false
	}
	return true
}

// tapeStringMap is, for the mapping at event i, tapeClean and
// decodeTapeMap into a map[string]string in one walk, when both succeed.
func tapeStringMap(t *fastyaml.Tape, i int) (map[string]string, bool) {
	e := &t.Events[i]
	if e.Kind != fastyaml.EvMap {
		return nil, false
	}
	n := 0
	for j := i + 1; j < e.End; j = t.Next(j + 1) {
		switch t.Events[j+1].Kind {
		case fastyaml.EvString, fastyaml.EvNull:
		default:
			return nil, false
		}
		n++
	}
	out := make(map[string]string, n)
	for j := i + 1; j < e.End; j += 2 { // every value is one event
		if t.Events[j+1].Kind == fastyaml.EvNull {
			out[t.Str(j)] = ""
			continue
		}
		str := t.Str(j + 1)
		if stringClasses(str) != clsString {
			return nil, false
		}
		out[t.Str(j)] = str
	}
	return out, true
}

// tapeStringSlice is, for the sequence at event i, tapeClean and
// decodeTapeSlice into a []string in one walk, when both succeed.
func tapeStringSlice(t *fastyaml.Tape, i int) ([]string, bool) {
	e := &t.Events[i]
	if e.Kind != fastyaml.EvSeq {
		return nil, false
	}
	for j := i + 1; j < e.End; j++ {
		switch t.Events[j].Kind {
		case fastyaml.EvString, fastyaml.EvNull:
		default:
			return nil, false
		}
	}
	out := make([]string, e.End-i-1) // every item is one event
	for j := i + 1; j < e.End; j++ {
		if t.Events[j].Kind == fastyaml.EvString {
			str := t.Str(j)
			if stringClasses(str) != clsString {
				return nil, false
			}
			out[j-i-1] = str
		}
	}
	return out, true
}

// tapeClean is goClean(s, t.Value(i)) without building the value.
func tapeClean(s *goSchema, t *fastyaml.Tape, i int) bool {
	e := &t.Events[i]
	if t.IsNull(i) {
		return true
	}
	if s.custom {
		return !s.text || e.Kind.IsScalar()
	}
	switch s.kind {
	case reflect.Struct:
		if e.Kind != fastyaml.EvMap {
			return false
		}
		for j := i + 1; j < e.End; j = t.Next(j + 1) {
			key := t.Str(j)
			if key == "<<" {
				continue // skipped by CheckGo too
			}
			f, ok := s.body().fields[key]
			if !ok || !tapeClean(f, t, j+1) {
				return false
			}
		}
		return true
	case reflect.Map:
		if e.Kind != fastyaml.EvMap {
			return false
		}
		for j := i + 1; j < e.End; j = t.Next(j + 1) {
			if !tapeClean(s.body().elem, t, j+1) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if s.bytes {
			return true
		}
		if e.Kind != fastyaml.EvSeq {
			return false
		}
		for j := i + 1; j < e.End; j = t.Next(j) {
			if !tapeClean(s.body().elem, t, j) {
				return false
			}
		}
		return true
	case reflect.Interface:
		return true
	}
	set, ok := tapeClasses(t, i)
	return ok && set&^s.accept == 0
}

// decodeTape is decodeGo(s, t.Value(i), dv): it decodes the collections the
// direct way and hands everything else (scalars, and whatever takes generic
// values or fails) to decodeGo itself with the value built, so results and
// errors are decodeGo's.
func decodeTape(s *goSchema, t *fastyaml.Tape, i int, dv reflect.Value) error {
	e := &t.Events[i]
	switch e.Kind {
	case fastyaml.EvInt:
		if s.custom && s.typ != intOrStringType || !s.custom && !isInt(s.kind) && !isUint(s.kind) && s.kind != reflect.Float32 && s.kind != reflect.Float64 {
			return decodeGo(s, t.Scalar(i), dv)
		}
		// decodeGo's steps for an integer into a number or an
		// IntOrString, without the integer's allocation in an interface.
		dv = allocPointers(dv)
		x := t.Int(i)
		switch {
		case s.custom: // IntOrString
			if x < math.MinInt32 || x > math.MaxInt32 {
				return decodeGoCustom(x, dv)
			}
			*dv.Addr().Interface().(*intstr.IntOrString) = intstr.IntOrString{Type: intstr.Int, IntVal: int32(x)}
		case isInt(s.kind):
			dv.SetInt(x)
		case isUint(s.kind):
			dv.SetUint(uint64(x))
		default:
			dv.SetFloat(float64(x))
		}
		return nil
	case fastyaml.EvNull, fastyaml.EvBool, fastyaml.EvFloat:
		return decodeGo(s, t.Scalar(i), dv)
	case fastyaml.EvString:
		if s.custom && s.typ == intOrStringType {
			// decodeGoCustom's steps for a string into an IntOrString.
			str := t.Str(i)
			if !utf8.ValidString(str) {
				return decodeGo(s, str, dv)
			}
			*allocPointers(dv).Addr().Interface().(*intstr.IntOrString) = intstr.IntOrString{Type: intstr.String, StrVal: str}
			return nil
		}
		if s.kind != reflect.String || s.custom {
			return decodeGo(s, t.Str(i), dv)
		}
		// decodeGo's own steps for a string into a string kind, without
		// the string's allocation in an interface.
		for dv.Kind() == reflect.Pointer {
			p := reflect.New(dv.Type().Elem())
			dv.Set(p)
			dv = p.Elem()
		}
		dv.SetString(t.Str(i))
		return nil
	}
	direct := false
	switch {
	case s.custom:
	case s.kind == reflect.Struct:
		direct = e.Kind == fastyaml.EvMap && s.body().plan.unsupported == ""
	case s.kind == reflect.Map:
		direct = e.Kind == fastyaml.EvMap && s.body().elem != nil && !isGenericMap(dv.Type())
	case s.kind == reflect.Slice:
		direct = e.Kind == fastyaml.EvSeq && !s.bytes
	}
	if !direct {
		return decodeGo(s, t.Value(i), dv)
	}
	for dv.Kind() == reflect.Pointer {
		p := reflect.New(dv.Type().Elem())
		dv.Set(p)
		dv = p.Elem()
	}
	switch s.kind {
	case reflect.Struct:
		return decodeTapeStruct(s.body().plan, t, i, dv)
	case reflect.Map:
		return decodeTapeMap(s, t, i, dv)
	}
	return decodeTapeSlice(s, t, i, dv)
}

// allocPointers fills the nil pointers dv starts with, as decodeGo does
// before it sets a value, and returns the value they lead to.
func allocPointers(dv reflect.Value) reflect.Value {
	for dv.Kind() == reflect.Pointer {
		p := reflect.New(dv.Type().Elem())
		dv.Set(p)
		dv = p.Elem()
	}
	return dv
}

// tapeClasses is valueClasses(t.Scalar(i)) without the value in an
// interface; false for a collection.
func tapeClasses(t *fastyaml.Tape, i int) (scalarClass, bool) {
	switch t.Events[i].Kind {
	case fastyaml.EvString:
		return stringClasses(t.Str(i)), true
	case fastyaml.EvBool, fastyaml.EvInt, fastyaml.EvFloat:
		return valueClasses(t.Scalar(i))
	}
	return noClass, false
}

// isGenericMap reports whether t, after pointers, is map[string]any, whose
// elements decodeGoMap takes as they are.
func isGenericMap(t reflect.Type) bool { return indirect(t) == genericMapType }

func decodeTapeStruct(p *goPlan, t *fastyaml.Tape, i int, dv reflect.Value) error {
	if err := decodeTapeFields(p, t, i, dv, ""); err != nil {
		return err
	}
	return decodeTapeWhole(p, t, i, dv)
}

// decodeTapeWhole fills the fields of p that take the whole mapping at event
// i (inline maps), from its generic value.
func decodeTapeWhole(p *goPlan, t *fastyaml.Tape, i int, dv reflect.Value) error {
	if len(p.whole) == 0 {
		return nil
	}
	m := t.Value(i)
	for _, f := range p.whole {
		if err := decodeGo(f.schema, m, fieldOf(dv, f.index)); err != nil {
			return err
		}
	}
	return nil
}

// decodeTapeFields is decodeGoFields(p, t.Value(i), dv, skip).
func decodeTapeFields(p *goPlan, t *fastyaml.Tape, i int, dv reflect.Value, skip string) error {
	end := t.Events[i].End
	for j := i + 1; j < end; j = t.Next(j + 1) {
		v := j + 1
		if t.IsNull(v) {
			continue // a null leaves the zero value
		}
		key := t.Str(j)
		if key == skip && skip != "" {
			continue
		}
		for _, f := range p.byName[key] {
			if err := decodeTape(f.schema, t, v, fieldOf(dv, f.index)); err != nil {
				return err
			}
		}
	}
	return nil
}

func decodeTapeMap(s *goSchema, t *fastyaml.Tape, i int, dv reflect.Value) error {
	end := t.Events[i].End
	n := 0
	for j := i + 1; j < end; j = t.Next(j + 1) {
		n++
	}
	dt := dv.Type()
	if dt == stringMapType { // labels, annotations, selectors
		out := make(map[string]string, n)
		for j := i + 1; j < end; j = t.Next(j + 1) {
			switch t.Events[j+1].Kind {
			case fastyaml.EvString:
				out[t.Str(j)] = t.Str(j + 1)
			case fastyaml.EvNull:
				out[t.Str(j)] = ""
			default:
				return fmt.Errorf("%w: %T into string", errNotConvertible, t.Value(j+1))
			}
		}
		dv.Set(reflect.ValueOf(out))
		return nil
	}
	if dt.Key().Kind() != reflect.String {
		return fmt.Errorf("%w: map key %s", errGoDecode, dt.Key())
	}
	out := reflect.MakeMapWithSize(dt, n)
	kt, et := dt.Key(), dt.Elem()
	for j := i + 1; j < end; j = t.Next(j + 1) {
		elem := reflect.New(et).Elem()
		if err := decodeTape(s.body().elem, t, j+1, elem); err != nil {
			return err
		}
		out.SetMapIndex(reflect.ValueOf(t.Str(j)).Convert(kt), elem)
	}
	dv.Set(out)
	return nil
}

func decodeTapeSlice(s *goSchema, t *fastyaml.Tape, i int, dv reflect.Value) error {
	end := t.Events[i].End
	n := 0
	for j := i + 1; j < end; j = t.Next(j) {
		n++
	}
	dt := dv.Type()
	if dt == stringSliceType {
		out := make([]string, n)
		k := 0
		for j := i + 1; j < end; j = t.Next(j) {
			switch t.Events[j].Kind {
			case fastyaml.EvString:
				out[k] = t.Str(j)
			case fastyaml.EvNull:
			default:
				return fmt.Errorf("%w: %T into string", errNotConvertible, t.Value(j))
			}
			k++
		}
		*dv.Addr().Interface().(*[]string) = out // no boxed slice header, as reflect.ValueOf(out) has
		return nil
	}
	newSlice(dv, n)
	k := 0
	for j := i + 1; j < end; j = t.Next(j) {
		if err := decodeTape(s.body().elem, t, j, dv.Index(k)); err != nil {
			return err
		}
		k++
	}
	return nil
}

// newSlice sets dv, a settable slice, to a new zero slice of length and
// capacity n, as dv.Set(reflect.MakeSlice(dv.Type(), n, n)) does, in one
// allocation: MakeSlice also allocates the slice header it returns. The
// capacity stays n, so appending to the decoded slice always copies it.
func newSlice(dv reflect.Value, n int) {
	if n == 0 || !dv.IsNil() {
		dv.Set(reflect.MakeSlice(dv.Type(), n, n)) // an empty slice is not nil
		return
	}
	dv.Grow(n) // from nil: a new zeroed array, at least n long
	dv.SetLen(n)
	dv.SetCap(n)
}
