// Command xdsconform compares `rolloutlint plan`'s xDS push predictions with
// observations the conformance harness (conformance/xds) recorded against
// the real istiod, prints the table predicted | observed | match, and exits
// 1 on any mismatch or stale record. make conformance runs it on fresh
// observations; the recorded ones are checked by `make test`
// (internal/xdsconformance).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rolloutlint/rolloutlint/internal/xdsconformance"
)

func main() {
	all := flag.Bool("all", false, "print matching rows too")
	root := flag.String("root", ".", "repository root the observations' bundle paths are relative to")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: xdsconform [-all] OBSERVATION-DIR...")
		os.Exit(2)
	}
	bad := false
	for _, dir := range flag.Args() {
		obs, err := xdsconformance.Load(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "xdsconform:", err)
			os.Exit(1)
		}
		if len(obs) == 0 {
			fmt.Fprintf(os.Stderr, "xdsconform: %s holds no observation\n", dir)
			bad = true
			continue
		}
		res, err := xdsconformance.Compare(*root, obs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "xdsconform:", err)
			os.Exit(1)
		}
		fmt.Print(xdsconformance.Table(res.Rows, !*all))
		known, _ := xdsconformance.LoadKnown(filepath.Join(*root, "testdata", "xds-conformance", "known-differences.txt"))
		nKnown := 0
		for _, r := range res.Rows {
			if _, ok := known[r.ID()]; ok && !r.Match {
				nKnown++
			}
		}
		for _, s := range res.Stale {
			fmt.Println("STALE", s)
		}
		v := obs[0].Istio
		fmt.Printf("%s: Istio %s (%s, commit %s): %d scenarios, %d writes, %d pushes compared, %d match, %d differ (%d of them listed in known-differences.txt), %d stale runs\n",
			dir, v.Version, v.Module, v.Commit, len(obs), res.Writes, res.Pushes, res.Matched, res.Pushes-res.Matched, nKnown, len(res.Stale))
		if res.Matched != res.Pushes || len(res.Stale) > 0 {
			bad = true
		}
	}
	if bad {
		os.Exit(1)
	}
}
