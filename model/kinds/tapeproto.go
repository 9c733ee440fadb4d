package kinds

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
)

// tapeProtoClean is ProtoClean(md, t.Value(i)) without building the value.
func tapeProtoClean(md protoreflect.MessageDescriptor, t *fastyaml.Tape, i int) bool {
	e := &t.Events[i]
	if t.IsNull(i) {
		return true
	}
	if wk := wellKnown(md); wk != "" {
		return wellKnownClean(wk, t.Value(i))
	}
	if e.Kind != fastyaml.EvMap {
		return false
	}
	fields := md.Fields()
	for j := i + 1; j < e.End; j = t.Next(j + 1) {
		key := t.Str(j)
		if key == "<<" {
			continue // skipped by CheckProto too
		}
		fd := fields.ByJSONName(key)
		if fd == nil || !tapeProtoFieldClean(fd, t, j+1) {
			return false
		}
	}
	return true
}

// tapeProtoFieldClean is protoFieldClean(fd, t.Value(i)).
func tapeProtoFieldClean(fd protoreflect.FieldDescriptor, t *fastyaml.Tape, i int) bool {
	e := &t.Events[i]
	switch {
	case t.IsNull(i):
		return true
	case fd.IsMap():
		if e.Kind != fastyaml.EvMap {
			return false
		}
		for j := i + 1; j < e.End; j = t.Next(j + 1) {
			if !tapeProtoSingleClean(fd.MapValue(), t, j+1) {
				return false
			}
		}
		return true
	case fd.IsList():
		if e.Kind != fastyaml.EvSeq {
			return false
		}
		for j := i + 1; j < e.End; j = t.Next(j) {
			if !tapeProtoSingleClean(fd, t, j) {
				return false
			}
		}
		return true
	}
	return tapeProtoSingleClean(fd, t, i)
}

// tapeProtoSingleClean is protoSingleClean(fd, t.Value(i)).
func tapeProtoSingleClean(fd protoreflect.FieldDescriptor, t *fastyaml.Tape, i int) bool {
	e := &t.Events[i]
	if t.IsNull(i) {
		return true
	}
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return tapeProtoClean(fd.Message(), t, i)
	}
	switch e.Kind {
	case fastyaml.EvString:
		text := t.Str(i)
		return stringClasses(text).each(func(c scalarClass) bool { return protoScalarFit(fd, c, text) == fitOK })
	case fastyaml.EvBool, fastyaml.EvInt, fastyaml.EvFloat:
		return protoSingleClean(fd, t.Scalar(i))
	}
	return false // valueClasses takes no collection
}

// decodeTapeProto is DecodeProto(m, t.Value(i)) for a mapping at event i;
// strict adds ProtoClean of m's descriptor, in the same walk: the error is
// then errUnclean where ProtoClean would say false and DecodeProto succeed.
func decodeTapeProto(m proto.Message, t *fastyaml.Tape, i int, strict bool) error {
	if err := decodeTapeMessage(m.ProtoReflect(), t, i, strict); err != nil {
		return err
	}
	return proto.CheckInitialized(m)
}

// decodeTapeMessage is decodeMessage(m, t.Value(i)) for a mapping at event
// i, and with strict tapeProtoClean(m.Descriptor(), t, i) too (see
// decodeTapeProto).
func decodeTapeMessage(m protoreflect.Message, t *fastyaml.Tape, i int, strict bool) error {
	return decodeTapeMessageInfo(infoOf(m), m, t, i, strict)
}

// decodeTapeMessageInfo is decodeTapeMessage with m's msgInfo, mi, known.
func decodeTapeMessageInfo(mi *msgInfo, m protoreflect.Message, t *fastyaml.Tape, i int, strict bool) error {
	if mi.unsupported != "" {
		return unsupported("%s: %s", m.Descriptor().FullName(), mi.unsupported)
	}
	if mi.wellKnown != "" {
		if strict && !tapeProtoClean(m.Descriptor(), t, i) {
			return errUnclean
		}
		return decodeWellKnown(m, mi.wellKnown, t.Value(i))
	}
	end := t.Events[i].End
	for j := i + 1; j < end; j = t.Next(j + 1) {
		key := t.Str(j)
		kf, ok := mi.fields[key]
		// The strict walk takes JSON names only (Fields().ByJSONName): a key
		// fields holds but by its proto name, or not at all, is unknown to
		// it. An ambiguous key fails below either way.
		if strict && key != "<<" && (!ok || kf.byProtoName && !kf.ambiguous) {
			return errUnclean
		}
		if use, err := usableKey(key, kf, ok); !use {
			if err != nil {
				return err
			}
			continue
		}
		fd := kf.fd
		if kf.byProtoName && t.Lookup(i, fd.JSONName()) >= 0 {
			continue // the JSON name wins
		}
		raw := j + 1
		if t.IsNull(raw) {
			continue // null leaves the field unset
		}
		fieldStrict := strict && key != "<<"
		if kf.direct != nil {
			done, err := decodeTapeDirect(m, kf.direct, fd, t, raw, fieldStrict)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if done {
				continue
			}
		}
		val := m.NewField(fd)
		var err error
		switch {
		case fd.IsList():
			err = decodeTapeList(val.List(), fd, t, raw, fieldStrict)
		case fd.IsMap():
			if fieldStrict && !tapeProtoFieldClean(fd, t, raw) {
				return errUnclean
			}
			err = decodeTapeMap2(val.Map(), fd, t, raw)
		default:
			val, err = decodeTapeSingular(val, fd, t, raw, fieldStrict)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		setField(m, fd, val)
	}
	return nil
}

func decodeTapeList(l protoreflect.List, fd protoreflect.FieldDescriptor, t *fastyaml.Tape, i int, strict bool) error {
	e := &t.Events[i]
	if e.Kind != fastyaml.EvSeq {
		if strict {
			return errUnclean // tapeProtoFieldClean takes only a list
		}
		return decodeList(l, fd, t.Value(i))
	}
	k := 0
	for j := i + 1; j < e.End; j = t.Next(j) {
		ev, err := decodeTapeSingular(l.NewElement(), fd, t, j, strict)
		if err != nil {
			return fmt.Errorf("[%d]: %w", k, err)
		}
		l.Append(ev)
		k++
	}
	return nil
}

// decodeTapeMap2 is decodeMap (the proto one) over a tape.
func decodeTapeMap2(mp protoreflect.Map, fd protoreflect.FieldDescriptor, t *fastyaml.Tape, i int) error {
	e := &t.Events[i]
	if e.Kind != fastyaml.EvMap {
		return decodeMap(mp, fd, t.Value(i))
	}
	vfd := fd.MapValue()
	for j := i + 1; j < e.End; j = t.Next(j + 1) {
		key := t.Str(j)
		if !utf8.ValidString(key) {
			return unsupported("map key with invalid UTF-8")
		}
		ev, err := decodeTapeSingular(mp.NewValue(), vfd, t, j+1, false)
		if err != nil {
			return fmt.Errorf("[%q]: %w", key, err)
		}
		mp.Set(protoreflect.ValueOfString(key).MapKey(), ev)
	}
	return nil
}

// decodeTapeSingular is decodeSingular(zero, fd, t.Value(i)), and with
// strict tapeProtoSingleClean(fd, t, i) too (see decodeTapeProto).
func decodeTapeSingular(zero protoreflect.Value, fd protoreflect.FieldDescriptor, t *fastyaml.Tape, i int, strict bool) (protoreflect.Value, error) {
	e := &t.Events[i]
	if fd.Kind() == protoreflect.MessageKind && e.Kind == fastyaml.EvMap {
		if mi := infoOf(zero.Message()); mi.wellKnown == "" {
			return zero, decodeTapeMessage(zero.Message(), t, i, strict)
		}
	}
	if strict && !tapeProtoSingleClean(fd, t, i) {
		return protoreflect.Value{}, errUnclean
	}
	switch {
	case fd.Kind() == protoreflect.StringKind && e.Kind == fastyaml.EvString:
		// decodeScalar's steps, without the string's allocation in an
		// interface.
		str := t.Str(i)
		if !utf8.ValidString(str) {
			return protoreflect.Value{}, unsupported("invalid UTF-8")
		}
		return protoreflect.ValueOfString(str), nil
	}
	return decodeSingular(zero, fd, t.Value(i))
}

// directKind says how the tape decoder fills a field of a generated message
// itself.
type directKind uint8

const (
	directString    directKind = iota + 1 // a singular string without presence, Go type string
	directStrings                         // a repeated string, []string
	directMessages                        // a repeated message, []*T
	directStringMap                       // a map<string, string>, map[string]string
	directInt32                           // a singular int32 without presence, Go kind int32
	directUint32                          // a singular uint32 without presence, Go kind uint32
	directEnum                            // a singular enum without presence, Go kind int32
	directMessage                         // a singular message, *T
)

// directField is the Go struct field of a generated message that holds one
// proto field, found once per message type. protoreflect's Set and
// List.Append convert every value they store (a string is boxed twice, a
// list grows one append at a time); the tape decoder stores the same Go
// values there itself.
type directField struct {
	kind   directKind
	offset uintptr      // of the field in the message's struct
	typ    reflect.Type // the field's type
	// elem is, for directMessage and directMessages, the msgInfo of the
	// message, found on first use (infoOf is a look-up by full name).
	elem atomic.Pointer[msgInfo]
}

// elemInfo returns the msgInfo of m, the message d holds.
func (d *directField) elemInfo(m protoreflect.Message) *msgInfo {
	if mi := d.elem.Load(); mi != nil {
		return mi
	}
	mi := infoOf(m)
	d.elem.Store(mi)
	return mi
}

// directFieldOf is the directField of fd in m's Go struct, or nil where the
// field is of another kind (oneof members, fields with presence, maps,
// scalars other than strings) or m is not a generated message.
func directFieldOf(m protoreflect.Message, fd protoreflect.FieldDescriptor) *directField {
	if fd.ContainingOneof() != nil || fd.IsExtension() {
		return nil
	}
	var kind directKind
	switch {
	case fd.IsMap():
		if fd.MapKey().Kind() != protoreflect.StringKind || fd.MapValue().Kind() != protoreflect.StringKind {
			return nil
		}
		kind = directStringMap
	case fd.Kind() == protoreflect.StringKind && fd.IsList():
		kind = directStrings
	case fd.Kind() == protoreflect.StringKind && !fd.HasPresence():
		kind = directString
	case fd.Kind() == protoreflect.MessageKind && fd.IsList():
		kind = directMessages
	case fd.IsList():
		return nil
	case fd.Kind() == protoreflect.MessageKind:
		kind = directMessage
	case fd.HasPresence():
		return nil
	case fd.Kind() == protoreflect.Int32Kind || fd.Kind() == protoreflect.Sint32Kind || fd.Kind() == protoreflect.Sfixed32Kind:
		kind = directInt32
	case fd.Kind() == protoreflect.Uint32Kind || fd.Kind() == protoreflect.Fixed32Kind:
		kind = directUint32
	case fd.Kind() == protoreflect.EnumKind:
		kind = directEnum
	default:
		return nil
	}
	gt := reflect.TypeOf(m.Interface())
	if gt.Kind() != reflect.Pointer || gt.Elem().Kind() != reflect.Struct {
		return nil
	}
	st := gt.Elem()
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		if !f.IsExported() || !protoTagNames(f.Tag.Get("protobuf"), fd) {
			continue
		}
		switch kind {
		case directString:
			if f.Type != stringType {
				return nil
			}
		case directStrings:
			if f.Type != stringSliceType {
				return nil
			}
		case directStringMap:
			if f.Type != stringMapType {
				return nil
			}
		case directInt32, directEnum:
			if f.Type.Kind() != reflect.Int32 {
				return nil
			}
		case directUint32:
			if f.Type.Kind() != reflect.Uint32 {
				return nil
			}
		case directMessages, directMessage:
			pt := f.Type
			if kind == directMessages {
				if pt.Kind() != reflect.Slice {
					return nil
				}
				pt = pt.Elem()
			}
			if pt.Kind() != reflect.Pointer || pt.Elem().Kind() != reflect.Struct {
				return nil
			}
			// Well-known messages have JSON forms of their own.
			elem, ok := reflect.New(pt.Elem()).Interface().(proto.Message)
			if !ok || elem.ProtoReflect().Descriptor().FullName() != fd.Message().FullName() || wellKnown(fd.Message()) != "" {
				return nil
			}
		}
		return &directField{kind: kind, offset: f.Offset, typ: f.Type}
	}
	return nil
}

var stringType = reflect.TypeFor[string]()

// protoTagNames reports whether a generated field's protobuf struct tag
// ("bytes,1,rep,name=hosts,proto3") is that of fd: its number and name.
func protoTagNames(tag string, fd protoreflect.FieldDescriptor) bool {
	parts := strings.Split(tag, ",")
	if len(parts) < 2 || parts[1] != strconv.Itoa(int(fd.Number())) {
		return false
	}
	for _, p := range parts[2:] {
		if p == "name="+string(fd.Name()) {
			return true
		}
	}
	return false
}

// decodeTapeDirect fills the field d of m from the value at event i (not a
// null) as decodeTapeMessage's protoreflect steps would, with the same
// strict checks, and reports whether it did. It leaves m unchanged and says
// false for every value those steps take another way (a value of another
// shape, an item that is not a string or a mapping), which they then
// decode. On an error m may be partly filled.
func decodeTapeDirect(m protoreflect.Message, d *directField, fd protoreflect.FieldDescriptor, t *fastyaml.Tape, i int, strict bool) (bool, error) {
	e := &t.Events[i]
	switch d.kind {
	case directString:
		if e.Kind != fastyaml.EvString {
			return false, nil
		}
		if strict && !tapeProtoSingleClean(fd, t, i) {
			return false, errUnclean
		}
		s := t.Str(i)
		if !utf8.ValidString(s) {
			return false, unsupported("invalid UTF-8")
		}
		*(*string)(fieldAt(m, d)) = s
		return true, nil
	case directStrings:
		if e.Kind != fastyaml.EvSeq {
			return false, nil
		}
		n := 0
		for j := i + 1; j < e.End; j = t.Next(j) {
			if t.Events[j].Kind != fastyaml.EvString {
				return false, nil
			}
			n++
		}
		if n == 0 {
			return true, nil // an empty list leaves the field nil
		}
		out := make([]string, n)
		k := 0
		for j := i + 1; j < e.End; j++ {
			if strict && !tapeProtoSingleClean(fd, t, j) {
				return false, fmt.Errorf("[%d]: %w", k, errUnclean)
			}
			s := t.Str(j)
			if !utf8.ValidString(s) {
				return false, fmt.Errorf("[%d]: %w", k, unsupported("invalid UTF-8"))
			}
			out[k] = s
			k++
		}
		*(*[]string)(fieldAt(m, d)) = out
		return true, nil
	case directStringMap:
		if e.Kind != fastyaml.EvMap {
			return false, nil
		}
		n := 0
		for j := i + 1; j < e.End; j = t.Next(j + 1) {
			if t.Events[j+1].Kind != fastyaml.EvString {
				return false, nil
			}
			n++
		}
		if strict && !tapeProtoFieldClean(fd, t, i) {
			return false, errUnclean
		}
		out := make(map[string]string, n) // even empty: protoreflect sets an empty map
		for j := i + 1; j < e.End; j += 2 {
			key := t.Str(j)
			if !utf8.ValidString(key) {
				return false, unsupported("map key with invalid UTF-8")
			}
			val := t.Str(j + 1)
			if !utf8.ValidString(val) {
				return false, fmt.Errorf("[%q]: %w", key, unsupported("invalid UTF-8"))
			}
			out[key] = val
		}
		*(*map[string]string)(fieldAt(m, d)) = out
		return true, nil
	case directInt32, directUint32:
		if e.Kind != fastyaml.EvInt {
			return false, nil
		}
		// decodeScalar's integer and unsigned, and tapeProtoSingleClean's
		// fit of both classes an int64 has, without it in an interface.
		x := t.Int(i)
		if x < 0 && d.kind == directUint32 || x < math.MinInt32 || x > math.MaxUint32 || x > math.MaxInt32 && d.kind == directInt32 {
			return false, nil // the protoreflect steps refuse it
		}
		*(*int32)(fieldAt(m, d)) = int32(uint32(x)) // the same bits as the uint32
		return true, nil
	case directEnum:
		if e.Kind != fastyaml.EvString {
			return false, nil
		}
		if strict && !tapeProtoSingleClean(fd, t, i) {
			return false, errUnclean
		}
		ev := fd.Enum().Values().ByName(protoreflect.Name(t.Str(i)))
		if ev == nil {
			return false, nil
		}
		*(*int32)(fieldAt(m, d)) = int32(ev.Number())
		return true, nil
	case directMessage:
		if e.Kind != fastyaml.EvMap {
			return false, nil
		}
		ev := reflect.New(d.typ.Elem())
		pm := ev.Interface().(proto.Message).ProtoReflect()
		if err := decodeTapeMessageInfo(d.elemInfo(pm), pm, t, i, strict); err != nil {
			return false, err
		}
		*(*unsafe.Pointer)(fieldAt(m, d)) = ev.UnsafePointer()
		return true, nil
	}
	// directMessages
	if e.Kind != fastyaml.EvSeq {
		return false, nil
	}
	n := 0
	for j := i + 1; j < e.End; j = t.Next(j) {
		if t.Events[j].Kind != fastyaml.EvMap {
			return false, nil
		}
		n++
	}
	if n == 0 {
		return true, nil
	}
	out := reflect.NewAt(d.typ, fieldAt(m, d)).Elem()
	newSlice(out, n)
	et := d.typ.Elem().Elem()
	k := 0
	for j := i + 1; j < e.End; j = t.Next(j) {
		ev := reflect.New(et)
		pm := ev.Interface().(proto.Message).ProtoReflect()
		if err := decodeTapeMessageInfo(d.elemInfo(pm), pm, t, j, strict); err != nil {
			return false, fmt.Errorf("[%d]: %w", k, err)
		}
		out.Index(k).Set(ev)
		k++
	}
	return true, nil
}

// fieldAt is the address of the field d of the generated message m.
func fieldAt(m protoreflect.Message, d *directField) unsafe.Pointer {
	return unsafe.Add(reflect.ValueOf(m.Interface()).UnsafePointer(), d.offset)
}
