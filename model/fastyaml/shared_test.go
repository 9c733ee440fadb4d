package fastyaml

import (
	"reflect"
	"testing"
	"unsafe"
)

// DecodeShared returns what DecodeLimit returns, with strings that point into
// the caller's buffer instead of a copy.
func TestDecodeSharedPointsIntoData(t *testing.T) {
	data := []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  ports:\n  - port: 80\n    name: http\n")
	shared, ok := DecodeShared(data, DefaultMaxNodes)
	if !ok {
		t.Fatal("declined a plain Service")
	}
	copied, _ := DecodeLimit(data, DefaultMaxNodes)
	if !reflect.DeepEqual(shared, copied) {
		t.Fatalf("shared %v, copied %v", shared, copied)
	}
	name := shared["metadata"].(map[string]any)["name"].(string)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	at := uintptr(unsafe.Pointer(unsafe.StringData(name)))
	if at < start || at >= start+uintptr(len(data)) {
		t.Fatalf("metadata.name is a copy, not a view of the input")
	}
	if _, ok := DecodeShared([]byte("a: \xff\n"), DefaultMaxNodes); ok {
		t.Fatal("accepted invalid UTF-8")
	}
}
