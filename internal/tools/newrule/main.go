// Command newrule scaffolds a Go rule: the rule file
// rules/<theme>/rl<ID>_<name>.go with its documentation fields to fill in and
// an example check, its testdata folder testdata/rules/<ID>/ with a `# want`
// file and a clean file, and the registry line in rules/all/all.go. See
// CONTRIBUTING.md ("Adding a rule").
//
//	go run ./internal/tools/newrule RL2099 some-name
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"
)

func main() {
	root := flag.String("root", ".", "repository root")
	since := flag.String("since", "", "release that adds the rule (default: the newest Since of the existing rules)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/tools/newrule [-root DIR] [-since vX.Y.Z] RLxxxx kebab-name")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	files, err := scaffold(*root, flag.Arg(0), flag.Arg(1), *since)
	if err == nil {
		err = write(*root, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "newrule:", err)
		os.Exit(1)
	}
	for _, f := range files {
		verb := "wrote"
		if f.modified {
			verb = "updated"
		}
		fmt.Printf("%s %s\n", verb, f.path)
	}
	id := strings.ToUpper(flag.Arg(0))
	fmt.Printf(`
Next (CONTRIBUTING.md, "Adding a rule"):
  1. write the check in %s and the Doc fields (no TODO may remain);
  2. make testdata/rules/%s/bad.yaml fail the way users get it wrong, clean.yaml the right way;
  3. go test ./rules/all -run 'TestRules/%s$'
  4. add a realistic mistake to a testdata/bundles/broken-* bundle, then
     go test ./internal/golden -update   (review the diff)
  5. make docs && make test
`, files[0].path, id, id)
}

// file is one file the scaffolder writes, relative to the repository root.
type file struct {
	path     string
	data     []byte
	modified bool // an existing file (the registry) rather than a new one
}

// themes maps an ID's first digit to its package under rules/ (DESIGN.md).
var themes = map[byte]string{'0': "tool", '1': "rollout", '2': "traffic", '3': "istio", '4': "analysis", '6': "plan"}

var (
	idPattern    = regexp.MustCompile(`^RL[0-9]{4}$`)
	namePattern  = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	sincePattern = regexp.MustCompile(`Since: +"(v[0-9]+\.[0-9]+\.[0-9]+)"`)
)

// scaffold returns the files for a new rule, after checking that the ID and
// name are well formed and free.
func scaffold(root, id, name, since string) ([]file, error) {
	id = strings.ToUpper(id)
	if !idPattern.MatchString(id) {
		return nil, fmt.Errorf("rule ID %q is not RL followed by four digits", id)
	}
	if !namePattern.MatchString(name) {
		return nil, fmt.Errorf("rule name %q is not a kebab-case slug such as some-name", name)
	}
	theme, ok := themes[id[2]]
	switch {
	case id[2] == '5':
		return nil, errors.New("RL5xxx rules are Rego policies: add one under policies/rego/ (see docs/policies.md)")
	case id[2] >= '7':
		return nil, fmt.Errorf("%s: RL7xxx-RL9xxx are not built-in themes (RL9xxx is left to user policies)", id)
	case !ok:
		return nil, fmt.Errorf("%s: no theme for this ID", id)
	}
	existing, err := ruleIDs(filepath.Join(root, "rules"))
	if err != nil {
		return nil, err
	}
	varName := camel(name)
	for _, r := range existing {
		switch {
		case r.id == id:
			return nil, fmt.Errorf("%s is already %s (%s); IDs are never reused", id, r.name, r.file)
		case r.name == name:
			return nil, fmt.Errorf("the name %s is already %s's (%s)", name, r.id, r.file)
		case r.pkg == theme && r.varName == varName:
			return nil, fmt.Errorf("%s.%s already exists (%s)", theme, varName, r.file)
		}
	}
	if since == "" {
		if since, err = newestSince(existing); err != nil {
			return nil, err
		}
	}
	ruleFile := filepath.Join("rules", theme, strings.ToLower(id)+"_"+strings.ReplaceAll(name, "-", "_")+".go")
	testdata := filepath.Join("testdata", "rules", id)
	for _, p := range []string{ruleFile, testdata} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			return nil, fmt.Errorf("%s already exists", p)
		}
	}
	vars := map[string]string{"Pkg": theme, "Var": varName, "ID": id, "Name": name, "Since": since, "Tag": theme}
	src, err := render(ruleTemplate, vars)
	if err != nil {
		return nil, err
	}
	if src, err = format.Source(src); err != nil {
		return nil, fmt.Errorf("formatting the rule file: %w", err)
	}
	bad, err := render(badTemplate, vars)
	if err != nil {
		return nil, err
	}
	clean, err := render(cleanTemplate, vars)
	if err != nil {
		return nil, err
	}
	registry, err := register(root, theme, varName, id, existing)
	if err != nil {
		return nil, err
	}
	return []file{
		{path: ruleFile, data: src},
		{path: filepath.Join(testdata, "bad.yaml"), data: bad},
		{path: filepath.Join(testdata, "clean.yaml"), data: clean},
		{path: filepath.Join("rules", "all", "all.go"), data: registry, modified: true},
	}, nil
}

// write writes the files; new files must not exist.
func write(root string, files []file) error {
	for _, f := range files {
		p := filepath.Join(root, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
		if f.modified {
			flags = os.O_WRONLY | os.O_TRUNC
		}
		w, err := os.OpenFile(p, flags, 0o644)
		if err != nil {
			return err
		}
		if _, err := w.Write(f.data); err != nil {
			_ = w.Close() // the write error is the one to report
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return nil
}

// existingRule is a rule declared under rules/.
type existingRule struct {
	id, name, since, pkg, varName, file string
}

// ruleIDs reads every `var X = &rules.Rule{ID: ..., Name: ...}` under dir.
func ruleIDs(dir string) ([]existingRule, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", "*.go"))
	if err != nil {
		return nil, err
	}
	var out []existingRule
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		fs := token.NewFileSet()
		f, err := parser.ParseFile(fs, p, src, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if len(vs.Names) != 1 || len(vs.Values) != 1 {
					continue
				}
				u, ok := vs.Values[0].(*ast.UnaryExpr)
				if !ok {
					continue
				}
				cl, ok := u.X.(*ast.CompositeLit)
				if !ok {
					continue
				}
				if se, ok := cl.Type.(*ast.SelectorExpr); !ok || se.Sel.Name != "Rule" {
					continue
				}
				r := existingRule{pkg: f.Name.Name, varName: vs.Names[0].Name, file: p}
				for _, e := range cl.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					k, _ := kv.Key.(*ast.Ident)
					lit, _ := kv.Value.(*ast.BasicLit)
					if k == nil || lit == nil {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					switch k.Name {
					case "ID":
						r.id = v
					case "Name":
						r.name = v
					case "Since":
						r.since = v
					}
				}
				if r.id != "" {
					out = append(out, r)
				}
			}
		}
	}
	return out, nil
}

// newestSince is the highest Since among the rules: the release being
// prepared.
func newestSince(rs []existingRule) (string, error) {
	best := ""
	var bestParts [3]int
	for _, r := range rs {
		m := sincePattern.FindStringSubmatch(`Since: "` + r.since + `"`)
		if m == nil {
			continue
		}
		var parts [3]int
		for i, s := range strings.Split(strings.TrimPrefix(m[1], "v"), ".") {
			parts[i], _ = strconv.Atoi(s)
		}
		if best == "" || parts[0] > bestParts[0] || parts[0] == bestParts[0] && (parts[1] > bestParts[1] || parts[1] == bestParts[1] && parts[2] > bestParts[2]) {
			best, bestParts = m[1], parts
		}
	}
	if best == "" {
		return "", errors.New("no existing rule has a Since version; pass -since vX.Y.Z")
	}
	return best, nil
}

// register returns rules/all/all.go with the new rule's line in its theme's
// section, in ID order.
func register(root, theme, varName, id string, existing []existingRule) ([]byte, error) {
	path := filepath.Join(root, "rules", "all", "all.go")
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{} // "theme.Var" -> ID
	for _, r := range existing {
		ids[r.pkg+"."+r.varName] = r.id
	}
	lines := strings.Split(string(src), "\n")
	header := fmt.Sprintf("\t// RL%cxxx:", id[2])
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, header) {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("%s: no %q section in goRules", path, strings.TrimSpace(header))
	}
	insert := start + 1
	for i := start + 1; i < len(lines); i++ {
		entry := strings.TrimSuffix(strings.TrimSpace(lines[i]), ",")
		if entry == "" || strings.HasPrefix(entry, "//") || entry == "}" {
			break
		}
		if other, ok := ids[entry]; ok && other < id {
			insert = i + 1
		}
	}
	line := "\t" + theme + "." + varName + ","
	lines = append(lines[:insert], append([]string{line}, lines[insert:]...)...)
	out, err := format.Source([]byte(strings.Join(lines, "\n")))
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", path, err)
	}
	return out, nil
}

// camel turns some-name into SomeName.
func camel(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func render(t *template.Template, vars map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, vars); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// The rule file. Its example check (a Rollout with spec.replicas 0) is
// there so that the testdata and the harness work from the first run;
// replace it with the rule's own.
var ruleTemplate = template.Must(template.New("rule").Parse(`package {{.Pkg}}

import (
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// {{.Var}} reports TODO: what the rule finds.
var {{.Var}} = &rules.Rule{
	ID: "{{.ID}}", Name: "{{.Name}}", Severity: rules.Warning, Source: rules.SourceGo,
	Kinds: []string{kinds.Rollout}, Tags: []string{"{{.Tag}}"},
	Summary: "TODO: one line saying what the rule finds.",
	Doc: rules.Doc{
		Why: ` + "`" + `TODO: what goes wrong at runtime when the rule fires (what Argo Rollouts or
Istio does with this input), and how to fix it. Markdown; write a backtick as \'.` + "`" + `,
		Bad: ` + "`" + `
TODO: a YAML example that makes the rule fire
` + "`" + `,
		Good: ` + "`" + `
TODO: the same example fixed
` + "`" + `,
	},
	Since: "{{.Since}}",
	Run: func(p *rules.Pass) error {
		for _, r := range p.Graph.OfKind(kinds.Rollout) {
			ro := r.Rollout()
			if ro == nil {
				continue
			}
			// TODO: replace this example check with the rule's own. The
			// message is the first sentence, what is wrong with names and
			// values; the detail says what follows from it and how to fix it.
			if n := ro.Spec.Replicas; n != nil && *n == 0 {
				p.ReportDetail(r, "spec.replicas", "Rollout "+ro.Name+" has spec.replicas 0",
					"This is the example check of {{.ID}}: replace it.")
			}
		}
		return nil
	},
}
`))

var badTemplate = template.Must(template.New("bad").Parse(`# {{.ID}} {{.Name}}: a want comment at the end of a line (want, then quoted
# regexps) lists the findings the rule must report on that line, and no others.
# TODO: replace with the mistake the rule finds, as users make it.
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  replicas: 0 # want "Rollout checkout has spec.replicas 0"
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      containers:
      - name: app
        image: shop/checkout:1.0.0
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {duration: 10m}
`))

var cleanTemplate = template.Must(template.New("clean").Parse(`# {{.ID}} {{.Name}}: no finding may be reported in this file.
# TODO: replace with correct input close to bad.yaml.
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  replicas: 3
  selector:
    matchLabels: {app: checkout}
  template:
    metadata:
      labels: {app: checkout}
    spec:
      containers:
      - name: app
        image: shop/checkout:1.0.0
  strategy:
    canary:
      steps:
      - setWeight: 20
      - pause: {duration: 10m}
`))
