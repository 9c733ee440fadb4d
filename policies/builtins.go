package policies

import (
	"sort"
	"strings"
)

// BuiltinKind is how the sandbox treats a built-in.
type BuiltinKind string

// The kinds of built-in of the sandbox.
const (
	// Pure built-ins read only their operands and give the same result for
	// the same operands; their cost is bounded by their operands' size, or
	// they stop when the evaluation is cancelled.
	Pure BuiltinKind = "pure"
	// LeftOut built-ins are not in the capabilities: a policy calling one
	// does not compile.
	LeftOut BuiltinKind = "left out"
	// Guarded built-ins refuse some operands (the evaluation stops with
	// RL0009 naming the call and the reason), or are rolloutlint's own
	// implementations of OPA's definition that bound the work.
	Guarded BuiltinKind = "guarded"
)

// BuiltinClass is one built-in's place in the sandbox.
type BuiltinClass struct {
	Name string
	Kind BuiltinKind
	// Why is, for a left-out built-in, why; for a guarded one, what it
	// refuses; for a pure one, what was checked, when it is not obvious.
	Why string
}

// Reasons shared by several built-ins.
const (
	whyNetwork   = "network access"
	whyRandom    = "randomness (findings must be deterministic)"
	whyLocalZone = `refuses the time zone "Local", the zone of the machine that runs the lint`
	whyLinear    = ""
	whyCancel    = "stops when the evaluation is cancelled (timeout, memory bound)"
	whyNumbers   = "refuses a result above 2^100000, the largest number OPA parses (computing and printing a bigger one is not interrupted)"
	whySize      = "refuses a call whose result would be larger than the policy's memory bound (the call itself is not interrupted)"
	whyTest      = "used by `policy test` only (print is compiled out of lint-time policies)"
	whyGraphQL   = "parses its operands only; gqlparser limits nesting to 1,000 levels"
)

// sandboxBuiltins classifies every built-in of the OPA version in go.mod, and
// rolloutlint's own. TestEveryBuiltinIsClassified fails when an OPA
// upgrade brings one that is not here, so that no built-in enters the
// sandbox unreviewed; docs/policies.md shows the table (`make docs`).
var sandboxBuiltins = classify(
	pure(whyLinear,
		// operators, comparison, types
		"and", "or", "assign", "eq", "equal", "neq", "gt", "gte", "lt", "lte",
		"internal.member_2", "internal.member_3", "internal.template_string",
		"is_array", "is_boolean", "is_null", "is_number", "is_object", "is_set", "is_string", "type_name",
		"cast_array", "cast_boolean", "cast_null", "cast_object", "cast_set", "cast_string",
		// aggregates and numbers that do not grow their operands
		"all", "any", "count", "max", "min", "sort", "sum", "abs", "ceil", "floor", "round", "div", "rem",
		"plus", "minus", "format_int", "to_number", "bits.and", "bits.negate", "bits.or", "bits.rsh", "bits.xor",
		// collections
		"array.concat", "array.flatten", "array.reverse", "array.slice",
		"intersection", "union", "set_diff",
		"object.filter", "object.get", "object.keys", "object.remove", "object.subset", "object.union", "object.union_n",
		"json.filter", "json.remove", "json.patch",
		// strings
		"contains", "endswith", "startswith", "indexof", "indexof_n", "lower", "upper", "split", "substring",
		"trim", "trim_left", "trim_prefix", "trim_right", "trim_space", "trim_suffix",
		"strings.any_prefix_match", "strings.any_suffix_match", "strings.count", "strings.reverse", "strings.split_n",
		// encodings
		"base64.decode", "base64.encode", "base64.is_valid", "base64url.decode", "base64url.encode", "base64url.encode_no_pad",
		"hex.decode", "hex.encode", "urlquery.decode", "urlquery.decode_object", "urlquery.encode", "urlquery.encode_object",
		"uri.is_valid", "uri.parse", "json.is_valid", "json.marshal", "json.unmarshal", "yaml.is_valid", "yaml.marshal",
		// hashes and parsing of keys and certificates given as operands
		"crypto.hmac.equal", "crypto.hmac.md5", "crypto.hmac.sha1", "crypto.hmac.sha256", "crypto.hmac.sha512",
		"crypto.md5", "crypto.sha1", "crypto.sha256",
		"crypto.x509.parse_certificate_request", "crypto.x509.parse_certificates", "crypto.x509.parse_keypair",
		"crypto.x509.parse_rsa_private_key", "crypto.parse_private_keys",
		// tokens: decoding and signature checks do not look at exp or nbf
		"io.jwt.decode", "io.jwt.verify_eddsa", "io.jwt.verify_es256", "io.jwt.verify_es384", "io.jwt.verify_es512",
		"io.jwt.verify_hs256", "io.jwt.verify_hs384", "io.jwt.verify_hs512", "io.jwt.verify_ps256", "io.jwt.verify_ps384",
		"io.jwt.verify_ps512", "io.jwt.verify_rs256", "io.jwt.verify_rs384", "io.jwt.verify_rs512",
		// networks as text: parsing and arithmetic on CIDRs, no lookups
		"net.cidr_contains", "net.cidr_contains_matches", "net.cidr_intersects", "net.cidr_is_valid", "net.cidr_merge", "net.cidr_overlap",
		// patterns (compiled patterns are cached process-wide, which changes no result)
		"glob.match", "glob.quote_meta", "re_match", "regex.match", "regex.is_valid", "regex.find_n",
		"regex.find_all_string_submatch_n", "regex.split", "regex.template_match", "regex.globs_match",
		// versions, durations, time stamps without a zone, identifiers
		"semver.compare", "semver.is_valid", "time.parse_duration_ns", "time.parse_rfc3339_ns", "uuid.parse",
		// the policy's own source
		"rego.metadata.chain", "rego.metadata.rule",
	),
	pure("the signing time is an operand, and SigV4 is an HMAC: no clock, no randomness", "providers.aws.sign_req"),
	pure("OPA's parser limits nesting; the result depends on the text only", "rego.parse_module"),
	pure("go.yaml.in and sigs.k8s.io/yaml refuse alias expansion beyond their budget", "yaml.unmarshal"),
	pure(whyGraphQL, "graphql.parse_query", "graphql.parse_schema", "graphql.schema_is_valid"),
	pure(whyCancel, "numbers.range", "numbers.range_step", "net.cidr_expand", "walk"),
	pure(whyTest, "print", "internal.print", "internal.test_case"),
	pure("output only with a tracer, which a lint never sets", "trace"),
	pure("rolloutlint's own: input.resources[index], from the bundle's conversion", "rolloutlint.resource"),

	leftOut(whyNetwork, "http.send", "net.lookup_ip_addr"),
	leftOut("the environment and configuration of the process", "opa.runtime"),
	leftOut("the current time (findings must be deterministic)", "time.now_ns"),
	leftOut(whyRandom, "rand.intn", "uuid.rfc4122"),
	// ES* and PS* signatures are randomised (Go's crypto ignores a given
	// random source), and a lint has nothing to sign.
	leftOut("randomness (ES* and PS* signatures differ on every call)", "io.jwt.encode_sign", "io.jwt.encode_sign_raw"),
	// Verifies the chain at the current time; the _with_options variant
	// with CurrentTime stays.
	leftOut("the current time (use crypto.x509.parse_and_verify_certificates_with_options with CurrentTime)", "crypto.x509.parse_and_verify_certificates"),

	guarded("refuses a schema with a `$ref` that does not start with `#` or a `file:` `$id`/`id` (OPA's schema library reads `file://` references from disk; remote ones are refused by `allow_net: []`)",
		"json.match_schema", "json.verify_schema"),
	guarded(`refuses constraints without "time": exp and nbf would be checked against the clock`, "io.jwt.decode_verify"),
	guarded("refuses options without CurrentTime: the chain would be verified at the current time (the roots are the first certificate given, never the system's)",
		"crypto.x509.parse_and_verify_certificates_with_options"),
	guarded(whyLocalZone, "time.format", "time.date", "time.clock", "time.weekday", "time.add_date", "time.diff"),
	guarded("reads a zone abbreviation (layout MST, UnixDate, RFC822, RFC850, RFC1123) as a machine in UTC would, not with the offset it has in the machine's own zone", "time.parse_ns"),
	guarded(whyNumbers, "mul", "product", "bits.lsh", "units.parse", "units.parse_bytes"),
	guarded(whySize, "concat", "replace", "strings.replace_n", "regex.replace", "sprintf", "json.marshal_with_options"),
	guarded("refuses a query with more than 2,000 names: validation compares every pair of fields (quadratic, not interrupted; 4,000 fields take 1.1 s)",
		"graphql.is_valid", "graphql.parse", "graphql.parse_and_verify"),
	guarded("rolloutlint's own text/template execution: stops when the evaluation is cancelled (a few bytes of nested ranges run for hours) and refuses output beyond the memory bound",
		"strings.render_template"),
	guarded("rolloutlint's own walk: every vertex visited once (OPA's is cubic on a dense graph) and stops when the evaluation is cancelled", "graph.reachable"),
	guarded("rolloutlint's own walk: stops when the evaluation is cancelled (there can be exponentially many paths)", "graph.reachable_paths"),
)

// classify indexes the classes by name; a name given twice is a mistake
// in the table, which TestEveryBuiltinIsClassified reports.
func classify(groups ...[]BuiltinClass) map[string]BuiltinClass {
	out := map[string]BuiltinClass{}
	for _, g := range groups {
		for _, c := range g {
			if _, dup := out[c.Name]; dup {
				duplicateClasses = append(duplicateClasses, c.Name)
			}
			out[c.Name] = c
		}
	}
	return out
}

// duplicateClasses lists the built-ins classified twice.
var duplicateClasses []string

func group(kind BuiltinKind, why string, names []string) []BuiltinClass {
	out := make([]BuiltinClass, len(names))
	for i, n := range names {
		out[i] = BuiltinClass{Name: n, Kind: kind, Why: why}
	}
	return out
}

func pure(why string, names ...string) []BuiltinClass    { return group(Pure, why, names) }
func leftOut(why string, names ...string) []BuiltinClass { return group(LeftOut, why, names) }
func guarded(why string, names ...string) []BuiltinClass { return group(Guarded, why, names) }

// forbiddenBuiltins are the left-out built-ins and why.
var forbiddenBuiltins = func() map[string]string {
	out := map[string]string{}
	for name, c := range sandboxBuiltins {
		if c.Kind == LeftOut {
			out[name] = c.Why
		}
	}
	return out
}()

// BuiltinClasses returns the classification of every built-in, by kind
// (pure, guarded, left out) and name.
func BuiltinClasses() []BuiltinClass {
	out := make([]BuiltinClass, 0, len(sandboxBuiltins))
	for _, c := range sandboxBuiltins {
		out = append(out, c)
	}
	rank := map[BuiltinKind]int{LeftOut: 0, Guarded: 1, Pure: 2}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return rank[out[i].Kind] < rank[out[j].Kind]
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// SandboxTable renders the classification as the Markdown table of
// docs/policies.md: one row per kind and reason, the built-ins listed.
func SandboxTable() string {
	type row struct {
		kind  BuiltinKind
		why   string
		names []string
	}
	var rows []*row
	index := map[[2]string]*row{}
	for _, c := range BuiltinClasses() {
		k := [2]string{string(c.Kind), c.Why}
		r := index[k]
		if r == nil {
			r = &row{kind: c.Kind, why: c.Why}
			index[k] = r
			rows = append(rows, r)
		}
		r.names = append(r.names, "`"+c.Name+"`")
	}
	var b strings.Builder
	b.WriteString("| kind | built-ins | why / refused when |\n|---|---|---|\n")
	for _, r := range rows {
		why := r.why
		if why == "" {
			why = "operands only; cost bounded by their size"
		}
		b.WriteString("| " + string(r.kind) + " | " + strings.Join(r.names, ", ") + " | " + strings.ReplaceAll(why, "|", `\|`) + " |\n")
	}
	return b.String()
}
