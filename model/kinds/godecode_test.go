package kinds_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// Test types covering every class of field the converter handles.
type (
	Embedded struct {
		E string `json:"e"`
	}
	PtrEmbedded struct {
		P string `json:"p"`
	}
	namedKey     string
	namedString  string
	unexportedIn struct {
		X string `json:"x"`
	}
	goInner struct {
		A string `json:"a"`
		N *int32 `json:"n,omitempty"`
	}
	goObj struct {
		Embedded                      // untagged: decoded from the whole object
		*PtrEmbedded `json:",inline"` // allocated whenever the object is not null
		Metav1Time   metav1.Time      `json:"time"`
		Dash         string           `json:"-"` // the converter names it "-"
		NoTag        string
		Dup          string `json:"e"` // filled along with Embedded.E
		Str          string `json:"str"`
		Named        namedString
		Bool         bool              `json:"bool"`
		I            int               `json:"i"`
		I8           int8              `json:"i8"`
		I32          int32             `json:"i32"`
		U8           uint8             `json:"u8"`
		U64          uint64            `json:"u64"`
		F32          float32           `json:"f32"`
		F64          float64           `json:"f64"`
		Dur          time.Duration     `json:"dur"`
		Bytes        []byte            `json:"bytes"`
		Any          any               `json:"any"`
		Strs         []string          `json:"strs"`
		Inners       []goInner         `json:"inners"`
		Ptrs         []*goInner        `json:"ptrs"`
		Inner        *goInner          `json:"inner"`
		SMap         map[string]string `json:"smap"`
		GMap         map[string]any    `json:"gmap"`
		IMap         map[string]goInner
		KMap         map[namedKey]int
		IOS          intstr.IntOrString           `json:"ios"`
		IOSP         *intstr.IntOrString          `json:"iosp"`
		Q            resource.Quantity            `json:"q"`
		QP           *resource.Quantity           `json:"qp"`
		D            metav1.Duration              `json:"d"`
		Raw          runtime.RawExtension         `json:"raw"`
		RawMsg       json.RawMessage              `json:"rawmsg"`
		Arr          [2]string                    `json:"arr"`
		Stringer     interface{ String() string } `json:"stringer"`
	}
	// goObjUnexported embeds an unexported type, whose exported fields the
	// converter sets; DecodeGo leaves such structs to it.
	goObjUnexported struct {
		unexportedIn
		S string `json:"s"`
	}
)

// A case is one value under one key of a goObj.
type goCase struct {
	key   string
	value any
	// declined: DecodeGo may leave this to the converter even though the
	// converter succeeds (an implementation-defined or rare conversion).
	declined bool
}

func goCases() []goCase {
	return []goCase{
		{key: "str", value: "x"}, {key: "str", value: int64(5)}, {key: "str", value: true},
		{key: "str", value: 1.5}, {key: "str", value: map[string]any{}}, {key: "str", value: nil},
		{key: "Named", value: "n"}, {key: "Named", value: int64(1)},
		{key: "bool", value: true}, {key: "bool", value: "true"}, {key: "bool", value: int64(1)},
		{key: "i", value: int64(-7)}, {key: "i", value: 5.0}, {key: "i", value: 5.5},
		{key: "i", value: "5"}, {key: "i", value: 1e30, declined: true}, {key: "i", value: math.Inf(1), declined: true},
		{key: "i", value: []any{}}, {key: "i", value: false},
		{key: "i8", value: int64(300)}, {key: "i32", value: int64(1 << 40)},
		{key: "u8", value: int64(-1)}, {key: "u8", value: 255.0}, {key: "u64", value: 1e19},
		{key: "u64", value: -1.0, declined: true},
		{key: "f32", value: int64(3)}, {key: "f32", value: 0.1}, {key: "f64", value: 2.5}, {key: "f64", value: "2.5"},
		{key: "dur", value: int64(1000)}, {key: "dur", value: "1s"},
		{key: "bytes", value: "aGVsbG8="}, {key: "bytes", value: ""}, {key: "bytes", value: "aGVs\nbG8="},
		{key: "bytes", value: "!!"}, {key: "bytes", value: "\xff"}, {key: "bytes", value: []any{int64(1)}, declined: true},
		{key: "bytes", value: int64(1)},
		{key: "any", value: map[string]any{"a": []any{int64(1), nil}}}, {key: "any", value: "s"}, {key: "any", value: 1.5},
		{key: "strs", value: []any{"a", nil, "c"}}, {key: "strs", value: []any{}}, {key: "strs", value: []any{int64(1)}},
		{key: "strs", value: "a"}, {key: "strs", value: []any(nil)},
		{key: "inners", value: []any{map[string]any{"a": "x", "n": int64(2)}, nil}},
		{key: "inners", value: []any{"x"}}, {key: "inners", value: map[string]any{}},
		{key: "ptrs", value: []any{nil, map[string]any{}, map[string]any{"n": nil}}},
		{key: "inner", value: map[string]any{"a": "x", "unknown": int64(1)}}, {key: "inner", value: map[string]any(nil)},
		{key: "inner", value: "x"}, {key: "inner", value: map[string]any{"n": 1.5}},
		{key: "smap", value: map[string]any{"a": "b", "c": nil}}, {key: "smap", value: map[string]any{"a": int64(1)}},
		{key: "smap", value: []any{}}, {key: "smap", value: map[string]any{}},
		{key: "gmap", value: map[string]any{"a": map[string]any{"b": nil}, "c": nil}},
		{key: "IMap", value: map[string]any{"k": map[string]any{"a": "x"}, "nil": nil}},
		{key: "IMap", value: map[string]any{"k": int64(1)}},
		{key: "KMap", value: map[string]any{"k": int64(1), "z": 2.0}},
		{key: "ios", value: int64(8080)}, {key: "ios", value: "http"}, {key: "ios", value: "25%"},
		{key: "ios", value: int64(1 << 40)}, {key: "ios", value: 1.5}, {key: "ios", value: 3.0},
		{key: "ios", value: true}, {key: "ios", value: map[string]any{}}, {key: "ios", value: "a\"<b>\u2028"},
		{key: "iosp", value: int64(1)}, {key: "iosp", value: "x"}, {key: "iosp", value: nil},
		{key: "q", value: "100m"}, {key: "q", value: int64(2)}, {key: "q", value: 0.5}, {key: "q", value: 1e21},
		{key: "q", value: " 1Gi"}, {key: "q", value: "abc"}, {key: "q", value: "1<2"}, {key: "q", value: true},
		{key: "q", value: map[string]any{}}, {key: "q", value: []any{"1"}},
		{key: "qp", value: "1"}, {key: "qp", value: "x"},
		{key: "time", value: "2024-01-02T03:04:05Z"}, {key: "time", value: "bad"}, {key: "time", value: int64(1)},
		{key: "d", value: "5s"}, {key: "d", value: "5"}, {key: "d", value: int64(5)},
		{key: "raw", value: map[string]any{"b": int64(1), "a": []any{"x", 1.5, nil}}}, {key: "raw", value: "s"},
		{key: "raw", value: math.NaN()},
		{key: "rawmsg", value: []any{true, "x<y"}},
		{key: "arr", value: []any{"a", "b"}}, {key: "arr", value: nil},
		{key: "stringer", value: "s"}, {key: "stringer", value: nil},
		{key: "e", value: "both"}, {key: "p", value: "ptr"}, {key: "-", value: "dash"}, {key: "NoTag", value: "t"},
		{key: "Dash", value: "not this one"}, {key: "unknown", value: map[string]any{"x": int64(1)}},
	}
}

// Every case is decoded into a goObj by the converter and by DecodeGo: where
// the converter fails DecodeGo must fail, and where both succeed the results
// must be deeply equal. Only cases marked declined may be left to the
// converter.
func TestDecodeGoTable(t *testing.T) {
	var equal, bothFail int
	for _, c := range goCases() {
		obj := map[string]any{c.key: c.value}
		want := &goObj{}
		wantErr := convert(obj, want)
		got := &goObj{}
		gotErr := kinds.DecodeGo(got, obj)
		name := fmt.Sprintf("%s=%T", c.key, c.value)
		switch {
		case wantErr != nil && gotErr == nil:
			t.Errorf("%s %#v: DecodeGo succeeded, the converter failed: %v", name, c.value, wantErr)
		case wantErr == nil && gotErr != nil && !c.declined:
			t.Errorf("%s %#v: DecodeGo failed, the converter succeeded: %v", name, c.value, gotErr)
		case wantErr == nil && gotErr == nil && !reflect.DeepEqual(got, want):
			t.Errorf("%s %#v: results differ:\n got %#v\nwant %#v", name, c.value, got, want)
		case wantErr == nil && gotErr == nil:
			equal++
		case wantErr != nil:
			bothFail++
		}
	}
	t.Logf("%d cases decoded equal, %d refused by both", equal, bothFail)
	if equal < 55 || bothFail < 35 {
		t.Errorf("the table is too weak: %d equal, %d refused by both", equal, bothFail)
	}
}

// convert runs the reference converter, turning its panics (it sets
// non-empty interfaces and unexported fields by reflection) into errors.
func convert(obj map[string]any, typed any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("converter panicked: %v", r)
		}
	}()
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed)
}

// Spot checks of the converter's rules that the table compares against, so
// that the table cannot pass on a converter that changed under it.
func TestDecodeGoValues(t *testing.T) {
	var got goObj
	err := kinds.DecodeGo(&got, map[string]any{
		"e": "both", "-": "dash", "i8": int64(300), "u8": int64(-1), "i": 5.0,
		"bytes": "aGVsbG8=", "strs": []any{"a", nil}, "ios": "25%", "iosp": int64(3),
		"q": "100m", "smap": map[string]any{"k": nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"Embedded.E", got.E, "both"}, {"Dup", got.Dup, "both"}, {"Dash", got.Dash, "dash"},
		{"PtrEmbedded allocated", got.PtrEmbedded != nil, true},
		{"int8 wraps", got.I8, int8(44)}, {"uint8 wraps", got.U8, uint8(255)}, {"whole float", got.I, 5},
		{"bytes", string(got.Bytes), "hello"}, {"strings", got.Strs, []string{"a", ""}},
		{"IntOrString", got.IOS, intstr.FromString("25%")}, {"*IntOrString", *got.IOSP, intstr.FromInt32(3)},
		{"Quantity", got.Q.MilliValue(), int64(100)}, {"null map value", got.SMap, map[string]string{"k": ""}},
		{"absent slice", got.Inners == nil, true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.what, c.got, c.want)
		}
	}
}

// DecodeGo zeroes what it is given, takes only non-nil pointers, and leaves
// structs the converter could only fill through unexported fields to it.
func TestDecodeGoArguments(t *testing.T) {
	got := goObj{Str: "old", Inner: &goInner{A: "old"}}
	if err := kinds.DecodeGo(&got, map[string]any{"i": int64(1)}); err != nil {
		t.Fatal(err)
	}
	if got.Str != "" || got.Inner != nil || got.I != 1 {
		t.Errorf("DecodeGo kept old values: %#v", got)
	}
	if err := kinds.DecodeGo(goObj{}, nil); err == nil {
		t.Error("DecodeGo accepted a non-pointer")
	}
	if err := kinds.DecodeGo((*goObj)(nil), nil); err == nil {
		t.Error("DecodeGo accepted a nil pointer")
	}
	var empty goObj
	if err := kinds.DecodeGo(&empty, nil); err != nil || empty.PtrEmbedded == nil {
		t.Errorf("null object: err %v, embedded pointer %v (the converter allocates it)", err, empty.PtrEmbedded)
	}
	var u goObjUnexported
	obj := map[string]any{"x": "in", "s": "out"}
	if err := kinds.DecodeGo(&u, obj); err == nil {
		t.Errorf("DecodeGo filled a struct with an unexported embedded field: %#v", u)
	}
	var want goObjUnexported
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &want); err != nil || want.X != "in" {
		t.Errorf("the converter no longer fills unexported embedded structs (%v, %#v): revisit the plan", err, want)
	}
}

// Real API objects with every custom-decoding field the kinds use.
func TestDecodeGoAPITypes(t *testing.T) {
	cases := []struct {
		typed func() any
		obj   map[string]any
	}{
		{func() any { return &corev1.Service{} }, map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "a", "labels": map[string]any{"app": "a"}, "creationTimestamp": nil},
			"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80), "targetPort": "http"},
				map[string]any{"port": 81.0, "targetPort": int64(8081), "protocol": "TCP"}}},
		}},
		{func() any { return &v1alpha1.Rollout{} }, map[string]any{
			"metadata": map[string]any{"name": "r", "annotations": map[string]any{"a/b": "c"}},
			"spec": map[string]any{
				"replicas": int64(3),
				"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
					"name": "c", "resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": int64(1024)}}}}}},
				"strategy": map[string]any{"canary": map[string]any{
					"maxSurge": "25%", "maxUnavailable": int64(0),
					"steps": []any{map[string]any{"setWeight": int64(20)}, map[string]any{"pause": map[string]any{"duration": "1m"}},
						map[string]any{"pause": map[string]any{"duration": int64(30)}}, map[string]any{"pause": map[string]any{}}}}},
			},
		}},
		{func() any { return &v1alpha1.AnalysisTemplate{} }, map[string]any{
			"metadata": map[string]any{"name": "t"},
			"spec": map[string]any{"args": []any{map[string]any{"name": "svc"}},
				"metrics": []any{map[string]any{"name": "m", "interval": "1m", "count": int64(3), "failureLimit": "1",
					"successCondition": "result[0] > 0.9",
					"provider": map[string]any{"prometheus": map[string]any{"address": "http://p", "query": "q"},
						"web": map[string]any{"jsonBody": map[string]any{"a": []any{int64(1)}}}}}}},
		}},
		{func() any { return &kinds.VirtualServiceObject{} }, map[string]any{
			"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
			"metadata": map[string]any{"name": "vs"},
			"spec":     map[string]any{"hosts": []any{"a"}, "http": []any{map[string]any{"route": []any{map[string]any{"destination": map[string]any{"host": "a"}, "weight": int64(100)}}}}},
			"status":   map[string]any{"x": nil},
		}},
	}
	for _, c := range cases {
		want, got := c.typed(), c.typed()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.obj, want); err != nil {
			t.Fatalf("%T: converter: %v", want, err)
		}
		if err := kinds.DecodeGo(got, c.obj); err != nil {
			t.Fatalf("%T: %v", got, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%T differs:\n got %#v\nwant %#v", got, got, want)
		}
	}
}

// DecodeGo copies what it takes as it is (interfaces, map[string]any), so the
// loader may recycle the input's maps once the typed object is built.
func TestDecodeGoSharesNoMapWithItsInput(t *testing.T) {
	type target struct {
		Any    any            `json:"any"`
		Status map[string]any `json:"status"`
	}
	in := map[string]any{
		"any":    map[string]any{"a": []any{map[string]any{"b": "c"}}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready"}}},
	}
	var got target
	if err := kinds.DecodeGo(&got, in); err != nil {
		t.Fatal(err)
	}
	want := target{
		Any:    map[string]any{"a": []any{map[string]any{"b": "c"}}},
		Status: map[string]any{"conditions": []any{map[string]any{"type": "Ready"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %#v, want %#v", got, want)
	}
	// Spoil the input the way a recycled map is reused.
	clear(in["any"].(map[string]any)["a"].([]any)[0].(map[string]any))
	clear(in["any"].(map[string]any))
	clear(in["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("changing the input changed the decoded object: %#v", got)
	}
}
