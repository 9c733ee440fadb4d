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
	profile := flag.String("profile", string(corpus.Mixed), "shape: mixed (half behind Gateways, half with DestinationRules, 50 applications a file) or gateways (every application behind its own Gateway, one in ten with a DestinationRule, one application a file)")
	perFile := flag.Int("per-file", 0, "applications in one file (default: the profile's)")
	flag.Parse()
	p := corpus.Profile(*profile)
	if p != corpus.Mixed && p != corpus.Gateways {
		fmt.Fprintf(os.Stderr, "gencorpus: unknown -profile %q (mixed, gateways)\n", *profile)
		os.Exit(2)
	}
	for _, in := range corpus.Generate(corpus.Options{Profile: p, Rollouts: *n, MistakeRate: *rate, Seed: *seed, PerFile: *perFile}) {
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
