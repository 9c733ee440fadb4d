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
