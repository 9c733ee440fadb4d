package promql

import (
	"errors"
	"strings"
	"testing"
)

const seed004 = `sum(rate(istio_requests_total{destination_service_name="{{args.canary-svc}}",response_code=~"5.."}[1m]))
/ sum(rate(istio_requests_total{destination_service_name="{{ args.canary-svc }}"}[{{args.window}}]))`

func lookup(m map[string]Value) func(string) (Value, bool) {
	return func(tag string) (Value, bool) {
		a, ok := strings.CutPrefix(tag, "args.")
		if !ok {
			return Value{}, false
		}
		v, ok := m[a]
		return v, ok
	}
}

func TestPlaceholders(t *testing.T) {
	ps := Placeholders(seed004)
	if len(ps) != 3 {
		t.Fatalf("got %d placeholders, want 3: %+v", len(ps), ps)
	}
	if !ps[0].InString || ps[0].Arg != "canary-svc" || !ps[1].InString || ps[1].Arg != "canary-svc" {
		t.Errorf("first two should be args.canary-svc inside strings: %+v", ps[:2])
	}
	if ps[2].InString || ps[2].Arg != "window" {
		t.Errorf("third should be args.window outside strings: %+v", ps[2])
	}
	if got := seed004[ps[0].Start:ps[0].End]; got != "{{args.canary-svc}}" {
		t.Errorf("offsets cover %q", got)
	}
}

func TestSubstituteValues(t *testing.T) {
	s := Substitute(seed004, lookup(map[string]Value{"canary-svc": {Text: "app-canary"}, "window": {Text: "2m"}}))
	if len(s.Unresolved) != 0 {
		t.Fatalf("unresolved: %+v", s.Unresolved)
	}
	if strings.Contains(s.Query, "{{") || !strings.Contains(s.Query, `destination_service_name="app-canary"`) || !strings.Contains(s.Query, "[2m]") {
		t.Fatalf("bad substitution: %s", s.Query)
	}
	expr, err := Parse(s.Query)
	if err != nil {
		t.Fatal(err)
	}
	ms := Matchers(expr, s.Query)
	if len(ms) != 3 {
		t.Fatalf("got %d matchers, want 3: %+v", len(ms), ms)
	}
	for _, m := range ms {
		if m.MatchesEmpty() {
			t.Errorf("unexpected empty matcher %+v", m)
		}
	}
	// The second matcher's value maps back to its placeholder in the original.
	orig := s.OriginalOffset(ms[0].ValueStart + 1)
	if !strings.HasPrefix(seed004[orig:], "{{args.canary-svc}}") {
		t.Errorf("value offset maps to %q", seed004[orig:orig+10])
	}
	// Text after a substitution maps back by its own length.
	if o := s.OriginalOffset(ms[1].Start); !strings.HasPrefix(seed004[o:], "response_code") {
		t.Errorf("matcher offset maps to %q", seed004[o:])
	}
}

func TestSubstituteEmptyAndUnknown(t *testing.T) {
	s := Substitute(seed004, lookup(map[string]Value{"canary-svc": {Text: ""}}))
	if len(s.Unresolved) != 1 || s.Unresolved[0].Arg != "window" {
		t.Fatalf("unresolved: %+v", s.Unresolved)
	}
	if !strings.Contains(s.Query, "[1m]") {
		t.Errorf("a duration stand-in should keep the range parseable: %s", s.Query)
	}
	expr, err := Parse(s.Query)
	if err != nil {
		t.Fatal(err)
	}
	var empty int
	for _, m := range Matchers(expr, s.Query) {
		if m.MatchesEmpty() {
			empty++
			if ph := s.PlaceholdersIn(m.ValueStart, m.ValueEnd); len(ph) != 1 || s.Placeholders[ph[0]].Arg != "canary-svc" {
				t.Errorf("empty matcher %+v should overlap args.canary-svc, got %v", m, ph)
			}
		}
	}
	if empty != 2 {
		t.Errorf("got %d empty matchers, want 2", empty)
	}
}

func TestRuntimeValueAndThreshold(t *testing.T) {
	q := `sum(x{hash="{{args.hash}}"} offset {{args.off}}) > {{args.threshold}}`
	s := Substitute(q, lookup(map[string]Value{"hash": {Runtime: true}}))
	if _, err := Parse(s.Query); err != nil {
		t.Fatalf("%s: %v", s.Query, err)
	}
	if !strings.Contains(s.Query, `hash="runtime-value"`) || !strings.Contains(s.Query, "offset 1m") || !strings.HasSuffix(s.Query, "> 1") {
		t.Errorf("stand-ins: %s", s.Query)
	}
}

func TestParseErrorOffset(t *testing.T) {
	q := "up{job=\"a\"\n"
	_, err := Parse(q)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("want *Error, got %v", err)
	}
	if pe.Offset < 9 || pe.Offset > len(q) || !strings.Contains(pe.Msg, "unexpected") {
		t.Errorf("error %+v", pe)
	}
}

func TestCommentsAndQuotes(t *testing.T) {
	q := "# {{args.ignored}} in a comment\nup{a='{{args.x}}', b=`{{args.y}}`}"
	ps := Placeholders(q)
	// A tag inside a PromQL comment does not reach the parser, so it is skipped.
	if len(ps) != 2 || ps[0].Arg != "x" || !ps[0].InString || ps[1].Arg != "y" || !ps[1].InString {
		t.Fatalf("placeholders: %+v", ps)
	}
}

// FuzzSubstitute checks that substitution never panics, keeps offsets inside
// the original, and that text outside placeholders is preserved.
func FuzzSubstitute(f *testing.F) {
	f.Add(seed004, "app-canary")
	f.Add(`up{a="{{args.x}}"}[{{args.w}}]`, "")
	f.Add(`x{{`, "v")
	f.Add("rate(m[{{ args.a }}]) # {{args.b}}\n", "5m")
	f.Fuzz(func(t *testing.T, q, v string) {
		s := Substitute(q, func(tag string) (Value, bool) { return Value{Text: v}, tag != "" })
		for i := 0; i <= len(s.Query); i++ {
			if o := s.OriginalOffset(i); o < 0 || o > len(q) {
				t.Fatalf("offset %d maps outside the original: %d", i, o)
			}
		}
		for _, p := range s.Placeholders {
			if p.Start < 0 || p.End > len(q) || p.Start >= p.End || q[p.Start:p.Start+2] != "{{" || q[p.End-2:p.End] != "}}" {
				t.Fatalf("bad placeholder %+v in %q", p, q)
			}
		}
		if len(s.Placeholders) == 0 && s.Query != q {
			t.Fatalf("no placeholders but query changed: %q -> %q", q, s.Query)
		}
		if expr, err := Parse(s.Query); err == nil {
			for _, m := range Matchers(expr, s.Query) {
				if m.Start < 0 || m.End > len(s.Query) || m.ValueStart < m.Start || m.ValueEnd > m.End {
					t.Fatalf("bad matcher span %+v", m)
				}
			}
		}
	})
}

func TestStandInContexts(t *testing.T) {
	cases := map[string]string{
		`sum by ({{args.label}}) (rate(x[{{args.w}}]))`:                  `sum by (rl_placeholder) (rate(x[1m]))`,
		`{{args.metric}}{job="a"}`:                                       `rl_placeholder{job="a"}`,
		`istio_{{args.kind}}_total{job="a"} > {{args.t}}`:                `istio_x_total{job="a"} > 1`,
		`x{ {{args.l}}="v" }`:                                            `x{ rl_placeholder="v" }`,
		`a / on({{args.l}}) group_left b offset {{args.o}}`:              `a / on(rl_placeholder) group_left b offset 1m`,
		`histogram_quantile({{args.q}}, sum(rate(b[5m])) by (le)) > 0.5`: `histogram_quantile(1, sum(rate(b[5m])) by (le)) > 0.5`,
	}
	for q, want := range cases {
		s := Substitute(q, nil)
		if s.Query != want {
			t.Errorf("%s\n got %s\nwant %s", q, s.Query, want)
			continue
		}
		if _, err := Parse(s.Query); err != nil {
			t.Errorf("%s: %v", s.Query, err)
		}
	}
}
