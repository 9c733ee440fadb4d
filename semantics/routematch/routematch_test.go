package routematch_test

import (
	"slices"
	"testing"

	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/semantics/routematch"
)

func prefix(p string) *networkingv1.StringMatch {
	return &networkingv1.StringMatch{MatchType: &networkingv1.StringMatch_Prefix{Prefix: p}}
}

func exact(p string) *networkingv1.StringMatch {
	return &networkingv1.StringMatch{MatchType: &networkingv1.StringMatch_Exact{Exact: p}}
}

func regex(p string) *networkingv1.StringMatch {
	return &networkingv1.StringMatch{MatchType: &networkingv1.StringMatch_Regex{Regex: p}}
}

func TestCovers(t *testing.T) {
	type m = networkingv1.HTTPMatchRequest
	cases := []struct {
		name string
		a, b *m
		want bool
	}{
		{"no conditions covers all", &m{}, &m{Uri: exact("/a")}, true},
		{"prefix slash is every path", &m{Uri: prefix("/")}, &m{}, true},
		{"prefix covers longer prefix", &m{Uri: prefix("/api")}, &m{Uri: prefix("/api/v2")}, true},
		{"prefix covers exact", &m{Uri: prefix("/api")}, &m{Uri: exact("/api/x")}, true},
		{"longer prefix does not cover shorter", &m{Uri: prefix("/api/v2")}, &m{Uri: prefix("/api")}, false},
		{"extra header narrows the later match", &m{Uri: prefix("/")}, &m{Headers: map[string]*networkingv1.StringMatch{"x-canary": exact("1")}}, true},
		{"a header the later match lacks", &m{Headers: map[string]*networkingv1.StringMatch{"x-canary": exact("1")}}, &m{Uri: prefix("/")}, false},
		{"presence covers a value", &m{Headers: map[string]*networkingv1.StringMatch{"x": {}}}, &m{Headers: map[string]*networkingv1.StringMatch{"x": exact("1")}}, true},
		{"regex covers only itself", &m{Uri: regex("/a.*")}, &m{Uri: exact("/ab")}, false},
		{"same regex", &m{Uri: regex("/a.*")}, &m{Uri: regex("/a.*")}, true},
		{"port", &m{Port: 80}, &m{Port: 8080}, false},
		{"method", &m{Method: exact("GET")}, &m{Method: exact("GET"), Uri: prefix("/x")}, true},
		{"gateways subset", &m{Gateways: []string{"a", "b"}}, &m{Gateways: []string{"a"}}, true},
		{"gateways not given later", &m{Gateways: []string{"a"}}, &m{}, false},
		{"ignoreUriCase differs", &m{Uri: prefix("/a"), IgnoreUriCase: true}, &m{Uri: prefix("/a")}, false},
		{"withoutHeaders must repeat", &m{WithoutHeaders: map[string]*networkingv1.StringMatch{"x": exact("1")}}, &m{}, false},
	}
	for _, c := range cases {
		if got := routematch.Covers(c.a, c.b); got != c.want {
			t.Errorf("%s: Covers = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAnalyze(t *testing.T) {
	type m = networkingv1.HTTPMatchRequest
	routes := []routematch.Route{
		{Matches: []*m{{Uri: prefix("/api")}}},
		{Matches: []*m{{Name: "dup", Uri: prefix("/api")}, {Uri: prefix("/web")}}}, // match 0 ineffective
		{Matches: []*m{{Uri: prefix("/api/v2")}}},                                  // unreachable: covered
		{},                                      // catch-all
		{Matches: []*m{{Uri: prefix("/late")}}}, // after the catch-all
		{},                                      // second catch-all
	}
	res := routematch.Analyze(routes)
	wantU := []routematch.Unreachable{
		{Route: 2, Reason: routematch.AllMatchesCover, By: 0},
		{Route: 4, Reason: routematch.AfterCatchAll, By: 3},
		{Route: 5, Reason: routematch.SecondCatchAll, By: 3},
	}
	if len(res.Unreachable) != len(wantU) {
		t.Fatalf("unreachable = %+v", res.Unreachable)
	}
	for i, u := range wantU {
		if res.Unreachable[i] != u {
			t.Errorf("unreachable[%d] = %+v, want %+v", i, res.Unreachable[i], u)
		}
	}
	wantI := []routematch.Ineffective{
		{Route: 1, Match: 0, By: 0, ByMatch: 0, Duplicate: true},
		{Route: 2, Match: 0, By: 0, ByMatch: 0},
	}
	if len(res.Ineffective) != len(wantI) {
		t.Fatalf("ineffective = %+v", res.Ineffective)
	}
	for i, w := range wantI {
		if res.Ineffective[i] != w {
			t.Errorf("ineffective[%d] = %+v, want %+v", i, res.Ineffective[i], w)
		}
	}
	// Within one route, a repeated match and one an earlier alternative
	// covers are dead (istioctl IST0131), a broader later one is not; the
	// route stays reachable through its first match.
	same := routematch.Analyze([]routematch.Route{{Matches: []*m{{Uri: prefix("/a")}, {Uri: prefix("/a")}, {Uri: prefix("/a/b")}, {Uri: prefix("/")}}}})
	wantSame := []routematch.Ineffective{
		{Route: 0, Match: 1, By: 0, ByMatch: 0, Duplicate: true},
		{Route: 0, Match: 2, By: 0, ByMatch: 0},
	}
	if !slices.Equal(same.Ineffective, wantSame) || len(same.Unreachable) != 0 {
		t.Errorf("one route: %+v", same)
	}
	// A match its own route's earlier alternative covers is taken by the
	// earlier route that takes that alternative: the route is unused, and
	// the earlier route is named.
	taken := routematch.Analyze([]routematch.Route{
		{Matches: []*m{{Uri: prefix("/a")}}},
		{Matches: []*m{{Uri: prefix("/a/b")}, {Uri: prefix("/a/b/c")}}},
		{Matches: []*m{{Uri: prefix("/x")}, {Uri: prefix("/x/y")}}},
	})
	wantTaken := []routematch.Unreachable{{Route: 1, Reason: routematch.AllMatchesCover, By: 0}}
	if !slices.Equal(taken.Unreachable, wantTaken) || len(taken.Ineffective) != 3 {
		t.Errorf("covered alternatives: %+v", taken)
	}
}
