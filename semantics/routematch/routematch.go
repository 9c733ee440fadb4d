// Package routematch finds the routes of a VirtualService that never take
// traffic and the matches that never take effect, because an earlier route
// takes every request they could. Routes are tried in order and the first
// whose match list accepts a request wins, so:
//
//   - a route after one with no match (a catch-all) is never used, and so is
//     a second route without matches;
//   - a match every request of which an earlier match already accepts (of an
//     earlier route, or an earlier alternative of the same route) is never
//     used; a route all of whose matches earlier routes take is never used.
//
// This is what istioctl's schema validation reports as IST0130
// (VirtualServiceUnreachableRule) and IST0131 (VirtualServiceIneffectiveMatch)
// (pkg/config/validation/validation.go analyzeUnreachableHTTPRules): identical
// matches, and a URI prefix covering a later one with otherwise equal
// conditions. Here "covers" is decided condition by condition (an earlier
// match with fewer or looser conditions covers a later, narrower one), which
// finds those cases and the narrower-by-header or -by-method ones istioctl
// leaves out. Regular expressions cover only an identical expression.
//
// The same analysis runs on the route lists Argo Rollouts writes, with its
// header and mirror routes put first.
package routematch

import (
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	networkingv1 "istio.io/api/networking/v1"
)

// Route is one route of an ordered route list.
type Route struct {
	// Matches are the route's HTTP matches; an empty list matches every
	// request.
	Matches []*networkingv1.HTTPMatchRequest
	// L4 is set for tls and tcp routes, compared by equality only (as
	// istioctl does); Matches is then unused.
	L4 []proto.Message
	// ID identifies the route for the caller (its index, a name).
	ID int
}

func (r Route) matchCount() int {
	if r.L4 != nil {
		return len(r.L4)
	}
	return len(r.Matches)
}

func (r Route) catchAll() bool { return r.matchCount() == 0 }

// Reason says why a route is never used.
type Reason string

// Reasons, in istioctl's words.
const (
	SecondCatchAll  Reason = "only the last rule can have no matches"
	AfterCatchAll   Reason = "route without matches defined before"
	AllMatchesCover Reason = "all matches used by prior rules"
)

// Unreachable is a route that never takes traffic.
type Unreachable struct {
	Route  int // index in the list
	Reason Reason
	// By is the index of the route that takes its traffic: the catch-all, or
	// for AllMatchesCover the route covering its first match.
	By int
}

// Ineffective is one match that never takes effect.
type Ineffective struct {
	Route, Match int
	// By and ByMatch locate the earlier match that takes its requests.
	By, ByMatch int
	// Duplicate is set when the two matches are identical (names aside).
	Duplicate bool
}

// Result is the analysis of one route list.
type Result struct {
	Unreachable []Unreachable
	Ineffective []Ineffective
}

// Analyze checks an ordered route list.
func Analyze(routes []Route) Result {
	var res Result
	catchAll := -1
	type seen struct {
		route, match int
		takenBy      int // the earlier route that takes its requests, or -1
	}
	var earlier []seen
	for i, r := range routes {
		if r.catchAll() {
			if catchAll >= 0 {
				res.Unreachable = append(res.Unreachable, Unreachable{Route: i, Reason: SecondCatchAll, By: catchAll})
			} else {
				catchAll = i
			}
			continue
		}
		if catchAll >= 0 {
			res.Unreachable = append(res.Unreachable, Unreachable{Route: i, Reason: AfterCatchAll, By: catchAll})
			continue
		}
		covered, firstBy := 0, -1
		for j := 0; j < r.matchCount(); j++ {
			// takenBy: an earlier route whose match takes this match's requests,
			// so they never reach this route through it. A match of the same
			// route that covers it makes it redundant (istioctl reports that
			// too), but counts for the route's reachability only when that
			// match is itself taken by an earlier route.
			takenBy := -1
			for _, e := range earlier {
				dup, cov := compare(routes[e.route], e.match, r, j)
				if !cov {
					continue
				}
				res.Ineffective = append(res.Ineffective, Ineffective{Route: i, Match: j, By: e.route, ByMatch: e.match, Duplicate: dup})
				takenBy = e.route
				if e.route == i {
					takenBy = e.takenBy
				}
				break
			}
			if takenBy >= 0 {
				covered++
				if firstBy < 0 {
					firstBy = takenBy
				}
			}
			earlier = append(earlier, seen{i, j, takenBy})
		}
		if covered == r.matchCount() {
			res.Unreachable = append(res.Unreachable, Unreachable{Route: i, Reason: AllMatchesCover, By: firstBy})
		}
	}
	return res
}

// compare reports whether match bj of b is identical to match aj of a
// (names aside) and whether aj accepts every request bj accepts.
func compare(a Route, aj int, b Route, bj int) (dup, covers bool) {
	if a.L4 != nil || b.L4 != nil {
		if a.L4 == nil || b.L4 == nil {
			return false, false
		}
		eq := proto.Equal(a.L4[aj], b.L4[bj])
		return eq, eq
	}
	am, bm := a.Matches[aj], b.Matches[bj]
	if Equal(am, bm) {
		return true, true
	}
	return false, Covers(am, bm)
}

// Equal reports whether two HTTP matches are the same conditions (their
// names aside).
func Equal(a, b *networkingv1.HTTPMatchRequest) bool {
	ac, bc := proto.Clone(a).(*networkingv1.HTTPMatchRequest), proto.Clone(b).(*networkingv1.HTTPMatchRequest)
	ac.Name, bc.Name = "", ""
	ac.StatPrefix, bc.StatPrefix = "", ""
	return proto.Equal(ac, bc)
}

// Covers reports whether every request match b accepts is accepted by
// match a: each condition a sets, b sets too, at least as strictly.
func Covers(a, b *networkingv1.HTTPMatchRequest) bool {
	au := a.GetUri()
	if au.GetPrefix() == "/" {
		au = nil // every path starts with "/"
	}
	if au != nil && a.GetIgnoreUriCase() != b.GetIgnoreUriCase() {
		return false
	}
	if !coversString(au, b.GetUri()) || !coversString(a.GetScheme(), b.GetScheme()) ||
		!coversString(a.GetMethod(), b.GetMethod()) || !coversString(a.GetAuthority(), b.GetAuthority()) {
		return false
	}
	if a.GetPort() != 0 && a.GetPort() != b.GetPort() {
		return false
	}
	if !coversMap(a.GetHeaders(), b.GetHeaders()) || !coversMap(a.GetQueryParams(), b.GetQueryParams()) {
		return false
	}
	// A header a requires to be absent must be required absent by b too,
	// with the same condition.
	for k, av := range a.GetWithoutHeaders() {
		bv, ok := b.GetWithoutHeaders()[k]
		if !ok || !proto.Equal(av, bv) {
			return false
		}
	}
	for k, v := range a.GetSourceLabels() {
		if b.GetSourceLabels()[k] != v {
			return false
		}
	}
	if ns := a.GetSourceNamespace(); ns != "" && ns != b.GetSourceNamespace() {
		return false
	}
	if len(a.GetGateways()) > 0 {
		if len(b.GetGateways()) == 0 {
			return false
		}
		for _, g := range b.GetGateways() {
			if !slices.Contains(a.GetGateways(), g) {
				return false
			}
		}
	}
	return true
}

func coversMap(a, b map[string]*networkingv1.StringMatch) bool {
	for _, k := range slices.Sorted(maps.Keys(a)) {
		bv, ok := b[k]
		if !ok || !coversString(a[k], bv) {
			return false
		}
	}
	return true
}

// coversString reports whether string condition a accepts every value b
// accepts. A nil a accepts anything; an empty StringMatch (presence) accepts
// any value of a present field.
func coversString(a, b *networkingv1.StringMatch) bool {
	if a == nil {
		return true
	}
	if b == nil {
		return false // a constrains the field, b accepts any value or none
	}
	switch am := a.GetMatchType().(type) {
	case nil:
		return true // presence: b constrains the field, so it is present
	case *networkingv1.StringMatch_Exact:
		bm, ok := b.GetMatchType().(*networkingv1.StringMatch_Exact)
		return ok && bm.Exact == am.Exact
	case *networkingv1.StringMatch_Prefix:
		switch bm := b.GetMatchType().(type) {
		case *networkingv1.StringMatch_Exact:
			return strings.HasPrefix(bm.Exact, am.Prefix)
		case *networkingv1.StringMatch_Prefix:
			return strings.HasPrefix(bm.Prefix, am.Prefix)
		}
		return am.Prefix == "" && b.GetMatchType() != nil
	case *networkingv1.StringMatch_Regex:
		bm, ok := b.GetMatchType().(*networkingv1.StringMatch_Regex)
		return ok && bm.Regex == am.Regex
	}
	return false
}
