package fastyaml_test

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
)

// Goroutines decoding and recycling at once, each moving between CPUs
// between its decode and its Recycle (so that another parser of the pool
// recycles what one decoded, as on a busy webhook), never see a document
// they hold change: no map is handed to two documents. Run it with -race
// too: a map shared by two goroutines' documents is written by one while
// the other reads it.
func TestConcurrentRecycleKeepsDocumentsApart(t *testing.T) {
	docs := []string{
		"a: 1\n", // a document whose only map is its root
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  ports:\n  - {port: 80, name: http}\n",
		"metadata:\n  labels: {x: c}\nspec: {c: 1}\n",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m"},"data":{"k":"v"}}` + "\n",
	}
	want := make([]map[string]any, len(docs))
	for i, d := range docs {
		w, ok := fastyaml.DecodeLimit([]byte(d), fastyaml.DefaultMaxNodes)
		if !ok {
			t.Fatalf("declined %q", d)
		}
		want[i] = w
	}
	workers := 4 * runtime.GOMAXPROCS(0)
	rounds := 20000
	if testing.Short() {
		rounds = 2000
	}
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				k := (w + i) % len(docs)
				obj, ok := fastyaml.DecodeShared([]byte(docs[k]), fastyaml.DefaultMaxNodes)
				if !ok {
					errs <- fmt.Sprintf("declined %q", docs[k])
					return
				}
				runtime.Gosched()
				if !reflect.DeepEqual(obj, want[k]) {
					errs <- fmt.Sprintf("a held document changed: %v, want %v", obj, want[k])
					return
				}
				fastyaml.Recycle(obj)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
