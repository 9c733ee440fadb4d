// Command perfrun times commands side by side: each round runs every
// command once, in the order given, so a slow period of a shared host
// falls on all of them alike, and it prints each command's median wall
// time, CPU time (user + system of the child, from its rusage), the CPU
// range over the rounds and the median peak RSS. A command's standard
// output is discarded; the exit statuses -ok lists count as runs (1: a
// lint with findings; istioctl analyze exits 79 when it finds issues), any
// other failure stops the measurement.
//
//	go run ./internal/tools/perfrun -runs 9 'lint=bin/rolloutlint lint -f json corpus' 'floor=yamlfloor corpus'
//
// scripts/perf-targets.sh measures issue 21's targets with it
// (docs/performance.md).
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rolloutlint/rolloutlint/internal/childrun"
)

type command struct {
	label string
	argv  []string
}

// okStatus holds the exit statuses that count as a run (-ok).
var okStatus = map[int]bool{}

func main() {
	runs := flag.Int("runs", 7, "rounds; each runs every command once")
	warm := flag.Bool("warm", true, "run every command once before the rounds (page cache, first-run effects), not counted")
	okList := flag.String("ok", "0,1", "exit statuses that count as a run (comma-separated)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: perfrun [-runs N] 'label=command args...'...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	for _, f := range strings.Split(*okList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintf(os.Stderr, "perfrun: -ok %q: %v\n", *okList, err)
			os.Exit(2)
		}
		okStatus[n] = true
	}
	var cmds []command
	for _, a := range flag.Args() {
		label, line, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(line) == "" {
			fmt.Fprintf(os.Stderr, "perfrun: %q is not label=command\n", a)
			os.Exit(2)
		}
		cmds = append(cmds, command{label, strings.Fields(line)})
	}
	if *warm {
		for _, c := range cmds {
			if _, err := run(c); err != nil {
				fmt.Fprintln(os.Stderr, "perfrun:", err)
				os.Exit(1)
			}
		}
	}
	samples := make([][]childrun.Sample, len(cmds))
	for round := range *runs {
		for i, c := range cmds {
			s, err := run(c)
			if err != nil {
				fmt.Fprintln(os.Stderr, "perfrun:", err)
				os.Exit(1)
			}
			samples[i] = append(samples[i], s)
		}
		fmt.Fprintf(os.Stderr, "round %d/%d done\n", round+1, *runs)
	}
	fmt.Printf("%d rounds, medians\n\n", *runs)
	fmt.Println("| command | wall | CPU (user+sys) | CPU min … max | peak RSS |")
	fmt.Println("|---|---|---|---|---|")
	for i, c := range cmds {
		wall, cpu, rss := pick(samples[i], func(s childrun.Sample) float64 { return s.Wall.Seconds() }),
			pick(samples[i], func(s childrun.Sample) float64 { return s.CPU().Seconds() }),
			pick(samples[i], func(s childrun.Sample) float64 { return float64(s.MaxRSSKB) })
		fmt.Printf("| %s | %s | %s | %s … %s | %.0f MB |\n", c.label, seconds(childrun.Median(wall)), seconds(childrun.Median(cpu)),
			seconds(slices.Min(cpu)), seconds(slices.Max(cpu)), childrun.Median(rss)/1024)
	}
}

// run runs a command once, its output discarded.
func run(c command) (childrun.Sample, error) {
	s, err := childrun.Run(c.argv, nil, func(status int) bool { return okStatus[status] })
	if err != nil {
		return s, fmt.Errorf("%s: %w", c.label, err)
	}
	return s, nil
}

func pick(ss []childrun.Sample, f func(childrun.Sample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// seconds prints a duration in seconds, or in milliseconds below one.
func seconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.1f ms", s*1000)
	}
	return fmt.Sprintf("%.3f s", s)
}
