package kinds

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/golang/protobuf/jsonpb" //nolint:staticcheck // Istio's generated UnmarshalJSON uses it: the types it treats specially are detected by its interface
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ErrUnsupported is returned (wrapped) by DecodeProto when the input or the
// message type needs something it does not implement; the caller then decodes
// the same value the reference way (JSON text and jsonpb).
var ErrUnsupported = errors.New("not supported by the direct proto decoder")

// DecodeProto fills m from v, the generic value (map[string]any, []any,
// string, int64, float64, bool, nil, as the loader produces them) of its JSON
// form, with the same result as golang/protobuf jsonpb with unknown fields
// allowed (what Istio's generated UnmarshalJSON uses), but without writing and
// re-reading JSON text. It is deliberately stricter than jsonpb on odd inputs
// (fractional numbers for integers, non-canonical numeric strings, invalid
// UTF-8, extension keys, both spellings of one field): it returns an error
// instead, and the caller falls back to jsonpb. It never succeeds where jsonpb
// fails. m should be empty; on error it may be partly filled.
func DecodeProto(m proto.Message, v map[string]any) error {
	if v == nil {
		return nil // jsonpb treats a top-level null as a no-op
	}
	mr := m.ProtoReflect()
	if err := decodeMessage(mr, v); err != nil {
		return err
	}
	return proto.CheckInitialized(m)
}

// msgInfo is what decoding needs to know about one message type, computed once.
type msgInfo struct {
	// fields maps each accepted key (proto name and JSON name) to its field.
	fields map[string]keyField
	// wellKnown is the google.protobuf type name ("Duration", "UInt32Value"), if any.
	wellKnown string
	// unsupported says why this type cannot be decoded directly, if it cannot.
	unsupported string
}

type keyField struct {
	fd protoreflect.FieldDescriptor
	// byProtoName is set when the key is the proto name and differs from the
	// JSON name; jsonpb lets the JSON name win when both are present.
	byProtoName bool
	// ambiguous is set when the key names two different fields, which jsonpb
	// would both fill; not worth reproducing.
	ambiguous bool
	// direct, when set, is the Go struct field that holds fd, for the tape
	// decoder to fill without protoreflect's per-value conversions.
	direct *directField
}

var msgInfos sync.Map // protoreflect.FullName → *msgInfo

func infoOf(m protoreflect.Message) *msgInfo {
	md := m.Descriptor()
	if mi, ok := msgInfos.Load(md.FullName()); ok {
		return mi.(*msgInfo)
	}
	mi := &msgInfo{}
	if _, custom := m.Interface().(jsonpb.JSONPBUnmarshaler); custom { //nolint:staticcheck // see the import
		mi.unsupported = "custom JSONPB unmarshaler"
	}
	// The types jsonpb gives a special JSON form; other google.protobuf
	// messages (Empty, descriptors) are ordinary objects to it.
	if name := wellKnown(md); name != "" {
		switch name {
		case "Duration", "BoolValue", "StringValue", "BytesValue", "Int32Value",
			"UInt32Value", "Int64Value", "UInt64Value", "FloatValue", "DoubleValue":
			mi.wellKnown = name
		case "Any", "Timestamp", "Struct", "Value", "ListValue", "NullValue":
			mi.wellKnown = name
			mi.unsupported = "well-known type " + name
		}
	}
	fds := md.Fields()
	mi.fields = make(map[string]keyField, 2*fds.Len())
	add := func(key string, kf keyField) {
		if prev, ok := mi.fields[key]; ok && prev.fd != kf.fd {
			kf.ambiguous = true
		}
		mi.fields[key] = kf
	}
	for i := 0; i < fds.Len(); i++ {
		fd := fds.Get(i)
		if fd.Kind() == protoreflect.GroupKind {
			mi.unsupported = "group field " + string(fd.Name())
		}
		if fd.IsMap() && fd.MapKey().Kind() != protoreflect.StringKind {
			mi.unsupported = "map with non-string keys " + string(fd.Name())
		}
		direct := directFieldOf(m, fd)
		add(fd.JSONName(), keyField{fd: fd, direct: direct})
		if string(fd.Name()) != fd.JSONName() {
			add(string(fd.Name()), keyField{fd: fd, byProtoName: true, direct: direct})
		}
	}
	actual, _ := msgInfos.LoadOrStore(md.FullName(), mi)
	return actual.(*msgInfo)
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

func decodeMessage(m protoreflect.Message, v map[string]any) error {
	mi := infoOf(m)
	if mi.unsupported != "" {
		return unsupported("%s: %s", m.Descriptor().FullName(), mi.unsupported)
	}
	if mi.wellKnown != "" {
		return decodeWellKnown(m, mi.wellKnown, v)
	}
	for key, raw := range v {
		kf, ok := mi.fields[key]
		if use, err := usableKey(key, kf, ok); !use {
			if err != nil {
				return err
			}
			continue
		}
		fd := kf.fd
		if kf.byProtoName {
			if _, both := v[fd.JSONName()]; both {
				continue // the JSON name wins
			}
		}
		if raw == nil {
			continue // null leaves the field unset (no Value or NullValue fields here)
		}
		val := m.NewField(fd)
		var err error
		switch {
		case fd.IsList():
			err = decodeList(val.List(), fd, raw)
		case fd.IsMap():
			err = decodeMap(val.Map(), fd, raw)
		default:
			val, err = decodeSingular(val, fd, raw)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		setField(m, fd, val)
	}
	return nil
}

// setField sets a decoded field as jsonpb would: it sets fields in
// declaration order, so of two members of one oneof the later-declared one
// wins whatever the order in the document.
func setField(m protoreflect.Message, fd protoreflect.FieldDescriptor, val protoreflect.Value) {
	if od := fd.ContainingOneof(); od != nil {
		if cur := m.WhichOneof(od); cur != nil && cur.Index() > fd.Index() {
			return
		}
	}
	m.Set(fd, val)
}

func decodeList(l protoreflect.List, fd protoreflect.FieldDescriptor, raw any) error {
	items, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("expected a list, found %s", kindOf(raw))
	}
	for i, item := range items {
		ev, err := decodeSingular(l.NewElement(), fd, item)
		if err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		l.Append(ev)
	}
	return nil
}

func decodeMap(mp protoreflect.Map, fd protoreflect.FieldDescriptor, raw any) error {
	obj, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("expected a map, found %s", kindOf(raw))
	}
	vfd := fd.MapValue()
	for key, item := range obj {
		if !utf8.ValidString(key) {
			return unsupported("map key with invalid UTF-8")
		}
		ev, err := decodeSingular(mp.NewValue(), vfd, item)
		if err != nil {
			return fmt.Errorf("[%q]: %w", key, err)
		}
		mp.Set(protoreflect.ValueOfString(key).MapKey(), ev)
	}
	return nil
}

// decodeSingular decodes one value of fd's kind. A null here (in a list or a
// map) is the zero value, or an empty message, as with jsonpb.
func decodeSingular(zero protoreflect.Value, fd protoreflect.FieldDescriptor, raw any) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind:
		if raw == nil {
			return zero, nil
		}
		mi := infoOf(zero.Message())
		if mi.wellKnown == "" {
			obj, ok := raw.(map[string]any)
			if !ok {
				return zero, fmt.Errorf("expected an object for %s, found %s", fd.Message().Name(), kindOf(raw))
			}
			return zero, decodeMessage(zero.Message(), obj)
		}
		if mi.unsupported != "" {
			return zero, unsupported("%s: %s", fd.Message().FullName(), mi.unsupported)
		}
		return zero, decodeWellKnown(zero.Message(), mi.wellKnown, raw)
	case protoreflect.GroupKind:
		return zero, unsupported("group field %s", fd.Name())
	}
	return decodeScalar(fd, raw)
}

// decodeWellKnown decodes the JSON forms of Duration and the wrapper types.
func decodeWellKnown(m protoreflect.Message, name string, raw any) error {
	if raw == nil {
		return nil
	}
	fds := m.Descriptor().Fields()
	if name == "Duration" {
		s, ok := raw.(string)
		if !ok {
			return fmt.Errorf("expected a duration string, found %s", kindOf(raw))
		}
		if !utf8.ValidString(s) {
			return unsupported("invalid UTF-8")
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("bad Duration: %w", err)
		}
		m.Set(fds.ByNumber(1), protoreflect.ValueOfInt64(d.Nanoseconds()/1e9))
		m.Set(fds.ByNumber(2), protoreflect.ValueOfInt32(int32(d.Nanoseconds()%1e9)))
		return nil
	}
	fd := fds.ByNumber(1) // the wrapped value
	val, err := decodeScalar(fd, raw)
	if err != nil {
		return err
	}
	m.Set(fd, val)
	return nil
}

// decodeScalar converts a generic value to a scalar field's value the way
// jsonpb reads the JSON text that value would be written as.
func decodeScalar(fd protoreflect.FieldDescriptor, raw any) (protoreflect.Value, error) {
	k := fd.Kind()
	if raw == nil {
		// json.Unmarshal of null into a Go scalar leaves its zero value.
		return zeroScalar(k)
	}
	switch k {
	case protoreflect.BoolKind:
		if b, ok := raw.(bool); ok {
			return protoreflect.ValueOfBool(b), nil
		}
	case protoreflect.StringKind:
		if s, ok := raw.(string); ok {
			if !utf8.ValidString(s) {
				return protoreflect.Value{}, unsupported("invalid UTF-8")
			}
			return protoreflect.ValueOfString(s), nil
		}
	case protoreflect.BytesKind:
		if s, ok := raw.(string); ok {
			if !utf8.ValidString(s) {
				return protoreflect.Value{}, unsupported("invalid UTF-8")
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return protoreflect.Value{}, fmt.Errorf("bad base64 for %s: %w", fd.Name(), err)
			}
			return protoreflect.ValueOfBytes(b), nil
		}
	case protoreflect.EnumKind:
		switch t := raw.(type) {
		case string:
			if ev := fd.Enum().Values().ByName(protoreflect.Name(t)); ev != nil {
				return protoreflect.ValueOfEnum(ev.Number()), nil
			}
			return protoreflect.Value{}, fmt.Errorf("unknown value %q for enum %s", t, fd.Enum().FullName())
		default:
			n, err := integer(raw, math.MinInt32, math.MaxInt32)
			if err != nil {
				return protoreflect.Value{}, err
			}
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), nil
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := integer(raw, math.MinInt32, math.MaxInt32)
		return protoreflect.ValueOfInt32(int32(n)), err
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := integer(raw, math.MinInt64, math.MaxInt64)
		return protoreflect.ValueOfInt64(n), err
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := unsigned(raw, math.MaxUint32)
		return protoreflect.ValueOfUint32(uint32(n)), err
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := unsigned(raw, math.MaxUint64)
		return protoreflect.ValueOfUint64(n), err
	case protoreflect.DoubleKind:
		f, err := float(raw, 64)
		return protoreflect.ValueOfFloat64(f), err
	case protoreflect.FloatKind:
		f, err := float(raw, 32)
		return protoreflect.ValueOfFloat32(float32(f)), err
	default:
		return protoreflect.Value{}, unsupported("field kind %v", k)
	}
	return protoreflect.Value{}, fmt.Errorf("%s must be %s, found %s", fd.Name(), scalarName(k), kindOf(raw))
}

// zeroScalar is the zero value of a scalar kind (Default is not defined for
// repeated fields).
func zeroScalar(k protoreflect.Kind) (protoreflect.Value, error) {
	switch k {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(false), nil
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(""), nil
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(nil), nil
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(0), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(0), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(0), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(0), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(0), nil
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(0), nil
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(0), nil
	}
	return protoreflect.Value{}, unsupported("field kind %v", k)
}

// integer reads a signed integer from a number or a decimal string (jsonpb
// accepts both), within [lo, hi].
func integer(raw any, lo, hi int64) (int64, error) {
	var n int64
	switch t := raw.(type) {
	case int64:
		n = t
	case int:
		n = int64(t)
	case string:
		if !isDecimal(t) {
			return 0, unsupported("integer string %q", t)
		}
		var err error
		if n, err = strconv.ParseInt(t, 10, 64); err != nil {
			return 0, fmt.Errorf("bad integer %q: %w", t, err)
		}
	case float64:
		// jsonpb accepts some integral floats, rejects the rest; not worth it.
		return 0, unsupported("floating-point value %v for an integer", t)
	default:
		return 0, fmt.Errorf("expected an integer, found %s", kindOf(raw))
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is out of range", n)
	}
	return n, nil
}

// unsigned is integer for unsigned fields.
func unsigned(raw any, hi uint64) (uint64, error) {
	var n uint64
	switch t := raw.(type) {
	case int64:
		if t < 0 {
			return 0, fmt.Errorf("%d is negative", t)
		}
		n = uint64(t)
	case int:
		if t < 0 {
			return 0, fmt.Errorf("%d is negative", t)
		}
		n = uint64(t)
	case string:
		if !isDecimal(t) {
			return 0, unsupported("integer string %q", t)
		}
		if strings.HasPrefix(t, "-") {
			return 0, fmt.Errorf("%s is negative", t)
		}
		var err error
		if n, err = strconv.ParseUint(t, 10, 64); err != nil {
			return 0, fmt.Errorf("bad integer %q: %w", t, err)
		}
	case float64:
		return 0, unsupported("floating-point value %v for an integer", t)
	default:
		return 0, fmt.Errorf("expected an integer, found %s", kindOf(raw))
	}
	if n > hi {
		return 0, fmt.Errorf("%d is out of range", n)
	}
	return n, nil
}

// float reads a number, a numeric string or "NaN"/"Infinity"/"-Infinity"
// with the given precision, rounding the decimal text once as jsonpb does.
func float(raw any, bits int) (float64, error) {
	var text string
	switch t := raw.(type) {
	case int64:
		if bits == 64 {
			return float64(t), nil
		}
		text = strconv.FormatInt(t, 10)
	case int:
		if bits == 64 {
			return float64(t), nil
		}
		text = strconv.Itoa(t)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return 0, fmt.Errorf("%v has no JSON form", t)
		}
		if bits == 64 {
			return t, nil
		}
		text = strconv.FormatFloat(t, 'g', -1, 64)
	case string:
		switch t {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		if !isJSONNumber(t) {
			return 0, unsupported("number string %q", t)
		}
		text = t
	default:
		return 0, fmt.Errorf("expected a number, found %s", kindOf(raw))
	}
	f, err := strconv.ParseFloat(text, bits)
	if err != nil {
		return 0, fmt.Errorf("bad number %s: %w", text, err)
	}
	return f, nil
}

// isDecimal reports whether s is a JSON integer literal: -?(0|[1-9][0-9]*).
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isJSONNumber reports whether s is a JSON number literal.
func isJSONNumber(s string) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	if n := digits(); n == 0 || (n > 1 && s[start] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func kindOf(raw any) string {
	switch t := raw.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return strconv.Quote(t)
	case bool:
		return strconv.FormatBool(t)
	case int, int64, float64:
		return fmt.Sprintf("the number %v", t)
	}
	return fmt.Sprintf("a %T", raw)
}

// usableKey says whether a key of a message, looked up in its field table
// (kf, ok), names one field to decode; an unknown key is skipped, as Istio's
// unmarshaler skips it, and an extension key or one naming two fields is an
// error.
func usableKey(key string, kf keyField, ok bool) (bool, error) {
	switch {
	case !ok && strings.HasPrefix(key, "[") && strings.HasSuffix(key, "]"):
		return false, unsupported("extension key %q", key)
	case !ok:
		return false, nil
	case kf.ambiguous:
		return false, unsupported("key %q names two fields", key)
	}
	return true, nil
}
