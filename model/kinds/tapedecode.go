package kinds

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"unicode/utf8"

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
	structs := e.Kind == fastyaml.EvMap && s.kind == reflect.Struct && s.body().plan.unsupported == ""
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
	for j := i + 1; j < end; j = t.Next(j + 1) {
		key, v := t.Str(j), j+1
		kf := s.body().byKey[key]
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
