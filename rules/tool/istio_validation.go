package tool

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/rules"
)

// The checks below are the part of istiod's validating webhook
// (pkg/config/validation in istio 1.31) that the fields of a canary's
// VirtualService and DestinationRule run into and that decoding does not
// catch: values of the right type that istiod still refuses, so that the
// whole apply fails. Each names the istiod check it follows.

// maxRegexLen is the longest regular expression istiod accepts (it
// approximates Envoy's RE2 program size limit by the length).
const maxRegexLen = 1024

// headerNameRe is an HTTP header name (RFC 7230 token characters).
var headerNameRe = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~A-Za-z0-9]+$")

// subsetNameRe is a subset name as istiod checks it: a DNS-1123 label that
// may hold upper-case letters (Istio's labels.IsDNS1123Label), at most 63.
var subsetNameRe = regexp.MustCompile(`^[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?$`)

// pseudoHeaders may be matched although they are not tokens.
var pseudoHeaders = []string{":method", ":scheme", ":authority", ":path", ":status"}

// jwtClaimHeader is the prefix of a header name that routes on a JWT claim
// (@request.auth.claims.sub, @request.auth.claims[groups]).
const jwtClaimHeader = "@request.auth.claims"

// validateIstio reports what istiod's webhook rejects in the bundle's
// VirtualServices, DestinationRules and ServiceEntries.
func validateIstio(p *rules.Pass) {
	for _, r := range p.OfKind(kinds.VirtualService) {
		if o := r.VirtualService(); o != nil {
			validateVirtualService(p, r, &o.Spec)
		}
	}
	for _, r := range p.OfKind(kinds.DestinationRule) {
		if o := r.DestinationRule(); o != nil {
			validateDestinationRule(p, r, &o.Spec)
		}
	}
	for _, r := range p.OfKind(kinds.ServiceEntry) {
		se, _ := r.Typed.(*kinds.ServiceEntryObject)
		if se == nil {
			continue
		}
		for i, h := range se.Spec.GetHosts() {
			if h == "*" {
				// ValidateServiceEntry: a full wildcard host is not allowed.
				p.ReportDetail(r, graph.Index("spec.hosts", i), "ServiceEntry: host \"*\" is not allowed; istiod rejects the ServiceEntry",
					"Only a partial wildcard (*.example.com) may be a ServiceEntry host; list the external hosts.")
			}
		}
	}
}

func validateVirtualService(p *rules.Pass, r *graph.Resource, vs *networkingv1.VirtualService) {
	for i, h := range vs.GetHttp() {
		base := graph.Index("spec.http", i)
		for j, m := range h.GetMatch() {
			validateMatch(p, r, graph.Index(base+".match", j), m)
		}
		for k, d := range h.GetRoute() {
			at := graph.Index(base+".route", k)
			validateRouteDestination(p, r, at, d.GetDestination(), d.GetWeight())
		}
		if m := h.GetMirror(); m != nil {
			validateDestination(p, r, base+".mirror", m)
		}
		for k, m := range h.GetMirrors() {
			validateDestination(p, r, graph.Index(base+".mirrors", k)+".destination", m.GetDestination())
		}
	}
	for i, t := range vs.GetTcp() {
		for k, d := range t.GetRoute() {
			validateRouteDestination(p, r, graph.Index(graph.Index("spec.tcp", i)+".route", k), d.GetDestination(), d.GetWeight())
		}
	}
	for i, t := range vs.GetTls() {
		for k, d := range t.GetRoute() {
			validateRouteDestination(p, r, graph.Index(graph.Index("spec.tls", i)+".route", k), d.GetDestination(), d.GetWeight())
		}
	}
}

// validateMatch follows validateHTTPRouteMatchRequest (virtualservice.go).
func validateMatch(p *rules.Pass, r *graph.Resource, at string, m *networkingv1.HTTPMatchRequest) {
	if m == nil {
		return
	}
	validateStringMatch(p, r, at+".uri", m.GetUri(), true)
	validateStringMatch(p, r, at+".scheme", m.GetScheme(), false)
	validateStringMatch(p, r, at+".method", m.GetMethod(), false)
	validateStringMatch(p, r, at+".authority", m.GetAuthority(), false)
	for _, field := range []struct {
		name   string
		values map[string]*networkingv1.StringMatch
	}{{"headers", m.GetHeaders()}, {"withoutHeaders", m.GetWithoutHeaders()}} {
		for _, name := range sortedKeys(field.values) {
			v := field.values[name]
			path := graph.Key(at+"."+field.name, name)
			if problem := headerNameProblem(name); problem != "" {
				p.ReportDetail(r, path, fmt.Sprintf("VirtualService: %s header name %s; istiod rejects it", field.name, problem),
					"A header name is a token: letters, digits and !#$%&'*+-.^_`|~ (or a pseudo-header, or @request.auth.claims.<claim>).")
			}
			if field.name == "withoutHeaders" && v.GetRegex() == "*" {
				continue // "*" means present, not a regular expression
			}
			validateStringMatch(p, r, path, v, false)
		}
	}
	for _, name := range sortedKeys(m.GetQueryParams()) {
		validateStringMatch(p, r, graph.Key(at+".queryParams", name), m.GetQueryParams()[name], false)
	}
	if port := m.GetPort(); port > 65535 {
		p.ReportDetail(r, at+".port", fmt.Sprintf("VirtualService: match port %d is not in 1..65535; istiod rejects the VirtualService", port),
			"A match port is the port the request arrived on.")
	}
}

// validateStringMatch follows validateStringMatch and
// validateStringMatchRegexp (validation.go): a regex must be RE2 and at most
// 1024 characters; a prefix may be empty only for the URI.
func validateStringMatch(p *rules.Pass, r *graph.Resource, at string, m *networkingv1.StringMatch, uri bool) {
	switch t := m.GetMatchType().(type) {
	case *networkingv1.StringMatch_Prefix:
		if t.Prefix == "" && !uri {
			p.ReportDetail(r, at+".prefix", "VirtualService: empty prefix match; istiod rejects the VirtualService",
				"Envoy refuses an empty prefix for anything but the URI. Remove the condition, or match presence with {}.")
		}
	case *networkingv1.StringMatch_Regex:
		re := t.Regex
		switch {
		case re == "":
			p.ReportDetail(r, at+".regex", "VirtualService: empty regex match; istiod rejects the VirtualService",
				"Remove the condition, or match presence with {}.")
		case len(re) > maxRegexLen:
			p.ReportDetail(r, at+".regex", fmt.Sprintf("VirtualService: regex of %d characters is longer than istiod's limit of %d", len(re), maxRegexLen),
				"istiod rejects the VirtualService: Envoy limits the RE2 program size, which istiod bounds by the length.")
		default:
			if _, err := regexp.Compile(re); err != nil {
				what := err.Error()
				var se *syntax.Error
				if errors.As(err, &se) {
					what = string(se.Code)
				}
				detail := "Istio uses RE2 syntax (no lookaround, no backreferences); istiod rejects the VirtualService."
				if se != nil && se.Expr != "" && se.Expr != re {
					detail = fmt.Sprintf("At %q. %s", se.Expr, detail)
				}
				p.ReportDetail(r, at+".regex", fmt.Sprintf("VirtualService: regex %s is not valid RE2: %s", shortQuote(re), what), detail)
			}
		}
	}
}

// headerNameProblem follows ValidateHTTPHeaderNameOrJwtClaimRoute
// (validation.go): a token, a pseudo-header or a JWT claim route.
func headerNameProblem(name string) string {
	if name == "" {
		return "is empty"
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(name), jwtClaimHeader); ok {
		if strings.HasPrefix(rest, ".") && len(rest) > 1 || strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") && len(rest) > 2 {
			return ""
		}
	}
	if slices.Contains(pseudoHeaders, name) || headerNameRe.MatchString(name) {
		return ""
	}
	return fmt.Sprintf("%s is not a token", shortQuote(name))
}

// validateRouteDestination follows validateHTTPRouteDestinations and
// validateRouteDestinations (validation.go).
func validateRouteDestination(p *rules.Pass, r *graph.Resource, at string, d *networkingv1.Destination, weight int32) {
	if d == nil {
		p.ReportDetail(r, at, "VirtualService: route entry has no destination; istiod rejects the VirtualService",
			"Every entry of a route needs destination.host.")
	}
	if weight < 0 {
		p.ReportDetail(r, at+".weight", fmt.Sprintf("VirtualService: weight %d is negative; istiod rejects the VirtualService", weight),
			"Weights are relative shares, 0 or more.")
	}
	if d != nil {
		validateDestination(p, r, at+".destination", d)
	}
}

// validateDestination follows validateDestination (validation.go): the
// subset name and the port number.
func validateDestination(p *rules.Pass, r *graph.Resource, at string, d *networkingv1.Destination) {
	if d == nil {
		return
	}
	if s := d.GetSubset(); s != "" {
		if problem := subsetNameProblem(s); problem != "" {
			p.ReportDetail(r, at+".subset", fmt.Sprintf("VirtualService: subset %s; istiod rejects the VirtualService", problem),
				"A subset name is a DNS label: letters, digits and '-' inside, at most 63 characters.")
		}
	}
	if pt := d.GetPort(); pt != nil && (pt.GetNumber() == 0 && !wrongType(r, at+".port.number") || pt.GetNumber() > 65535) {
		p.ReportDetail(r, at+".port.number", fmt.Sprintf("VirtualService: destination port %d is not in 1..65535; istiod rejects the VirtualService", pt.GetNumber()),
			"Set the Service port number, or leave port out when the Service has one port.")
	}
}

// wrongType reports a field written with a value of the wrong type (a
// string where the schema wants a number): RL0003 reports it, and the typed
// object holds its zero value, which is not what was written.
func wrongType(r *graph.Resource, path string) bool {
	v, ok := r.ValueAt(path)
	if !ok {
		return false
	}
	switch v.(type) {
	case int, int64, uint64, float64:
		return false
	}
	return true
}

// validateDestinationRule follows ValidateDestinationRule (validation.go):
// subset names are DNS-1123 labels, unique within the rule.
func validateDestinationRule(p *rules.Pass, r *graph.Resource, dr *networkingv1.DestinationRule) {
	seen := map[string]int{}
	for i, s := range dr.GetSubsets() {
		if s == nil {
			continue
		}
		at := graph.Index("spec.subsets", i) + ".name"
		name := s.GetName()
		if problem := subsetNameProblem(name); problem != "" {
			p.ReportDetail(r, at, fmt.Sprintf("DestinationRule: subset %s; istiod rejects the DestinationRule", problem),
				"A subset name is a DNS label: letters, digits and '-' inside, at most 63 characters.")
			continue
		}
		if first, dup := seen[name]; dup {
			p.ReportDetail(r, at, fmt.Sprintf("DestinationRule: subset name %q repeats subsets[%d]; istiod rejects the DestinationRule", name, first),
				"Subset names are unique within a DestinationRule.",
				rules.RelatedAt(r, graph.Index("spec.subsets", first)+".name", fmt.Sprintf("subsets[%d] is %q", first, name)))
			continue
		}
		seen[name] = i
	}
}

// subsetNameProblem follows validateSubsetName (validation.go).
func subsetNameProblem(name string) string {
	if name == "" {
		return "name is empty"
	}
	if len(name) > 63 || !subsetNameRe.MatchString(name) {
		return fmt.Sprintf("name %s is not a DNS-1123 label", shortQuote(name))
	}
	return ""
}

// shortQuote quotes s, cut to 24 characters.
func shortQuote(s string) string {
	if r := []rune(s); len(r) > 24 {
		return fmt.Sprintf("%q…", string(r[:23]))
	}
	return fmt.Sprintf("%q", s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
