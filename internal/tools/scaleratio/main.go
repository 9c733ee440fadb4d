// Command scaleratio measures how a lint's cost per object grows with the
// bundle: it runs `rolloutlint lint -f json` of one or more builds over a
// small and a big corpus, interleaved round by round (so a slow period of a
// shared host falls on every build and both sizes alike), and prints, per
// build, the median CPU time (user + system, from the child's rusage) an
// object at each size and the big corpus's cost an object against the small
// one's, with the spread of that ratio over the rounds; then the same for
// the user time alone.
//
//	go run ./internal/tools/scaleratio -runs 9 -small mixed/ -big 250k/ main=bin/a branch=bin/b
//
// Issue 21's target "linear to 250,000 objects" is measured with it
// (docs/performance.md).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rolloutlint/rolloutlint/internal/childrun"
)

type build struct{ label, path string }

// run is one lint's measurement.
type run = childrun.Sample

func main() {
	runs := flag.Int("runs", 7, "rounds; each runs every build on the small and the big corpus once")
	small := flag.String("small", "", "the small corpus (directory or file)")
	big := flag.String("big", "", "the big corpus (directory or file)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: scaleratio [-runs N] -small DIR -big DIR [label=]BINARY...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *small == "" || *big == "" || flag.NArg() == 0 || *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	var builds []build
	for _, a := range flag.Args() {
		label, path, ok := strings.Cut(a, "=")
		if !ok {
			label, path = a, a
		}
		builds = append(builds, build{label, path})
	}
	if err := measure(builds, *runs, *small, *big); err != nil {
		fmt.Fprintln(os.Stderr, "scaleratio:", err)
		os.Exit(1)
	}
}

func measure(builds []build, rounds int, small, big string) error {
	corpora := []string{small, big}
	objects := make([]int, len(corpora))
	for i, c := range corpora { // also a warm-up: the files enter the page cache
		n, err := countObjects(builds[0].path, c)
		if err != nil {
			return err
		}
		objects[i] = n
	}
	// results[build][corpus][round]
	results := make([][][]run, len(builds))
	for b := range builds {
		results[b] = make([][]run, len(corpora))
	}
	for round := range rounds {
		for b, bd := range builds {
			for c, corpus := range corpora {
				r, err := lint(bd.path, corpus)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", bd.label, corpus, err)
				}
				results[b][c] = append(results[b][c], r)
			}
		}
		fmt.Fprintf(os.Stderr, "round %d/%d done\n", round+1, rounds)
	}
	fmt.Printf("small: %s, %d objects; big: %s, %d objects; %d rounds, CPU (user+sys) an object, medians\n\n",
		small, objects[0], big, objects[1], rounds)
	fmt.Println("| build | time | small | big | big against small | per round (min … max) | peak RSS small / big |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for b, bd := range builds {
		// The CPU time, and the user time alone: a VM's page faults (system
		// time) can cost several times what they cost on another host.
		for _, m := range []struct {
			name string
			of   func(run) time.Duration
		}{{"CPU", run.CPU}, {"user", func(r run) time.Duration { return r.User }}} {
			perObject := func(c int) []float64 {
				out := make([]float64, len(results[b][c]))
				for i, r := range results[b][c] {
					out[i] = float64(m.of(r).Nanoseconds()) / 1e3 / float64(objects[c])
				}
				return out
			}
			s, g := perObject(0), perObject(1)
			ratios := make([]float64, len(s))
			for i := range s {
				ratios[i] = g[i]/s[i] - 1
			}
			ms, mg := childrun.Median(s), childrun.Median(g)
			fmt.Printf("| %s | %s | %.2f µs (%.3f s) | %.2f µs (%.3f s) | %+.1f %% | %+.1f … %+.1f %% (median %+.1f %%) | %d / %d MB |\n",
				bd.label, m.name, ms, ms*float64(objects[0])/1e6, mg, mg*float64(objects[1])/1e6,
				(mg/ms-1)*100, slices.Min(ratios)*100, slices.Max(ratios)*100, childrun.Median(ratios)*100,
				medianRSS(results[b][0])/1024, medianRSS(results[b][1])/1024)
		}
	}
	return nil
}

// lint runs one lint and returns its child's resource use. Exit status 1
// (findings at the fail level) is a lint that ran; the report, written to
// stdout, is discarded (writing it is part of the lint, keeping it is not).
func lint(binary, corpus string) (run, error) {
	return childrun.Run([]string{binary, "lint", "-f", "json", "--color", "never", corpus}, nil, lintRan)
}

// lintRan reports whether a lint's exit status is a lint that ran.
func lintRan(status int) bool { return status == 1 }

// countObjects lints corpus once and reads the object count of its JSON summary.
func countObjects(binary, corpus string) (int, error) {
	var out bytes.Buffer
	if _, err := childrun.Run([]string{binary, "lint", "-f", "json", "--color", "never", corpus}, &out, lintRan); err != nil {
		return 0, err
	}
	var report struct {
		Summary struct {
			Objects int `json:"objects"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		return 0, fmt.Errorf("%s on %s: reading the JSON report: %w", binary, corpus, err)
	}
	if report.Summary.Objects == 0 {
		return 0, fmt.Errorf("%s on %s: the report counts no objects", binary, corpus)
	}
	return report.Summary.Objects, nil
}

func medianRSS(rs []run) int64 {
	s := make([]float64, len(rs))
	for i, r := range rs {
		s[i] = float64(r.MaxRSSKB)
	}
	return int64(childrun.Median(s))
}
