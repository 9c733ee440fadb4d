// Command gencorpus writes a generated bundle to a directory, for benchmarks
// and for timing rolloutlint against other tools on the same input.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
)

func main() {
	n := flag.Int("rollouts", 100, "number of applications (about 6 objects each)")
	out := flag.String("out", "corpus-out", "output directory")
	rate := flag.Float64("mistakes", 0, "fraction of applications with a known mistake")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	for _, in := range corpus.Generate(corpus.Options{Rollouts: *n, MistakeRate: *rate, Seed: *seed}) {
		p := filepath.Join(*out, filepath.Base(in.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, in.Data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gencorpus:", err)
			os.Exit(1)
		}
	}
}
