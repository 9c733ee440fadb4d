package kinds

import (
	"fmt"
	"unicode/utf8"

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
	mi := infoOf(m)
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
