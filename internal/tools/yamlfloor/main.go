// Command yamlfloor parses every YAML file under the given directories into
// yaml.v3 nodes and nothing more: the floor a linter that builds a YAML tree
// cannot go below, timed beside rolloutlint on the same files
// (scripts/compare-tools.sh). Files are parsed on every CPU, one file per
// worker, as rolloutlint decodes on every CPU.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"
)

func main() {
	workers := flag.Int("j", runtime.GOMAXPROCS(0), "files parsed at once")
	flag.Parse()
	var files []string
	for _, dir := range flag.Args() {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "yamlfloor:", err)
			os.Exit(1)
		}
	}
	var docs atomic.Int64
	var failed atomic.Bool
	next := make(chan string)
	var wg sync.WaitGroup
	for range max(*workers, 1) {
		wg.Go(func() {
			for p := range next {
				n, err := parse(p)
				if err != nil {
					fmt.Fprintf(os.Stderr, "yamlfloor: %s: %v\n", p, err)
					failed.Store(true)
				}
				docs.Add(n)
			}
		})
	}
	for _, p := range files {
		next <- p
	}
	close(next)
	wg.Wait()
	fmt.Printf("%d files, %d documents\n", len(files), docs.Load())
	if failed.Load() {
		os.Exit(1)
	}
}

// parse decodes every document of a file into a node tree.
func parse(p string) (int64, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var n int64
	for {
		var node yaml.Node
		if err := dec.Decode(&node); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		n++
	}
}
