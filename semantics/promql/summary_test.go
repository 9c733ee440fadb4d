package promql

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
)

func TestSummarizeIsParseAndMatchers(t *testing.T) {
	for _, q := range []string{
		`sum(rate(istio_requests_total{destination_service_name="app",response_code!~"5.."}[2m]))`,
		`up{job=~"a|b", "utf8.name"="x"} > 0.5`,
		`scalar(up)`,
		`sum(rate(x[`,        // a parse error
		`up{job=~"(" }`,      // an invalid regular expression
		`vector(1) + on() x`, // no matchers
	} {
		got := Summarize(q)
		expr, err := Parse(q)
		var want Summary
		if err != nil {
			if !errors.As(err, &want.Err) {
				t.Fatalf("Parse(%q) failed with %T, not *Error", q, err)
			}
		} else {
			want.Type, want.Matchers = expr.Type(), Matchers(expr, q)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("Summarize(%q) = %+v, want %+v", q, *got, want)
		}
		if again := Summarize(q); again != got {
			t.Errorf("Summarize(%q) parsed again instead of answering from the cache", q)
		}
	}
}

func TestSummarizeCacheIsBoundedAndKeepsWhatIsUsed(t *testing.T) {
	const hot = `rate(hot_total{app="kept"}[1m])`
	first := Summarize(hot)
	Summarize(`rate(cold_total{app="dropped"}[1m])`)
	for i := 0; i < 3*SummaryCacheSize; i++ {
		Summarize(fmt.Sprintf(`rate(x_total{i="%d"}[1m])`, i))
		if i%(SummaryCacheSize/4) == 0 && Summarize(hot) != first {
			t.Fatal("a text in use was dropped from the cache")
		}
		if n := summaries.Len(); n > SummaryCacheSize {
			t.Fatalf("%d texts cached, over the bound of %d", n, SummaryCacheSize)
		}
	}
	if summaries.Has(`rate(cold_total{app="dropped"}[1m])`) {
		t.Error("a text not used since thousands of others is still cached")
	}
}

func TestSummarizeConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 2000; i++ {
				q := fmt.Sprintf(`sum(up{g="%d"}) / %d`, i%300, g)
				if s := Summarize(q); s.Err != nil || len(s.Matchers) != 1 || s.Matchers[0].Value != fmt.Sprint(i%300) {
					t.Errorf("Summarize(%q) = %+v", q, s)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestSummarizeSubstitutionIsSummarize checks the shared parse of queries
// that differ in their quoted argument values against parsing each text as
// written, over templates that put the values where they may and may not
// share a parse (regular expressions, __name__, escapes, function strings,
// comments) and values that could end a string or change a regexp.
func TestSummarizeSubstitutionIsSummarize(t *testing.T) {
	templates := []string{
		`sum(rate(istio_requests_total{destination_service_name="{{args.a}}",response_code!~"5.."}[2m])) / sum(rate(istio_requests_total{destination_service_name="{{args.a}}"}[2m]))`,
		`up{job="{{args.a}}-{{args.b}}", env!='{{args.b}}'}`,
		"up{job=`{{args.a}}`}",
		`up{job=~"{{args.a}}"}`,
		`up{job=~"[{{args.a}}]"}`,
		`up{job!~"(?{{args.a}})x"}`,
		`{__name__="{{args.a}}"}`,
		`{"{{args.a}}"}`,
		`up{job="\t{{args.a}}"}`,
		`up{job="{{args.a}}"} # "{{args.b}}"`,
		`label_replace(up, "{{args.a}}", "$1", "job", "(.*)")`,
		`count_values("{{args.a}}", up{a="{{args.b}}"})`,
		`up{job="{{args.a}}"}[{{args.b}}]`,
		`up{job="{{args.a}}"} offset {{args.b}}`,
		`up{job="{{args.a}}"`,
		`sum by ({{args.b}}) (up{job="{{args.a}}"})`,
		`up{job="{{args.a}}", {{args.b}}="x"}`,
		`{job="{{args.a}}"}`,
		`{job!="{{args.a}}"}`,
	}
	values := []string{"", "x", "svc-00001", "5m", "a.b", "z-a", "i)", `a"b`, `a'b`, "a`b", `a\b`, "a\nb", "é", "{{", "}", " ", "job", "1"}
	for _, tmpl := range templates {
		for _, a := range values {
			for _, b := range []string{"", "svc-2", "1m", `"`, "le"} {
				vals := map[string]Value{"args.a": {Text: a}, "args.b": {Text: b}}
				sub := Substitute(tmpl, func(tag string) (Value, bool) { v, ok := vals[tag]; return v, ok })
				got := SummarizeSubstitution(sub)
				want := summarize(sub.Query)
				if !reflect.DeepEqual(got, *want) {
					t.Errorf("SummarizeSubstitution(%q) = %+v, want %+v", sub.Query, got, *want)
				}
			}
		}
	}
}

// TestSummarizeSubstitutionSharesTheParse checks that Rollouts passing
// different service names to one template cost one parse.
func TestSummarizeSubstitutionSharesTheParse(t *testing.T) {
	const tmpl = `sum(rate(requests_total{service="{{args.svc}}",code!~"5.."}[1m]))`
	for i := 0; i < 20; i++ {
		svc := fmt.Sprintf("shared-shape-%02d", i)
		sub := Substitute(tmpl, func(string) (Value, bool) { return Value{Text: svc}, true })
		s := SummarizeSubstitution(sub)
		if s.Err != nil || len(s.Matchers) != 2 || s.Matchers[0].Value != svc {
			t.Fatalf("SummarizeSubstitution(%q) = %+v", sub.Query, s)
		}
		if summaries.Has(sub.Query) {
			t.Fatalf("%q was parsed as written, not by its shape", sub.Query)
		}
	}
}
