package recent

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestGetComputesOnceAndRemembers(t *testing.T) {
	c := New[string, int](8)
	calls := 0
	f := func() int { calls++; return 42 }
	first := c.Get("a", f)
	second := c.Get("a", f)
	if first != 42 || second != 42 || calls != 1 {
		t.Fatalf("got %d then %d, computed %d times; want 42 twice, computed once", first, second, calls)
	}
}

func TestBoundedAndKeepsWhatIsUsed(t *testing.T) {
	const size = 64
	c := New[string, string](size)
	c.Get("hot", func() string { return "hot" })
	c.Get("cold", func() string { return "cold" })
	for i := 0; i < 10*size; i++ {
		k := fmt.Sprint(i)
		c.Get(k, func() string { return k })
		if i%(size/4) == 0 {
			c.Get("hot", func() string { t.Fatal("a key in use was dropped"); return "" })
		}
		if n := c.Len(); n > size {
			t.Fatalf("%d results kept, over the bound of %d", n, size)
		}
	}
	if c.Has("cold") {
		t.Error("a key unused since hundreds of others is still kept")
	}
	if !c.Has("hot") {
		t.Error("the key in use is gone")
	}
}

func TestConcurrentGet(t *testing.T) {
	c := New[int, int](128)
	var computed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 5000; i++ {
				k := i % 60 // within a generation (size/2): never dropped
				if v := c.Get(k, func() int { computed.Add(1); return k * k }); v != k*k {
					t.Errorf("Get(%d) = %d", k, v)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := computed.Load(); n > 8*60 {
		t.Errorf("computed %d times for 60 keys that all fit", n)
	}
}
