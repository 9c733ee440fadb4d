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
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rolloutlint/rolloutlint/model/graph"
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
	once     sync.Once
	rules    []*rules.Rule
	policies []*policy
	err      error

	// mu guards the lazy compile: which policies are ready, and the
	// fields and error below.
	mu         sync.Mutex
	fields     *fieldTree // the union of the compiled sets' fields
	templates  bool       // whether a compiled set reads the Rollouts' templates
	parts      inputParts // the per-object parts the compiled sets read
	compileErr error
}

//go:embed builtin.json
var builtinTable []byte

// builtinMeta is one embedded policy's metadata as its METADATA block
// declares it. builtin.json holds them, written from the full compile by
// TestBuiltinTable (go test ./policies -run BuiltinTable -update), so that a
// process learns the built-in rules without parsing Rego.
type builtinMeta struct {
	Package    string            `json:"package"`
	Loc        string            `json:"loc"`
	File       string            `json:"file"`
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Summary    string            `json:"summary"`
	Why        string            `json:"why"`
	Bad        string            `json:"bad,omitempty"`
	Good       string            `json:"good,omitempty"`
	References []rules.Reference `json:"references,omitempty"`
	Since      string            `json:"since"`
	Severity   string            `json:"severity"`
	Kinds      []string          `json:"kinds"`
	Requires   [][]string        `json:"requires,omitempty"`
	// Lib is the library files the policy's rules reach (libFilesReached),
	// the only ones a lint that compiles just this policy parses; absent,
	// every library file.
	Lib  []string `json:"lib"`
	Tags []string `json:"tags,omitempty"`
}

// Builtin returns the rules of the embedded policies. Their metadata is read
// from the table written at build time; the policies are compiled when the
// first of them runs (prepareBuiltin), so a process that runs none of them
// (a lint whose bundle none applies to, `rules`, `explain`) never compiles
// Rego. Embedded policies that do not load are a build defect, so it panics
// with the loader's message (tests catch it first).
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
		var metas []builtinMeta
		if err := json.Unmarshal(builtinTable, &metas); err != nil {
			builtin.err = fmt.Errorf("reading the built-in policy table: %w", err)
			return
		}
		for _, m := range metas {
			sev, err := rules.ParseSeverity(m.Severity)
			if err != nil {
				builtin.err = fmt.Errorf("built-in policy table: %s: %w", m.ID, err)
				return
			}
			r := &rules.Rule{
				ID: m.ID, Name: m.Name, Summary: m.Summary,
				Doc:   rules.Doc{Why: m.Why, Bad: m.Bad, Good: m.Good, References: m.References},
				Since: m.Since, Severity: sev, Kinds: m.Kinds, Source: rules.SourceRego, Tags: m.Tags,
				Options: policyOptions,
			}
			req, err := parseRequires(toAny(m.Requires), m.Kinds)
			if err != nil {
				builtin.err = fmt.Errorf("built-in policy table: %s: %w", m.ID, err)
				return
			}
			p := &policy{pkg: m.Package, loc: m.Loc, file: m.File, rule: r, kinds: newKindSet(m.Kinds), input: newKindSet(m.Kinds), requires: req, lazy: true, libFiles: m.Lib}
			r.Run = p.run
			// Run reports a compile error.
			r.Prepare = func(g *graph.Graph, globals rules.Globals) { _ = prepareBuiltinFor(g, globals) }
			builtin.policies = append(builtin.policies, p)
			builtin.rules = append(builtin.rules, r)
		}
	})
	return builtin.rules, builtin.err
}

// toAny turns the table's requires back into the shape METADATA gives.
func toAny(req [][]string) any {
	if req == nil {
		return nil
	}
	out := make([]any, len(req))
	for i, clause := range req {
		alts := make([]any, len(clause))
		for j, a := range clause {
			alts[j] = a
		}
		out[i] = alts
	}
	return out
}

// prepareBuiltin compiles every embedded policy not compiled yet.
func prepareBuiltin() error {
	if _, err := LoadBuiltin(); err != nil {
		return err
	}
	return compileBuiltinSet(func(*policy) bool { return true })
}

// prepareBuiltinFor compiles the embedded policies a bundle needs (those
// whose requirement it meets) that are not compiled yet: a pre-commit lint of
// a few files compiles only the policies that can report on them. The
// policies were compiled with every check by the test that writes
// builtin.json (TestBuiltinTable), so here the parser skips the METADATA
// blocks (the table has them) and the compiler the stages that only check
// (types, unused imports, conflicts, ...): together about half the cost of a
// full compile. The stages that rewrite or index the rules run as always.
func prepareBuiltinFor(g *graph.Graph, globals rules.Globals) error {
	if _, err := LoadBuiltin(); err != nil {
		return err
	}
	return compileBuiltinSet(func(p *policy) bool { return p.requires.met(g, globals) })
}

// warmKinds are the kinds of the bundles rolloutlint is for: a Rollout with
// its Services, VirtualService and DestinationRule.
var warmKinds = newKindSet([]string{"Rollout", "Service", "VirtualService", "DestinationRule"})

// Warm starts compiling, on its own goroutine, the embedded policies that a
// bundle of warmKinds needs (without Argo CD), except those skip names, so
// that a small lint need not wait for them once it has loaded its bundle:
// on a pre-commit bundle the compile (~3 ms) took longer than loading the
// bundle and running the Go rules together, and only starts once the bundle
// is loaded (prepareBuiltinFor needs its kinds). A bundle that needs other
// policies compiles them then; one that needs none of these has spent the
// compile on an otherwise idle CPU. A compile error is kept for the lint to
// report (compileBuiltinSet).
func Warm(skip func(id string) bool) {
	if _, err := LoadBuiltin(); err != nil {
		return // the lint reports it
	}
	todo := warmSet(skip)
	if len(todo) == 0 {
		return
	}
	go func() { _ = compileBuiltinSet(func(p *policy) bool { return slices.Contains(todo, p) }) }()
}

// warmSet is what Warm compiles: the built-in policies whose requirement a
// bundle of warmKinds meets without Argo CD, less those skip names.
func warmSet(skip func(id string) bool) []*policy {
	has := func(kind string) bool { return warmKinds.has(kind) }
	var out []*policy
	for _, p := range builtin.policies {
		if !skip(p.rule.ID) && p.requires.metBy(has, rules.Globals{}) {
			out = append(out, p)
		}
	}
	return out
}

// compileBuiltinSet compiles, together with the library, the embedded
// policies that want selects and that are not compiled yet, and prepares
// their queries. A compile error is kept: every later call returns it.
func compileBuiltinSet(want func(*policy) bool) error {
	builtin.mu.Lock()
	defer builtin.mu.Unlock()
	if builtin.compileErr != nil {
		return builtin.compileErr
	}
	var todo []*policy
	for _, p := range builtin.policies {
		if !p.ready.Load() && want(p) {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	c, mods, err := compileBuiltin(todo)
	if err != nil {
		builtin.compileErr = err
		return err
	}
	fields := readFields(nonTestModules(mods))
	templates := readsTemplates(nonTestModules(mods))
	parts := readsParts(nonTestModules(mods))
	declareFields(fields)
	declareTemplates(templates)
	declareParts(parts)
	builtin.templates = builtin.templates || templates
	builtin.parts |= parts
	for _, p := range todo {
		declareKinds(p.input)
		p.fields, p.templates, p.parts = fields, templates, parts
		if err := p.prepareQuery(c); err != nil {
			builtin.compileErr = err
			return err
		}
	}
	for _, p := range todo {
		p.ready.Store(true)
	}
	if builtin.fields == nil {
		builtin.fields = fields
	} else {
		builtin.fields = builtin.fields.union(fields)
	}
	return nil
}

// compileBuiltin parses the library and the given embedded policies without
// their METADATA and compiles them without the check-only stages.
func compileBuiltin(pols []*policy) (*ast.Compiler, map[string]*ast.Module, error) {
	all, err := builtinSources()
	if err != nil {
		return nil, nil, err
	}
	files := map[string]bool{}
	allLib := false
	for _, p := range pols {
		files[p.file] = true
		if p.libFiles == nil {
			allLib = true
		}
		for _, f := range p.libFiles {
			files[f] = true
		}
	}
	mods := map[string]*ast.Module{}
	for _, s := range all {
		wanted := files[s.Name] || allLib && isLibFile(s.Name)
		if s.IsTest() || !wanted {
			continue
		}
		m, err := ast.ParseModuleWithOpts(s.Name, s.Text, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			return nil, nil, fmt.Errorf("parsing the built-in policies: %w", err)
		}
		mods[s.Name] = m
	}
	for f := range files {
		if mods[f] == nil {
			return nil, nil, fmt.Errorf("the built-in policy table names %s, which the embedded policies do not hold (go test ./policies -run BuiltinTable -update)", f)
		}
	}
	pruneLib(mods, isLibFile)
	c := newCompiler().WithSkipStages(checkOnlyStages...)
	if c.Compile(mods); c.Failed() {
		return nil, nil, fmt.Errorf("compiling the built-in policies: %w", c.Errors)
	}
	return c, mods, nil
}

// isLibFile reports whether an embedded file belongs to the shared library.
func isLibFile(name string) bool { return strings.HasPrefix(name, builtinPrefix+"rego/lib/") }

// checkOnlyStages are the compiler stages that only report errors; the
// embedded policies are compiled with them by the tests.
var checkOnlyStages = []ast.StageID{
	ast.StageCheckUnusedImports, ast.StageCheckKeywordOverrides, ast.StageCheckDuplicateImports,
	ast.StageCheckVoidCalls, ast.StageCheckRuleConflicts, ast.StageCheckUndefinedFuncs,
	ast.StageCheckSafetyRuleHeads, ast.StageCheckRecursion, ast.StageCheckTypes,
	ast.StageCheckUnsafeBuiltins, ast.StageCheckDeprecatedBuiltins, ast.StageBuildRequiredCapabilities,
}

// PrepareBuiltin compiles the embedded policies now instead of at their first
// run: a long-running server (the webhook) pays it at start, not on its first
// review. It is safe to call from several goroutines and more than once.
func PrepareBuiltin() error { return prepareBuiltin() }

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
		if isLibFile(s.Name) && !s.IsTest() {
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
	// The built-in policies are compiled now, so that their kinds and
	// fields are declared before any input is converted: a lint converts
	// its graph once for the user's and the built-in policies together.
	if err := prepareBuiltin(); err != nil {
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
