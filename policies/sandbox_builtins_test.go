package policies

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/rolloutlint/rolloutlint/analyzer"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

// TestEveryBuiltinIsClassified fails when OPA (an upgrade) has a built-in
// the sandbox table does not classify, or the table names one OPA does not
// have, so that no built-in enters the sandbox unreviewed.
func TestEveryBuiltinIsClassified(t *testing.T) {
	if len(duplicateClasses) > 0 {
		t.Errorf("classified twice: %v", duplicateClasses)
	}
	have := map[string]bool{}
	for _, b := range ast.CapabilitiesForThisVersion().Builtins {
		have[b.Name] = true
		c, ok := sandboxBuiltins[b.Name]
		switch {
		case !ok:
			t.Errorf("%s is not classified: read its implementation in OPA's topdown and add it to policies/builtins.go as pure, left out or guarded", b.Name)
		case b.Nondeterministic && c.Kind == Pure:
			t.Errorf("%s is non-deterministic by OPA's own account and classified pure", b.Name)
		}
	}
	for name := range sandboxBuiltins {
		if !have[name] {
			t.Errorf("%s is classified but OPA has no such built-in", name)
		}
	}
	inCaps := map[string]bool{}
	for _, b := range Capabilities().Builtins {
		inCaps[b.Name] = true
	}
	for name, c := range sandboxBuiltins {
		if inCaps[name] == (c.Kind == LeftOut) {
			t.Errorf("%s is %s, and in the capabilities: %v", name, c.Kind, inCaps[name])
		}
		if c.Kind != Pure && c.Why == "" {
			t.Errorf("%s is %s without a reason", name, c.Kind)
		}
	}
}

// TestGuardedBuiltinsAreInstalled checks that every guarded built-in has
// rolloutlint's implementation installed, and nothing else has.
func TestGuardedBuiltinsAreInstalled(t *testing.T) {
	for name, c := range sandboxBuiltins {
		if _, ok := replaced[name]; ok != (c.Kind == Guarded) {
			t.Errorf("%s is %s, and its implementation replaced: %v", name, c.Kind, ok)
		}
	}
}

// limitedEval lints the RL0009 testdata with a probe policy under the
// given timeout and memory bound and returns its findings and failures,
// and how long the lint took.
func limitedEval(t *testing.T, expr, timeout, memory string) (found, failed []string, took time.Duration) {
	t.Helper()
	rs := loadProbe(t, expr)
	g, err := load.Paths([]string{"../testdata/rules/RL0009/bad.yaml"}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig("rules:\n  RL9100:\n    options: {timeout: " + timeout + ", memory: " + memory + "}\n")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := analyzer.Run(g, analyzer.Options{Rules: rs, Mode: rules.ModeCLI, Config: cfg})
	return messages(res, "RL9100"), messages(res, "RL0009"), time.Since(start)
}

// TestOutsizedCallsAreRefused runs calls whose single built-in call would
// do work out of proportion to its operands, past the reach of the
// timeout and the memory bound: each is refused before it starts, with
// RL0009 naming the policy, the call's file:line and the reason.
func TestOutsizedCallsAreRefused(t *testing.T) {
	const mb = `sprintf("%01000000d", [0])` // a million zeros, cheap to build
	cases := map[string]string{
		`bits.lsh(1, 100000000)`:                                       "bits.lsh: the result would have about 100000001 bits",
		`bits.lsh(1, 1000000000000)`:                                   "bits.lsh: the result would have about",
		`mul(bits.lsh(1, 60000), bits.lsh(1, 60000))`:                  "mul: the result would have about 120002 bits",
		`product([bits.lsh(1, 60000), bits.lsh(1, 60000), 3])`:         "product: the result would have",
		`units.parse("1e999999")`:                                      "units.parse: the result would have",
		`units.parse_bytes("1e999999")`:                                "units.parse_bytes: the result would have",
		`replace(` + mb + `, "0", ` + mb + `)`:                         "replace: the result would be",
		`strings.replace_n({"0": ` + mb + `}, ` + mb + `)`:             "strings.replace_n: the result would be",
		`regex.replace(` + mb + `, "0", ` + mb + `)`:                   "regex.replace: the result would be",
		`concat(` + mb + `, [" " | some _ in numbers.range(1, 1000)])`: "concat: the result would be",
		`sprintf(concat("", ["%01000000d" | some _ in numbers.range(1, 300)]), [0 | some _ in numbers.range(1, 300)])`:                      "sprintf: the result would be",
		`json.marshal_with_options([x | some x in numbers.range(1, 1000)], {"pretty": true, "indent": ` + mb + `})`:                         "json.marshal_with_options: the result would be",
		`graphql.is_valid(concat("", ["{", concat(" ", ["a" | some _ in numbers.range(1, 40000)]), "}"]), "type Query { a: Int }")`:         "graphql.is_valid: the query has more than 2000 names",
		`graphql.parse_and_verify(concat("", ["{", concat(" ", ["a" | some _ in numbers.range(1, 40000)]), "}"]), "type Query { a: Int }")`: "graphql.parse_and_verify: the query has more than 2000 names",
		`strings.render_template("{{range 1000}}{{printf \"%01000000d\" 0}}{{end}}", {})`:                                                   "strings.render_template: the output passed 64Mi, which with the buffer's growth and the result's copy would pass the policy's memory bound of 256Mi",
	}
	for expr, want := range cases {
		found, failed, _ := limitedEval(t, expr, "10s", "256Mi")
		if len(found) != 0 || len(failed) != 1 || !strings.Contains(failed[0], want) ||
			!strings.Contains(failed[0], "policy acme.probe") || !strings.Contains(failed[0], "p.rego:13") {
			t.Errorf("%s:\nfindings %.200q\nfailures %.300q\nwant a failure naming the policy, p.rego:13 and %q", expr, found, failed, want)
		}
		// No wall-clock bound: the refusal's message ("would have", "would
		// be", "more than") comes from the check before the call, so the
		// call never ran; had it run, the 10 s timeout or the memory bound
		// would have ended it with another message. A bound on the time
		// failed on a loaded machine (5.4 s against 5 s, mostly compiling
		// and building the operands).
	}
}

// TestGuardsLetOrdinaryCallsThrough checks the guarded built-ins' own
// answers on ordinary operands.
func TestGuardsLetOrdinaryCallsThrough(t *testing.T) {
	for expr, want := range map[string]string{
		`mul(6, 7)`:                                "result 42",
		`product([2, 3, 4])`:                       "result 24",
		`bits.lsh(1, 10)`:                          "result 1024",
		`units.parse("1.5k")`:                      "result 1500",
		`units.parse_bytes("1e3KiB")`:              "result 1024000",
		`concat("-", ["a", "b", "c"])`:             "result a-b-c",
		`replace("aXbX", "X", "YY")`:               "result aYYbYY",
		`strings.replace_n({"a": "AA"}, "ab")`:     "result AAb",
		`regex.replace("a1b22", "[0-9]+", "<$0>")`: "result a<1>b<22>",
		`count(json.marshal_with_options([x | some x in numbers.range(1, 1000)], {"pretty": false, "indent": sprintf("%01000000d", [0])}))`: "result 3894",
		`sprintf("%05d|%.2f|%s", [42, 3.14159, "x"])`:                                                             "result 00042|3.14|x",
		`json.marshal_with_options({"a": [1]}, {"pretty": true, "indent": " "})`:                                  "result {\n \"a\": [\n  1\n ]\n}",
		`strings.render_template("{{range $i, $x := .xs}}{{$i}}={{$x}} {{end}}{{.missing}}", {"xs": ["a", "b"]})`: "result 0=a 1=b <undefined>",
		`graphql.is_valid("{ a b }", "type Query { a: Int b: String }")`:                                          "result true",
		`graph.reachable({"a": ["b"], "b": ["c"], "c": [], "d": ["a"]}, ["a"])`:                                   "result {\"a\", \"b\", \"c\"}",
		`graph.reachable_paths({"a": ["b", "c"], "b": ["c"], "c": []}, ["a"])`:                                    "result {[\"a\", \"b\", \"c\"], [\"a\", \"c\"]}",
	} {
		found, failed := evalPolicy(t, expr)
		if len(failed) != 0 || len(found) != 1 || found[0] != want {
			t.Errorf("%s: findings %q, failures %q, want %q", expr, found, failed, want)
		}
	}
}

// TestUnboundedBuiltinsStopOnTime runs calls that do unbounded work on a
// small input, inside one built-in call: each is stopped at the policy's
// timeout (or its memory bound) and reported, and the lint ends promptly.
func TestUnboundedBuiltinsStopOnTime(t *testing.T) {
	var complete strings.Builder
	complete.WriteString("{")
	for i := range 14 {
		if i > 0 {
			complete.WriteString(", ")
		}
		var edges []string
		for j := range 14 {
			if j != i {
				edges = append(edges, fmt.Sprintf(`"%d"`, j))
			}
		}
		fmt.Fprintf(&complete, `"%d": [%s]`, i, strings.Join(edges, ", "))
	}
	complete.WriteString("}")
	// A YAML alias bomb, a rego module and a GraphQL query nested deeper than their parsers allow
	// (built with replace, not a comprehension of 10⁵ terms: the parser's refusal is what is timed).
	bomb := `"a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"`
	for expr, why := range map[string]string{
		`yaml.unmarshal(` + bomb + `)`: "yaml",
		`rego.parse_module("p.rego", concat("", ["package p\nx := ", replace(sprintf("%0200000d", [0]), "0", "[")]))`: "rego",
		`graphql.parse_query(replace(sprintf("%0100000d", [0]), "0", "{a"))`:                                          "graphql",
	} {
		// A parser that did not refuse would run into the timeout: a failure.
		found, failed, _ := limitedEval(t, expr, "5s", "256Mi")
		if len(found) != 0 || len(failed) != 0 {
			t.Errorf("%s: findings %.200q, failures %.200q: want the parser's refusal (the expression undefined, no failure)", why, found, failed)
		}
	}
	// The same built-ins answer on small inputs of the same shape.
	for _, expr := range []string{`yaml.unmarshal("a: &a [x]\nb: [*a, *a]\n")`, `rego.parse_module("p.rego", "package p\nx := [[[1]]]\n")`, `graphql.parse_query("{a{a{a}}}")`} {
		if found, failed := evalPolicy(t, expr); len(found) != 1 || len(failed) != 0 {
			t.Errorf("%s: findings %.200q, failures %.200q", expr, found, failed)
		}
	}
	for expr, want := range map[string]string{
		// 10^10 iterations writing nothing: hours inside text/template.
		`strings.render_template("{{range 100000}}{{range 100000}}{{end}}{{end}}", {})`: "was stopped after 500ms",
		// 14! paths.
		`count(graph.reachable_paths(` + complete.String() + `, ["0"]))`: "was stopped",
		// 16 million addresses.
		`count(net.cidr_expand("10.0.0.0/8"))`: "was stopped",
	} {
		found, failed, took := limitedEval(t, expr, "500ms", "64Mi")
		if len(found) != 0 || len(failed) != 1 || !strings.Contains(failed[0], want) || !strings.Contains(failed[0], "policy acme.probe") {
			t.Errorf("%.80s:\nfindings %.200q\nfailures %.300q, want %q", expr, found, failed, want)
		}
		if took > 10*time.Second {
			t.Errorf("%.80s: the lint took %s after a 500ms timeout", expr, took)
		}
	}
}

// TestDenseGraphReachableIsLinear: OPA's graph.reachable queues a vertex
// again for every edge reaching it before its visit; rolloutlint's visits
// each once.
func TestDenseGraphReachableIsLinear(t *testing.T) {
	n := 400
	g := ast.NewObject()
	for i := range n {
		edges := make([]*ast.Term, 0, n)
		for j := range n {
			edges = append(edges, ast.IntNumberTerm(j))
		}
		g.Insert(ast.IntNumberTerm(i), ast.ArrayTerm(edges...))
	}
	args := []*ast.Term{ast.NewTerm(g), ast.ArrayTerm(ast.IntNumberTerm(0))}
	start := time.Now()
	var got *ast.Term
	if err := reachable(topdown.BuiltinContext{}, args, func(t *ast.Term) error { got = t; return nil }); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("graph.reachable over %d vertices and %d edges took %s", n, n*n, took)
	}
	if s, ok := got.Value.(ast.Set); !ok || s.Len() != n {
		t.Errorf("reached %v, want all %d vertices", got, n)
	}
}

// TestOwnImplementationsMatchOPA compares rolloutlint's graph and template
// built-ins with OPA's on random graphs and sample templates.
func TestOwnImplementationsMatchOPA(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := range 400 {
		n := 1 + rng.Intn(7)
		g := ast.NewObject()
		for i := range n {
			if rng.Intn(8) == 0 {
				continue // a vertex named in edges but not in the graph
			}
			var edges []*ast.Term
			for range rng.Intn(4) {
				edges = append(edges, ast.StringTerm(fmt.Sprint(rng.Intn(n+1))))
			}
			var val *ast.Term
			switch rng.Intn(4) {
			case 0:
				val = ast.SetTerm(edges...)
			case 1:
				val = ast.NullTerm() // no edges of a known kind
			default:
				val = ast.ArrayTerm(edges...)
			}
			g.Insert(ast.StringTerm(fmt.Sprint(i)), val)
		}
		var start []*ast.Term
		for range 1 + rng.Intn(3) {
			start = append(start, ast.StringTerm(fmt.Sprint(rng.Intn(n+1))))
		}
		for _, form := range []*ast.Term{ast.ArrayTerm(start...), ast.SetTerm(start...)} {
			args := []*ast.Term{ast.NewTerm(g), form}
			for name, own := range map[string]topdown.BuiltinFunc{ast.ReachableBuiltin.Name: reachable, ast.ReachablePathsBuiltin.Name: reachablePaths} {
				want, wantErr := call(replaced[name], args)
				got, gotErr := call(own, args)
				if got != want || (wantErr == nil) != (gotErr == nil) {
					t.Fatalf("trial %d: %s(%v, %v):\n ours %s (%v)\n OPA  %s (%v)", trial, name, g, form, got, gotErr, want, wantErr)
				}
			}
		}
	}
	vars := ast.MustParseTerm(`{"xs": ["a", "b"], "m": {"k": 1}, "n": 3, "s": "x"}`)
	for _, tmpl := range []string{
		"plain", "{{.s}}", "{{.missing}}", "{{range .xs}}[{{.}}]{{else}}none{{end}}", "{{with .m}}{{.k}}{{end}}",
		"{{if .n}}yes{{else if .s}}s{{else}}no{{end}}", `{{define "t"}}<{{.}}>{{end}}{{template "t" .s}}`,
		"{{range $i := 3}}{{$i}}{{end}}", "{{printf \"%05d\" .n}}", "{{.xs.nope}}", "{{range}}", "{{index .xs 5}}",
	} {
		args := []*ast.Term{ast.StringTerm(tmpl), vars}
		want, wantErr := call(replaced[ast.RenderTemplate.Name], args)
		got, gotErr := call(renderTemplate, args)
		if got != want || (wantErr == nil) != (gotErr == nil) {
			t.Errorf("strings.render_template(%q): ours %s (%v), OPA %s (%v)", tmpl, got, gotErr, want, wantErr)
		}
	}
}

func call(f topdown.BuiltinFunc, args []*ast.Term) (string, error) {
	var out string
	err := f(topdown.BuiltinContext{Cancel: topdown.NewCancel()}, args, func(t *ast.Term) error { out = t.String(); return nil })
	return out, err
}

// determinismProbes call built-ins that could read the machine (its zone,
// locale, environment, files, clock or randomness) with operands that
// would show it. TestBuiltinsDoNotReadTheMachine runs them here and in a
// child process with another zone, locale and environment and a later
// clock, and requires the same answers.
var determinismProbes = []string{
	`time.format([1700000000000000000, "America/New_York", "Mon Jan 2 15:04:05 MST 2006"])`,
	`time.date([1700000000000000000, "Asia/Kathmandu"])`,
	`time.clock([1700000000000000000, "Australia/Lord_Howe"])`,
	`time.weekday([1700000000000000000, "Pacific/Kiritimati"])`,
	`time.add_date(1700000000000000000, 0, 1, 0)`,
	`time.diff([0, "Europe/Berlin"], [1700000000000000000, "Asia/Tokyo"])`,
	`time.parse_ns("Mon Jan _2 15:04:05 MST 2006", "Tue Nov 14 22:13:20 EST 2023")`,
	`time.parse_ns("2006-01-02 15:04", "2023-11-14 22:13")`,
	`time.parse_rfc3339_ns("2023-11-14T22:13:20+05:45")`,
	`time.parse_duration_ns("1h2m3.5s")`,
	`io.jwt.decode("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjIwMDAwMDAwMDAsInN1YiI6IngifQ.ru9qr3ZgEskSNPg7ZEZC8pnGA3P5TeSl1DT_XF--YsY")`,
	`crypto.x509.parse_and_verify_certificates_with_options("x", {"CurrentTime": 1})`,
	`net.cidr_merge(["10.0.0.0/9", "10.128.0.0/9", "::1/128"])`,
	`net.cidr_contains("fd00::/8", "fd00::1")`,
	`semver.compare("1.2.3-rc.1", "1.2.3")`,
	`units.parse("1.5Mi")`,
	`units.parse_bytes("3GB")`,
	`upper("i")`,
	`lower("İ")`,
	`sprintf("%v %.3f %x %10s|", [{"b": 1, "a": [2]}, 2.5, 255, "ü"])`,
	`format_int(1e3, 16)`,
	`strings.render_template("{{.a}} {{printf \"%.2f\" .b}}", {"a": "x", "b": 1.005})`,
	`yaml.unmarshal("a: 2023-11-14\nb: 0x10\nc: yes\n")`,
	`json.unmarshal("{\"a\": 1e3}")`,
	`uuid.parse("6ba7b810-9dad-11d1-80b4-00c04fd430c8")`,
	`rego.parse_module("p.rego", "package p\n\nx := 1\n")`,
	`rego.metadata.rule()`,
	`regex.find_n("\\d+", "a12b345", -1)`,
	`glob.match("*.example.com", ["."], "a.example.com")`,
	`graph.reachable_paths({"a": ["b", "c"], "b": ["c"], "c": []}, ["a"])`,
	`providers.aws.sign_req({"method": "get", "url": "https://example.com/x", "headers": {}}, {"aws_access_key": "AK", "aws_secret_access_key": "SK", "aws_service": "s3", "aws_region": "us-east-1"}, 1700000000000000000)`,
	`json.match_schema({"n": 1}, {"type": "object", "properties": {"n": {"type": "string"}}})`,
}

func TestBuiltinsDoNotReadTheMachine(t *testing.T) {
	got := make([]string, len(determinismProbes))
	for i, expr := range determinismProbes {
		found, failed := evalPolicy(t, expr)
		got[i] = fmt.Sprintf("%s => %q %q", expr, found, failed)
		if len(found) != 1 && !strings.HasPrefix(expr, "crypto.x509") {
			t.Errorf("%s: findings %q, failures %q: the probe must give an answer", expr, found, failed)
		}
	}
	out := strings.Join(got, "\n")
	if path := os.Getenv("ROLLOUTLINT_TEST_PROBE_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := time.LoadLocation("Asia/Kathmandu"); err != nil {
		t.Skip("no time zone data:", err)
	}
	time.Sleep(1100 * time.Millisecond) // a later clock, to the second
	path := t.TempDir() + "/probes.txt"
	cmd := exec.Command(os.Args[0], "-test.run=^TestBuiltinsDoNotReadTheMachine$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TZ=Asia/Kathmandu", "LANG=tr_TR.UTF-8", "LC_ALL=tr_TR.UTF-8", "HOME="+t.TempDir(),
		"SSL_CERT_FILE=/nonexistent", "HTTP_PROXY=http://127.0.0.1:1", "ROLLOUTLINT_TEST_PROBE_OUT="+path)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	child, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(child) != out {
		a, b := strings.Split(out, "\n"), strings.Split(string(child), "\n")
		for i := range a {
			if i < len(b) && a[i] != b[i] {
				t.Errorf("differs with another zone, locale, environment and clock:\n here  %s\n there %s", a[i], b[i])
			}
		}
	}
}
