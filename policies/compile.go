package policies

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/rules"
)

// Capabilities returns the sandbox every policy is compiled with: this OPA's
// built-ins minus the network, runtime and non-deterministic ones, and no
// network hosts at all.
func Capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	kept := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if _, bad := forbiddenBuiltins[b.Name]; bad {
			continue
		}
		kept = append(kept, b)
	}
	caps.Builtins = kept
	caps.AllowNet = []string{}
	return caps
}

// policy is one rule package and its prepared query.
type policy struct {
	pkg   string // data path without "data.", e.g. rolloutlint.gitops.vs_weights_committed
	loc   string // file:line of the METADATA block
	file  string
	rule  *rules.Rule
	kinds kindSet // custom.kinds, as declared
	// input is the kinds whose objects the policy's input must hold: the
	// declared ones for a built-in policy, every kind for a user policy, so
	// that a user policy never misses an object because of its declaration.
	input kindSet
	// fields is the object fields the policy's input must hold (whole
	// objects for a user policy, see readFields).
	fields *fieldTree
	// templates is whether the policy's input must hold the Rollouts'
	// analysis templates (always for a user policy, see readsTemplates).
	templates bool
	// parts is the per-object parts of the input the policy reads (all of
	// them for a user policy, see readsParts).
	parts inputParts
	query rego.PreparedEvalQuery
	// requires is custom.requires: a bundle that fails it is not evaluated
	// (see requirement).
	requires requirement
	// lazy marks a built-in policy: it is compiled before its first run
	// that its requirement lets through, with the other built-in policies
	// that bundle needs (see prepareBuiltinFor).
	lazy bool
	// libFiles is, for a lazy policy, the library files its rules reach
	// (builtin.json); nil means every library file.
	libFiles []string
	// ready is set once query and fields are (for a lazy policy, under
	// builtin.mu): a run that finds it set needs no lock.
	ready atomic.Bool
}

// compiled is a set of policies compiled together.
type compiled struct {
	compiler *ast.Compiler
	policies []*policy
	rules    []*rules.Rule
	fields   *fieldTree // the object fields the set's policies read
}

// parse parses Rego v1 sources with annotations.
func parse(srcs []Source) (map[string]*ast.Module, error) {
	mods := make(map[string]*ast.Module, len(srcs))
	var errs []string
	for _, s := range srcs {
		m, err := ast.ParseModuleWithOpts(s.Name, s.Text, ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1})
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		mods[s.Name] = m
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("parsing policies:\n  %s", strings.Join(errs, "\n  "))
	}
	return mods, nil
}

// newCompiler returns a compiler with the sandbox capabilities.
func newCompiler() *ast.Compiler {
	return ast.NewCompiler().WithCapabilities(Capabilities())
}

// compileModules compiles modules in the sandbox, turning a call to a
// forbidden built-in into a message that says why it is refused.
func compileModules(mods map[string]*ast.Module) (*ast.Compiler, error) {
	c := newCompiler()
	c.Compile(mods)
	if !c.Failed() {
		return c, nil
	}
	errs := make([]string, 0, len(c.Errors))
	for _, e := range c.Errors {
		errs = append(errs, explainCompileError(e))
	}
	return nil, fmt.Errorf("compiling policies:\n  %s", strings.Join(errs, "\n  "))
}

var undefinedFn = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`undefined function ([a-z0-9_.]+)`) })

func explainCompileError(e *ast.Error) string {
	loc := "<policy>"
	if e.Location != nil {
		loc = fmt.Sprintf("%s:%d", e.Location.File, e.Location.Row)
	}
	if m := undefinedFn().FindStringSubmatch(e.Message); m != nil {
		if why, ok := forbiddenBuiltins[m[1]]; ok {
			return fmt.Sprintf("%s: %s is not allowed in rolloutlint policies (%s): policies see only the bundle", loc, m[1], why)
		}
	}
	return fmt.Sprintf("%s: %s", loc, e.Message)
}

// compile parses, checks the contract, compiles and prepares a set of sources.
// Test files are parsed and compiled (so they must be valid) but define no rule.
func compile(srcs []Source, source rules.Source) (*compiled, error) {
	mods, err := parse(srcs)
	if err != nil {
		return nil, err
	}
	c, err := compileModules(mods)
	if err != nil {
		return nil, err
	}
	pols, err := collectPolicies(srcs, mods, source)
	if err != nil {
		return nil, err
	}
	if err := checkKindsRead(c, pols); err != nil {
		return nil, err
	}
	out := &compiled{compiler: c, policies: pols, fields: wholeObjects()}
	templates, parts := true, allParts
	if source == rules.SourceRego {
		out.fields = readFields(nonTestModules(mods))
		templates = readsTemplates(nonTestModules(mods))
		parts = readsParts(nonTestModules(mods))
	}
	declareFields(out.fields)
	declareTemplates(templates)
	declareParts(parts)
	for _, p := range pols {
		declareKinds(p.input)
		p.fields, p.templates, p.parts = out.fields, templates, parts
		if err := p.prepareQuery(c); err != nil {
			return nil, err
		}
		p.ready.Store(true)
		p.rule.Run = p.run
		out.rules = append(out.rules, p.rule)
	}
	return out, nil
}

// prepareQuery prepares the policy's violation query over compiled modules.
func (p *policy) prepareQuery(c *ast.Compiler) error {
	q := ast.NewBody(ast.NewExpr(ast.NewTerm(ast.MustParseRef("data." + p.pkg + ".violation"))))
	pq, err := rego.New(rego.ParsedQuery(q), rego.Compiler(c)).PrepareForEval(context.Background())
	if err != nil {
		return fmt.Errorf("%s: preparing policy %s: %w", p.loc, p.pkg, err)
	}
	p.query = pq
	return nil
}

var (
	idRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^RL[0-9]{4}$`) })
	slugRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })
)

// collectPolicies finds the rule packages (non-test packages defining
// `violation`) and reads their metadata.
func collectPolicies(srcs []Source, mods map[string]*ast.Module, source rules.Source) ([]*policy, error) {
	type pkgInfo struct {
		path      string
		file      string
		line      int
		violation bool
		ann       *ast.Annotations
		annFile   string
	}
	pkgs := map[string]*pkgInfo{}
	var order []string
	var errs []string
	for _, s := range srcs {
		if s.IsTest() {
			continue
		}
		m := mods[s.Name]
		path := strings.TrimPrefix(m.Package.Path.String(), "data.")
		if source == rules.SourceUser && (path == "rolloutlint.lib" || strings.HasPrefix(path, "rolloutlint.lib.")) {
			if !strings.HasPrefix(s.Name, builtinPrefix) {
				errs = append(errs, fmt.Sprintf("%s:%d: package %s is reserved for rolloutlint's shared library", s.Name, m.Package.Location.Row, path))
			}
			continue
		}
		pi := pkgs[path]
		if pi == nil {
			pi = &pkgInfo{path: path, file: s.Name, line: m.Package.Location.Row}
			pkgs[path] = pi
			order = append(order, path)
		}
		for _, r := range m.Rules {
			if isViolationRule(r) {
				pi.violation = true
			}
		}
		for _, a := range m.Annotations {
			// Rule metadata sits on the package or on its violation rule.
			declaresMetadata := a.Scope == "package" || a.Scope == "rule" && isViolationAnnotation(m, a)
			if !declaresMetadata {
				continue
			}
			if a.Custom["id"] == nil {
				continue
			}
			if pi.ann != nil {
				errs = append(errs, fmt.Sprintf("%s:%d: package %s declares its rule metadata twice (also at %s:%d)",
					a.Location.File, a.Location.Row, path, pi.annFile, pi.ann.Location.Row))
				continue
			}
			pi.ann, pi.annFile = a, s.Name
		}
	}
	var out []*policy
	seenID := map[string]string{}
	for _, path := range order {
		pi := pkgs[path]
		switch {
		case pi.ann == nil && !pi.violation:
			continue // a helper package
		case pi.ann == nil:
			errs = append(errs, fmt.Sprintf("%s:%d: package %s defines violation but has no `# METADATA` block with custom.id (see docs/policies.md)", pi.file, pi.line, path))
			continue
		case !pi.violation:
			errs = append(errs, fmt.Sprintf("%s:%d: package %s has rule metadata but no `violation` rule", pi.annFile, pi.ann.Location.Row, path))
			continue
		}
		r, req, err := ruleFromAnnotations(path, pi.ann, source)
		loc := fmt.Sprintf("%s:%d", pi.annFile, pi.ann.Location.Row)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: package %s: %v", loc, path, err))
			continue
		}
		if prev, dup := seenID[r.ID]; dup {
			errs = append(errs, fmt.Sprintf("%s: package %s: rule ID %s already used by %s", loc, path, r.ID, prev))
			continue
		}
		seenID[r.ID] = path
		p := &policy{pkg: path, loc: loc, file: pi.annFile, rule: r, kinds: newKindSet(r.Kinds), input: newKindSet(r.Kinds), requires: req}
		if source == rules.SourceUser {
			p.input = newKindSet([]string{AllKinds})
			row := pi.line // the package clause
			r.Defined = graph.Position{File: pi.annFile, Line: row, Column: 1, EndLine: row, EndColumn: 2}
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return nil, errors.New("invalid policy metadata:\n  " + strings.Join(errs, "\n  "))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rule.ID < out[j].rule.ID })
	return out, nil
}

// isViolationAnnotation reports whether a rule-scoped annotation documents a
// `violation` rule of the module's package.
func isViolationAnnotation(m *ast.Module, a *ast.Annotations) bool {
	return a.GetTargetPath().Equal(m.Package.Path.Append(ast.StringTerm("violation")))
}

// isViolationRule reports whether a rule defines (part of) `violation`.
func isViolationRule(r *ast.Rule) bool {
	ref := r.Head.Ref()
	if len(ref) == 0 {
		return false
	}
	switch v := ref[0].Value.(type) {
	case ast.Var:
		return v == "violation"
	case ast.String:
		return v == "violation"
	}
	return false
}

// ruleFromAnnotations checks the metadata contract and builds the rule (Run is
// set once the query is prepared) and the policy's requirement.
func ruleFromAnnotations(pkg string, a *ast.Annotations, source rules.Source) (*rules.Rule, requirement, error) {
	r, err := ruleFromMetadata(pkg, a, source)
	if err != nil {
		return nil, nil, err
	}
	req, err := parseRequires(a.Custom["requires"], r.Kinds)
	if err != nil {
		return nil, nil, err
	}
	return r, req, nil
}

// ruleFromMetadata builds the rule from the metadata.
func ruleFromMetadata(pkg string, a *ast.Annotations, source rules.Source) (*rules.Rule, error) {
	id, _ := a.Custom["id"].(string)
	if !idRe().MatchString(id) {
		return nil, fmt.Errorf("custom.id %v is not RL followed by four digits", a.Custom["id"])
	}
	if strings.TrimSpace(a.Title) == "" {
		return nil, errors.New("missing title (the one-line summary)")
	}
	if strings.TrimSpace(a.Description) == "" {
		return nil, errors.New("missing description (why it matters and how to fix it)")
	}
	sevText, _ := a.Custom["severity"].(string)
	sev, err := rules.ParseSeverity(sevText)
	if err != nil || sevText == "" {
		return nil, fmt.Errorf("custom.severity %v is not error, warning or info", a.Custom["severity"])
	}
	kinds, err := stringList(a.Custom["kinds"])
	if err != nil || len(kinds) == 0 {
		return nil, errors.New("custom.kinds must be a non-empty list of the kinds the policy reads")
	}
	tags, err := stringList(a.Custom["tags"])
	if err != nil {
		return nil, errors.New("custom.tags must be a list of strings")
	}
	name, _ := a.Custom["name"].(string)
	if a.Custom["name"] == nil {
		name = strings.ReplaceAll(pkg[strings.LastIndexByte(pkg, '.')+1:], "_", "-")
	}
	if !slugRe().MatchString(name) {
		return nil, fmt.Errorf("rule name %q is not a kebab-case slug (set custom.name)", name)
	}
	for k := range a.Custom {
		switch k {
		case "id", "severity", "kinds", "requires", "tags", "name", "bad", "good", "since":
		default:
			return nil, fmt.Errorf("unknown custom.%s (known: id, name, severity, kinds, requires, tags, bad, good, since)", k)
		}
	}
	doc := rules.Doc{Why: strings.TrimSpace(a.Description)}
	var ok bool
	if doc.Bad, ok = stringOr(a.Custom["bad"]); !ok {
		return nil, errors.New("custom.bad must be a string (a YAML example that makes the policy fire)")
	}
	if doc.Good, ok = stringOr(a.Custom["good"]); !ok {
		return nil, errors.New("custom.good must be a string (the example fixed)")
	}
	since, ok := stringOr(a.Custom["since"])
	if !ok {
		return nil, errors.New("custom.since must be a string (the release that added the rule)")
	}
	for _, rr := range a.RelatedResources {
		doc.References = append(doc.References, rules.Reference{Title: rr.Description, URL: rr.Ref.String()})
	}
	return &rules.Rule{
		ID: id, Name: name, Summary: strings.TrimSpace(a.Title), Doc: doc, Since: since, Severity: sev,
		Kinds: kinds, Source: source, Tags: tags, Options: policyOptions,
	}, nil
}

// policyOptions are the options every policy accepts.
var policyOptions = []rules.Option{{
	Name: "timeout", Type: rules.OptDuration, Default: DefaultTimeout.String(), Example: "2s",
	Doc: "how long one evaluation of the policy over the bundle may run before it is stopped and reported as RL0009.",
}, {
	Name: "memory", Type: rules.OptQuantity, Default: formatBytes(DefaultMemory), Example: "1Gi",
	Doc: "how much one evaluation of the policy may grow the heap before it is stopped and reported as RL0009.",
}}

// stringOr returns a custom string field, "" when it is absent, and false
// when it is not a string.
func stringOr(v any) (string, bool) {
	if v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}

func stringList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	raw, ok := v.([]any)
	if !ok {
		return nil, errors.New("not a list")
	}
	out := make([]string, 0, len(raw))
	for _, x := range raw {
		s, ok := x.(string)
		if !ok {
			return nil, errors.New("not a list of strings")
		}
		out = append(out, s)
	}
	return out, nil
}

// readDirs reads every *.rego file under the directories, sorted by path.
func readDirs(dirs []string) ([]Source, error) {
	var out []Source
	for _, dir := range dirs {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("policy directory: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("policy directory %s: not a directory", dir)
		}
		err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(p) != ".rego" {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, Source{Name: p, Text: string(data)})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading policies in %s: %w", dir, err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		return nil, fmt.Errorf("no .rego files in %s", strings.Join(dirs, ", "))
	}
	return out, nil
}

// nonTestModules returns the modules that are not Rego unit tests, by name.
func nonTestModules(mods map[string]*ast.Module) []*ast.Module {
	names := make([]string, 0, len(mods))
	for name := range mods {
		if !strings.HasSuffix(name, "_test.rego") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := make([]*ast.Module, len(names))
	for i, name := range names {
		out[i] = mods[name]
	}
	return out
}
