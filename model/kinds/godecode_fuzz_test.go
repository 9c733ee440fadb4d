package kinds_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// fuzzTypes are the types FuzzDecodeGo decodes into, picked by a fuzz byte.
var fuzzTypes = []func() any{
	func() any { return &v1alpha1.Rollout{} },
	func() any { return &corev1.Service{} },
	func() any { return &v1alpha1.AnalysisTemplate{} },
	func() any { return &v1alpha1.ClusterAnalysisTemplate{} },
	func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	func() any { return &goObj{} },
}

// fuzzValues replace nodes of the decoded document: every scalar class, the
// texts custom decoders care about, and empty collections.
var fuzzValues = []any{
	nil, "", "x", "25%", "100m", "1m", "aGVsbG8=", "2024-01-02T03:04:05Z", "a\"<b>",
	int64(0), int64(-1), int64(1 << 40), 1.5, 2.0, -3.0, 1e300, true,
	map[string]any{}, []any{}, map[string]any{"name": "a"}, []any{map[string]any{}}, []any{"a", nil},
}

// fuzzKeys are field names the fuzzer adds to objects, so that mutations
// reach typed fields the seeds leave out.
var fuzzKeys = []string{
	"spec", "metadata", "strategy", "canary", "steps", "setWeight", "pause", "duration", "ports", "port",
	"targetPort", "metrics", "provider", "replicas", "selector", "matchLabels", "template", "labels",
	"annotations", "maxSurge", "args", "count", "interval", "resources", "limits", "creationTimestamp",
	"e", "p", "ios", "q", "bytes", "-", "i8", "u64", "raw", "time", "d", "smap", "KMap",
}

// fuzzValue returns a fresh copy of a fuzz value: later mutations change it.
func fuzzValue(op byte) any {
	var cp func(any) any
	cp = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			m := make(map[string]any, len(t))
			for k, x := range t {
				m[k] = cp(x)
			}
			return m
		case []any:
			l := make([]any, len(t))
			for i, x := range t {
				l[i] = cp(x)
			}
			return l
		}
		return v
	}
	return cp(fuzzValues[int(op)%len(fuzzValues)])
}

// countNodes returns the number of values in v, v included.
func countNodes(v any) int {
	n := 1
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			n += countNodes(x)
		}
	case []any:
		for _, x := range t {
			n += countNodes(x)
		}
	}
	return n
}

// mutateAt changes the target-th value of v (in sorted key order) by op:
// replaced by a fuzz value, or, for an object and a high op, given a key.
func mutateAt(v any, target *int, op byte) any {
	if *target == 0 {
		*target = -1
		if m, ok := v.(map[string]any); ok && op >= 0x80 {
			m[fuzzKeys[int(op)%len(fuzzKeys)]] = fuzzValue(op)
			return m
		}
		return fuzzValue(op)
	}
	*target--
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if *target < 0 {
				break
			}
			t[k] = mutateAt(t[k], target, op)
		}
	case []any:
		for i := range t {
			if *target < 0 {
				break
			}
			t[i] = mutateAt(t[i], target, op)
		}
	}
	return v
}

// FuzzDecodeGo decodes YAML documents (as the loader's fast decoder makes
// generic values of them), mutated at fuzz-chosen nodes, into API types with
// DecodeGo and with the converter. DecodeGo must not panic, must fail where
// the converter fails, and must give the converter's object where both
// succeed; DecodeGoFresh, leaving out a fuzz-chosen key, must give what
// DecodeGo gives on the object without that key.
func FuzzDecodeGo(f *testing.F) {
	files, _ := filepath.Glob("../../examples/checkout/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---") {
			f.Add([]byte(doc), []byte{}, uint8(i))
			f.Add([]byte(doc), []byte{3, 7, 11, 0x85}, uint8(i))
		}
	}
	f.Add([]byte("ios: 5\nq: 1Gi\ne: x\nbytes: aGk=\n"), []byte{1, 9}, uint8(5))
	f.Add([]byte("spec: {a: 1}\nmetadata: {name: x}\np: 2\n"), []byte{1, 0x81}, uint8(5)) // skips "spec" on a type with a pointer embedded
	f.Add([]byte("spec: {replicas: 2}\nmetadata: {name: x}\n"), []byte{1}, uint8(0))      // skips "spec" of a Rollout
	f.Fuzz(func(t *testing.T, data, ops []byte, which uint8) {
		if len(data) > 1<<14 || len(ops) > 64 {
			return
		}
		obj, ok := fastyaml.DecodeLimit(data, 1<<12)
		if !ok {
			return
		}
		var v any = obj
		for i := 0; i+1 < len(ops); i += 2 {
			target := int(ops[i]) % countNodes(v)
			v = mutateAt(v, &target, ops[i+1])
		}
		obj, ok = v.(map[string]any)
		if !ok {
			return
		}
		newTyped := fuzzTypes[int(which)%len(fuzzTypes)]
		want, got := newTyped(), newTyped()
		wantErr := convert(obj, want)
		gotErr := kinds.DecodeGo(got, obj)
		switch {
		case wantErr != nil && gotErr == nil:
			t.Fatalf("DecodeGo succeeded where the converter failed (%v) on %#v", wantErr, obj)
		case wantErr == nil && gotErr == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("results differ on %#v:\n got %#v\nwant %#v", obj, got, want)
		}
		// DecodeGoFresh leaving out a key is DecodeGo on the object without it.
		skip := ""
		if len(ops) > 0 && ops[0]&1 == 1 {
			skip = fuzzKeys[int(ops[0]>>1)%len(fuzzKeys)]
		}
		rest := make(map[string]any, len(obj))
		for k, x := range obj {
			if k != skip || skip == "" {
				rest[k] = x
			}
		}
		restTyped, freshTyped := newTyped(), newTyped()
		restErr := kinds.DecodeGo(restTyped, rest)
		freshErr := kinds.DecodeGoFresh(freshTyped, obj, skip)
		switch {
		case (restErr == nil) != (freshErr == nil):
			t.Fatalf("DecodeGoFresh(skip %q) error %v, DecodeGo without the key %v, on %#v", skip, freshErr, restErr, obj)
		case restErr == nil && !reflect.DeepEqual(freshTyped, restTyped):
			t.Fatalf("DecodeGoFresh(skip %q) differs on %#v:\n got %#v\nwant %#v", skip, obj, freshTyped, restTyped)
		}
	})
}
