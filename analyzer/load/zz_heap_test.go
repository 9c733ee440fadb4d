package load_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/rolloutlint/rolloutlint/analyzer/load"
	"github.com/rolloutlint/rolloutlint/analyzer/load/fastyaml"
	"github.com/rolloutlint/rolloutlint/internal/corpus"
)

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func TestRetained(t *testing.T) {
	var chunks [][]byte
	for _, in := range corpus.Generate(corpus.Options{Rollouts: 9000}) {
		chunks = append(chunks, load.Chunks(in.Data)...)
	}
	keep := make([]map[string]any, 0, len(chunks))
	h0 := heap()
	fast := os.Getenv("PATHX") == "fast"
	for _, c := range chunks {
		var m map[string]any
		if fast {
			m, _ = fastyaml.Decode(c)
		} else {
			m, _ = load.SlowDecode(c, load.DefaultMaxNodes)
		}
		keep = append(keep, m)
	}
	h1 := heap()
	t.Logf("fast=%v retained %.1f MB", fast, float64(h1-h0)/1e6)
	runtime.KeepAlive(keep)
	runtime.KeepAlive(chunks)
}
