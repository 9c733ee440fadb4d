package helmrpc

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/strvals"
)

// same reports whether a and b are the same values: the same Go types at
// every level, the same nil-ness of maps and lists, the same float bits
// (so NaN equals itself and -0 differs from 0). It is stricter than
// reflect.DeepEqual, which calls NaN unequal to itself.
func same(a, b any) error {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return fmt.Errorf("%T (%v) became %T (%v)", a, a, b, b)
	}
	switch x := a.(type) {
	case float64:
		if math.Float64bits(x) != math.Float64bits(b.(float64)) {
			return fmt.Errorf("float %v became %v", x, b)
		}
	case float32:
		if math.Float32bits(x) != math.Float32bits(b.(float32)) {
			return fmt.Errorf("float32 %v became %v", x, b)
		}
	case map[string]any:
		y := b.(map[string]any)
		if (x == nil) != (y == nil) || len(x) != len(y) {
			return fmt.Errorf("map %#v became %#v", x, y)
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return fmt.Errorf("key %q was lost", k)
			}
			if err := same(v, w); err != nil {
				return fmt.Errorf(".%s: %w", k, err)
			}
		}
	case map[any]any:
		y := b.(map[any]any)
		if (x == nil) != (y == nil) || len(x) != len(y) {
			return fmt.Errorf("map %#v became %#v", x, y)
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return fmt.Errorf("key %#v was lost", k)
			}
			if err := same(v, w); err != nil {
				return fmt.Errorf("[%v]: %w", k, err)
			}
		}
	case []any:
		y := b.([]any)
		if (x == nil) != (y == nil) || len(x) != len(y) {
			return fmt.Errorf("list %#v became %#v", x, y)
		}
		for i := range x {
			if err := same(x[i], y[i]); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case time.Time:
		if !x.Equal(b.(time.Time)) || x.Location().String() != b.(time.Time).Location().String() {
			return fmt.Errorf("time %v became %v", x, b)
		}
	default:
		if a != b {
			return fmt.Errorf("%#v became %#v", a, b)
		}
	}
	return nil
}

func roundTrip(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	data, err := EncodeValues(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeValues(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeValues(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("encoding the decoded values gives other bytes")
	}
	return back
}

// TestValuesRoundTripFromYAMLAndStrvals sends values as rolloutlint makes
// them — values files and inline values decoded by yaml.v3, then --set and
// parameters parsed by strvals — and requires every type back exactly.
func TestValuesRoundTripFromYAMLAndStrvals(t *testing.T) {
	const doc = `
int: 3
big: 9223372036854775807
huge: 18446744073709551615
neg: -12
float: 1.5
exp: 1e6
inf: .inf
nan: .nan
negzero: -0.0
octal: 0o17
hex: 0x1F
str: "3"
bool: true
null: ~
empty: ""
emptyMap: {}
emptyList: []
list: [1, "a", 2.5, null, {k: v}, [x]]
nested: {a: {b: {c: [1, {d: e}]}}}
intKeys: {1: one, 2: two}
mixedKeys: {true: yes, 1.5: float, x: y}
stamp: !!timestamp 2026-01-02T03:04:05Z
plainDate: 2026-01-02
binary: !!binary aGVsbG8=
bytes: "\xff\xfe not UTF-8"
`
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &vals); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"set.int=5", "set.list={1,2,3}", "set.float=1.5", "set.str=abc", "set.null=null",
		"set.bool=false", "set.big=12345678901234567890", "set.idx[2]=x", "set.emptyList={}", "set.zero=0", "set.lead=007"} {
		if err := strvals.ParseInto(s, vals); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := strvals.ParseIntoString("set.forced=10", vals); err != nil {
		t.Fatal(err)
	}
	// The types the test means to cover are there.
	want := map[string]string{"int": "int", "float": "float64", "huge": "uint64", "intKeys": "map[interface {}]interface {}",
		"stamp": "time.Time", "emptyList": "[]interface {}"}
	for k, typ := range want {
		if got := fmt.Sprintf("%T", vals[k]); got != typ {
			t.Errorf("yaml.v3 gave %s for %s, want %s: the test no longer covers it", got, k, typ)
		}
	}
	set := vals["set"].(map[string]any)
	if _, ok := set["int"].(int64); !ok {
		t.Errorf("strvals gave %T for an int, want int64: the test no longer covers it", set["int"])
	}
	back := roundTrip(t, vals)
	if err := same(vals, back); err != nil {
		t.Error(err)
	}
}

// TestValuesRoundTripEveryType covers each type the encoding has, the nil
// and empty forms of maps and lists, and the edges of each number type.
func TestValuesRoundTripEveryType(t *testing.T) {
	// A timestamp keeps its instant and offset (a zone name is not sent:
	// yaml.v3's timestamps are UTC, Local, or an unnamed fixed offset).
	loc := time.FixedZone("", 3600)
	vals := map[string]any{
		"nil": nil, "f": false, "t": true, "s": "", "s2": "ünïcode\x00\xff",
		"int": math.MinInt, "int+": math.MaxInt, "i8": int8(-128), "i16": int16(32767), "i32": int32(math.MinInt32), "i64": int64(math.MinInt64),
		"u": uint(math.MaxUint), "u8": uint8(255), "u16": uint16(65535), "u32": uint32(math.MaxUint32), "u64": uint64(math.MaxUint64),
		"f32": float32(1.1), "f32nan": float32(math.NaN()), "f64": 0.1, "nan": math.NaN(), "-0": math.Copysign(0, -1), "inf": math.Inf(-1),
		"nilMap": map[string]any(nil), "emptyMap": map[string]any{}, "nilAny": map[any]any(nil), "emptyAny": map[any]any{},
		"nilList": []any(nil), "emptyList": []any{},
		"anyKeys": map[any]any{1: "int", int64(1): "int64", "1": "string", 1.0: "float", true: "bool", nil: "nil", uint8(1): "uint8"},
		"time":    time.Date(2026, 1, 2, 3, 4, 5, 6, loc), "utc": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"deep": []any{[]any{map[string]any{"a": []any{map[any]any{"k": []any(nil)}}}}},
	}
	if err := same(vals, roundTrip(t, vals)); err != nil {
		t.Error(err)
	}
}

// TestValuesRoundTripRandom sends random trees of every type.
func TestValuesRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) any
	scalar := func() any {
		switch r.IntN(14) {
		case 0:
			return nil
		case 1:
			return r.IntN(2) == 0
		case 2:
			return strings.Repeat("x", r.IntN(5))
		case 3:
			return int(r.Int64() - r.Int64())
		case 4:
			return r.Int64()
		case 5:
			return r.Uint64()
		case 6:
			return r.NormFloat64() * 1e9
		case 7:
			return math.Float64frombits(r.Uint64()) // NaNs with payloads too
		case 8:
			return float32(r.Float64())
		case 9:
			return int8(r.IntN(256) - 128)
		case 10:
			return uint16(r.IntN(65536))
		case 11:
			return r.Int32()
		case 12:
			return r.Uint32()
		default:
			return time.Unix(r.Int64N(1<<40), r.Int64N(1e9)).UTC()
		}
	}
	gen = func(depth int) any {
		if depth > 4 || r.IntN(3) == 0 {
			return scalar()
		}
		switch r.IntN(6) {
		case 0:
			return []any(nil)
		case 1:
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = gen(depth + 1)
			}
			return l
		case 2:
			m := map[any]any{}
			for range r.IntN(4) {
				k := scalar()
				if f, ok := k.(float64); ok && f != f {
					continue // NaN keys cannot be looked up: no YAML gives one
				}
				m[k] = gen(depth + 1)
			}
			return m
		case 3:
			return map[string]any(nil)
		default:
			m := map[string]any{}
			for i := range r.IntN(5) {
				m[fmt.Sprint("k", i)] = gen(depth + 1)
			}
			return m
		}
	}
	for i := range 500 {
		vals := map[string]any{"v": gen(0)}
		if err := same(vals, roundTrip(t, vals)); err != nil {
			t.Fatalf("tree %d: %v", i, err)
		}
	}
}

// TestJSONWouldLoseTypes shows why the values have their own encoding:
// JSON gives back float64 for every number.
func TestJSONWouldLoseTypes(t *testing.T) {
	data, _ := json.Marshal(map[string]any{"int": 3, "int64": int64(3)})
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if same(map[string]any{"int": 3}, map[string]any{"int": back["int"]}) == nil {
		t.Error("JSON kept an int: the reason for the own encoding is gone")
	}
}

func TestValuesRefusesOtherTypes(t *testing.T) {
	_, err := EncodeValues(map[string]any{"a": map[string]any{"b": []any{1, struct{}{}}}})
	if err == nil || !strings.Contains(err.Error(), "value a.b[1] has the Go type struct {}") {
		t.Errorf("error %v, want one naming a.b[1] and its type", err)
	}
	cyclic := []any{nil}
	cyclic[0] = cyclic
	if _, err := EncodeValues(map[string]any{"c": cyclic}); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("a cycle: error %v, want one about the nesting", err)
	}
}

// TestDecodeValuesGarbage: bytes that are not an encoding give an error,
// never a panic or a huge allocation.
func TestDecodeValuesGarbage(t *testing.T) {
	good, err := EncodeValues(map[string]any{"a": []any{1, "x", map[any]any{2: 3.5}}, "t": time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range good {
		if _, err := DecodeValues(good[:i]); err == nil {
			t.Errorf("decoding the first %d of %d bytes did not fail", i, len(good))
		}
	}
	bad := [][]byte{
		{tagList},
		{tagStringMap, 0xff, 0xff, 0xff, 0xff, 0x0f},
		{tagString},
		{tagInt8, 0x80, 0x04}, // 256 in an int8
		{99},
		append(append([]byte{}, good...), 0),
		{tagAnyMap, 1, tagNilList, tagNil}, // a list as a key
	}
	for _, b := range bad {
		if _, err := DecodeValues(b); err == nil {
			t.Errorf("decoding %v did not fail", b)
		}
	}
}

func FuzzDecodeValues(f *testing.F) {
	good, _ := EncodeValues(map[string]any{"a": []any{1, "x", map[any]any{2: 3.5}}, "b": map[string]any(nil)})
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		vals, err := DecodeValues(data)
		if err != nil {
			return
		}
		again, err := EncodeValues(vals)
		if err != nil {
			t.Fatalf("decoded values do not encode: %v", err)
		}
		// Compared as bytes: a NaN key (which fuzzing finds) cannot be
		// looked up to compare maps.
		back, err := DecodeValues(again)
		if err != nil {
			t.Fatal(err)
		}
		third, err := EncodeValues(back)
		if err != nil || string(third) != string(again) {
			t.Fatalf("values changed on a second round trip (%v)", err)
		}
	})
}
