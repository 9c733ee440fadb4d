// Package policies runs Rego policies as rolloutlint rules. The built-in
// policies (the GitOps ownership rules RL5xxx) are embedded; users add their
// own with --policy DIR. Every policy package declares its rule in a
// `# METADATA` block and returns a `violation` set of {msg, ref, path}; the
// adapter turns each package into a rules.Rule whose Run evaluates a query
// prepared once per process and maps ref+path to a source position through
// the graph, so policy authors never compute lines.
//
// Policies run in a sandbox: the capabilities leave out the network, runtime,
// clock and random built-ins (http.send, opa.runtime, time.now_ns, ...),
// guards refuse the arguments that would make the others read a file, the
// clock or the machine's zone (sandbox.go), and every evaluation is
// time-boxed and memory-bounded (membound.go).
package policies

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/rolloutlint/rolloutlint/rules"
)

//go:embed rego
var builtinFS embed.FS

// builtinPrefix is how embedded files are named in errors and docs: their
// path in the repository.
const builtinPrefix = "policies/"

// LibPackage is the shared helper package every policy may import.
const LibPackage = "data.rolloutlint.lib"

// Source is one Rego file.
type Source struct {
	Name string // file name used in messages (file:line)
	Text string
}

// IsTest reports whether the file holds Rego unit tests.
func (s Source) IsTest() bool { return strings.HasSuffix(s.Name, "_test.rego") }

var builtin struct {
	once   sync.Once
	rules  []*rules.Rule
	fields *fieldTree
	err    error
}

// Builtin returns the rules of the embedded policies, compiled and prepared on
// first use. Embedded policies that do not load are a build defect, so it
// panics with the loader's message (tests catch it first).
func Builtin() []*rules.Rule {
	rs, err := LoadBuiltin()
	if err != nil {
		panic(err)
	}
	return rs
}

// LoadBuiltin is Builtin with the error returned.
func LoadBuiltin() ([]*rules.Rule, error) {
	builtin.once.Do(func() {
		all, err := builtinSources()
		if err != nil {
			builtin.err = err
			return
		}
		// A lint needs the policies, not their tests (`rolloutlint policy
		// test` compiles those): a third less to compile at every start.
		var srcs []Source
		for _, s := range all {
			if !s.IsTest() {
				srcs = append(srcs, s)
			}
		}
		set, err := compile(srcs, rules.SourceRego)
		if err != nil {
			builtin.err = err
			return
		}
		builtin.rules = set.rules
		builtin.fields = set.fields
	})
	return builtin.rules, builtin.err
}

// builtinSources reads the embedded Rego files, sorted by name.
func builtinSources() ([]Source, error) {
	var out []Source
	err := fs.WalkDir(builtinFS, "rego", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".rego" {
			return err
		}
		data, err := builtinFS.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, Source{Name: builtinPrefix + p, Text: string(data)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading embedded policies: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// libSources returns the embedded shared library (without its tests), which
// user policies are compiled with.
func libSources() ([]Source, error) {
	all, err := builtinSources()
	if err != nil {
		return nil, err
	}
	var out []Source
	for _, s := range all {
		if strings.HasPrefix(s.Name, builtinPrefix+"rego/lib/") && !s.IsTest() {
			out = append(out, s)
		}
	}
	return out, nil
}

var users struct {
	sync.Mutex
	sets map[string][]*rules.Rule
}

// LoadDirs loads user policies from directories (recursively, *.rego). They
// are compiled with the shared library and the same sandbox as the built-in
// policies, and become rules with source "user". A directory set is compiled
// once per process. A policy that breaks the contract is an error naming the
// file and line.
func LoadDirs(dirs []string) ([]*rules.Rule, error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	key := strings.Join(dirs, "\x00")
	users.Lock()
	defer users.Unlock()
	if rs, ok := users.sets[key]; ok {
		return rs, nil
	}
	srcs, err := readDirs(dirs)
	if err != nil {
		return nil, err
	}
	lib, err := libSources()
	if err != nil {
		return nil, err
	}
	set, err := compile(append(lib, srcs...), rules.SourceUser)
	if err != nil {
		return nil, err
	}
	builtins, err := LoadBuiltin()
	if err != nil {
		return nil, err
	}
	takenID, takenName := map[string]bool{}, map[string]bool{}
	for _, r := range builtins {
		takenID[r.ID], takenName[r.Name] = true, true
	}
	for _, p := range set.policies {
		if takenID[p.rule.ID] {
			return nil, fmt.Errorf("%s: policy %s: rule ID %s is a built-in rule; give user policies their own IDs (RL9xxx is never used by rolloutlint)", p.loc, p.pkg, p.rule.ID)
		}
		if takenName[p.rule.Name] {
			return nil, fmt.Errorf("%s: policy %s: rule name %s is a built-in rule's; set custom.name", p.loc, p.pkg, p.rule.Name)
		}
	}
	if users.sets == nil {
		users.sets = map[string][]*rules.Rule{}
	}
	users.sets[key] = set.rules
	return set.rules, nil
}
