package policies

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// The sandbox has two layers. Built-ins that can only reach outside the
// bundle (the network, the runtime) or only produce something new on every
// call (the clock, randomness) are left out of the capabilities, so a policy
// calling one does not compile (forbiddenBuiltins). Built-ins that are
// deterministic for most arguments but read a file, the clock or the
// machine's time zone for some are wrapped: the wrapper refuses those
// arguments and halts the evaluation with a message, which the lint reports
// as RL0009 on the policy. A refusal halts rather than failing the call
// (OPA would make a failed call undefined), so a refused call never passes
// silently. docs/policies.md lists both layers.
//
// OPA looks built-ins up in its process-wide registry before the ones given
// to a query, so the wrappers replace the registered implementations once,
// at init: every evaluation in the process, the lint's and `policy test`'s,
// goes through them.
func init() {
	guard(ast.JSONMatchSchema.Name, operands(localSchemaOnly(1)))
	guard(ast.JSONSchemaVerify.Name, operands(localSchemaOnly(0)))
	guard(ast.JWTDecodeVerify.Name, operands(jwtTimeGiven))
	guard(ast.CryptoX509ParseAndVerifyCertificatesWithOptions.Name, operands(x509TimeGiven))
	for _, name := range []string{ast.Format.Name, ast.Date.Name, ast.Clock.Name, ast.Weekday.Name, ast.AddDate.Name, ast.Diff.Name} {
		guard(name, operands(noLocalZone))
	}
	parseNs := topdown.GetBuiltin(ast.ParseNanos.Name)
	replace(ast.ParseNanos.Name, func(bctx topdown.BuiltinContext, args []*ast.Term, iter func(*ast.Term) error) error {
		return parseNanosUTC(bctx, args, iter, parseNs)
	})
	// Work out of proportion to the operands (bounds.go).
	guard(ast.Multiply.Name, bitsGuard(mulBits))
	guard(ast.Product.Name, bitsGuard(productBits))
	guard(ast.BitsShiftLeft.Name, bitsGuard(lshBits))
	guard(ast.UnitsParse.Name, bitsGuard(unitsBits))
	guard(ast.UnitsParseBytes.Name, bitsGuard(unitsBits))
	guard(ast.Concat.Name, sizeGuard(concatSize))
	guard(ast.Replace.Name, sizeGuard(replaceSize))
	guard(ast.ReplaceN.Name, sizeGuard(replaceNSize))
	guard(ast.RegexReplace.Name, sizeGuard(regexReplaceSize))
	guard(ast.Sprintf.Name, sizeGuard(sprintfSize))
	guard(ast.JSONMarshalWithOptions.Name, sizeGuard(marshalIndentSize))
	for _, name := range []string{ast.GraphQLIsValid.Name, ast.GraphQLParse.Name, ast.GraphQLParseAndVerify.Name} {
		guard(name, operands(graphQLNames))
	}
	replace(ast.RenderTemplate.Name, renderTemplate)
	replace(ast.ReachableBuiltin.Name, reachable)
	replace(ast.ReachablePathsBuiltin.Name, reachablePaths)
}

// replaced is OPA's implementation of every built-in the sandbox replaced
// (TestGuardedBuiltinsAreInstalled compares the names with the table; the
// tests compare rolloutlint's implementations with OPA's).
var replaced = map[string]topdown.BuiltinFunc{}

// replace registers impl as the built-in's implementation.
func replace(name string, impl topdown.BuiltinFunc) {
	if _, twice := replaced[name]; twice || topdown.GetBuiltin(name) == nil {
		panic("policies: OPA has no built-in " + name + " to replace") // an OPA upgrade renamed it; TestGuardedBuiltinsAreInstalled fails first
	}
	replaced[name] = topdown.GetBuiltin(name)
	// OPA hands a built-in declared CanSkipBctx a context with only the
	// call's location: no cancellation and no evaluation context, which
	// the guards need (the memory bound) and the own implementations look
	// at (the cancellation).
	if decl := ast.BuiltinMap[name]; decl != nil {
		decl.CanSkipBctx = false
	}
	topdown.RegisterBuiltinFunc(name, impl)
}

// operands adapts a check that needs only the operands.
func operands(check func(args []*ast.Term) string) func(topdown.BuiltinContext, []*ast.Term) string {
	return func(_ topdown.BuiltinContext, args []*ast.Term) string { return check(args) }
}

// guard registers check in front of the built-in's implementation: check
// returns why the arguments are refused, or "".
func guard(name string, check func(bctx topdown.BuiltinContext, args []*ast.Term) string) {
	orig := topdown.GetBuiltin(name)
	if orig == nil {
		panic("policies: OPA has no built-in " + name + " to guard") // an OPA upgrade renamed it; TestGuardedBuiltinsAreInstalled fails first
	}
	replace(name, func(bctx topdown.BuiltinContext, args []*ast.Term, iter func(*ast.Term) error) error {
		if why := check(bctx, args); why != "" {
			return refuse(bctx, name, why)
		}
		return orig(bctx, args, iter)
	})
}

// refuse halts the evaluation with a sandbox message at the call's location.
func refuse(bctx topdown.BuiltinContext, name, why string) error {
	return topdown.Halt{Err: &topdown.Error{
		Code:     topdown.BuiltinErr,
		Message:  name + ": " + why + " (rolloutlint policies see only the bundle; see docs/policies.md#the-sandbox)",
		Location: bctx.Location,
	}}
}

// localSchemaOnly refuses a JSON schema (operand i) that could make the
// schema library read a file: every `$ref` must point into the schema itself
// (`#...`), and no `$id`/`id` may set a file: base. Remote references are
// already refused by the capabilities' empty allow_net, so a `$ref` outside
// the schema could never load anything but a local file.
func localSchemaOnly(i int) func(args []*ast.Term) string {
	return func(args []*ast.Term) string {
		if i >= len(args) {
			return ""
		}
		v := args[i].Value
		if s, ok := v.(ast.String); ok { // a schema given as JSON text
			parsed, err := ast.ParseTerm(string(s))
			if err != nil {
				return "" // not JSON: the built-in reports it
			}
			v = parsed.Value
		}
		return schemaRefs(v)
	}
}

// schemaRefs walks a schema value and returns why it is refused, or "".
func schemaRefs(v ast.Value) (why string) {
	var walk func(ast.Value)
	walk = func(v ast.Value) {
		if why != "" {
			return
		}
		switch x := v.(type) {
		case ast.Object:
			x.Foreach(func(k, val *ast.Term) {
				key, _ := k.Value.(ast.String)
				if s, ok := val.Value.(ast.String); ok {
					switch string(key) {
					case "$ref":
						if !strings.HasPrefix(string(s), "#") {
							why = fmt.Sprintf("the schema's $ref %q points outside the schema; only references into the schema itself (#/definitions/...) are allowed", truncate(string(s), 80))
						}
					case "$id", "id":
						if isFileURL(string(s)) {
							why = fmt.Sprintf("the schema's %s %q is a file URL", key, truncate(string(s), 80))
						}
					}
				}
				walk(val.Value)
			})
		case *ast.Array:
			x.Foreach(func(t *ast.Term) { walk(t.Value) })
		}
	}
	walk(v)
	return why
}

func isFileURL(s string) bool {
	if u, err := url.Parse(strings.TrimSpace(s)); err == nil && strings.EqualFold(u.Scheme, "file") {
		return true
	}
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "file:")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// jwtTimeGiven refuses io.jwt.decode_verify without a `time` constraint:
// OPA would check exp and nbf against the clock.
func jwtTimeGiven(args []*ast.Term) string {
	if len(args) < 2 {
		return ""
	}
	if c, ok := args[1].Value.(ast.Object); ok && c.Get(ast.InternedTerm("time")) == nil {
		return `the constraints set no "time", so exp and nbf would be checked against the clock; pass the time to check at, in nanoseconds since the epoch (for example {"time": time.parse_rfc3339_ns("2030-01-01T00:00:00Z")})`
	}
	return ""
}

// x509TimeGiven refuses crypto.x509.parse_and_verify_certificates_with_options
// without CurrentTime: the chain would be verified at the current time.
func x509TimeGiven(args []*ast.Term) string {
	if len(args) < 2 {
		return ""
	}
	if o, ok := args[1].Value.(ast.Object); ok && o.Get(ast.InternedTerm("CurrentTime")) == nil {
		return "the options set no CurrentTime, so the chain would be verified against the clock; pass CurrentTime in nanoseconds since the epoch"
	}
	return ""
}

// noLocalZone refuses the "Local" time zone of the time built-ins: it is the
// zone of whatever machine runs the lint.
func noLocalZone(args []*ast.Term) string {
	for _, a := range args {
		if arr, ok := a.Value.(*ast.Array); ok && arr.Len() > 1 {
			if tz, ok := arr.Elem(1).Value.(ast.String); ok && tz == "Local" {
				return `the time zone "Local" is the zone of the machine that runs the lint; name the zone ("UTC", "Europe/Berlin")`
			}
		}
	}
	return ""
}

// zoneLayouts are the named layouts of time.parse_ns whose text carries a
// zone abbreviation (MST), by the names OPA accepts.
var zoneLayouts = map[string]string{
	"UnixDate": time.UnixDate,
	"RFC822":   time.RFC822,
	"RFC850":   time.RFC850,
	"RFC1123":  time.RFC1123,
}

// parseNanosUTC is time.parse_ns read as on a machine whose zone is UTC. Go's
// time.Parse gives a zone abbreviation ("PST") the offset it has in the
// machine's own zone, so OPA's time.parse_ns of the same text differs from
// machine to machine; a layout without an abbreviation is parsed by OPA's
// own implementation, which does not depend on the zone.
func parseNanosUTC(bctx topdown.BuiltinContext, args []*ast.Term, iter func(*ast.Term) error, orig topdown.BuiltinFunc) error {
	layout, ok1 := args[0].Value.(ast.String)
	value, ok2 := args[1].Value.(ast.String)
	if !ok1 || !ok2 {
		return orig(bctx, args, iter)
	}
	l := string(layout)
	if named, ok := zoneLayouts[l]; ok {
		l = named
	}
	if !strings.Contains(l, "MST") {
		return orig(bctx, args, iter)
	}
	t, err := time.ParseInLocation(l, string(value), time.UTC)
	if err != nil {
		return &topdown.Error{Code: topdown.BuiltinErr, Message: ast.ParseNanos.Name + ": " + err.Error(), Location: bctx.Location}
	}
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return &topdown.Error{Code: topdown.BuiltinErr, Message: ast.ParseNanos.Name + ": time outside of valid range", Location: bctx.Location}
	}
	return iter(ast.NumberTerm(json.Number(strconv.FormatInt(t.UnixNano(), 10))))
}
