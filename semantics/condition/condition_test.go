package condition

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		cond   string
		result any
		bad    string // substring of the error, "" for none
	}{
		{"result < 0.02", Vector, "mismatched types []float64 and float64"},
		{"result[0] < 0.02", Vector, ""},
		{"len(result) > 0 && result[0] < 0.02", Vector, ""},
		{"all(result, {# < 0.02})", Vector, ""},
		{"result < 0.02", Scalar, ""},
		{"isNaN(result) || result >= 0.95", Scalar, ""},
		{"result[0] < 0.02", Scalar, "float64"},
		{"result <", Vector, "unexpected"},
	}
	// Twice, in both orders of the shapes: the second round is answered from
	// the cache, which must keep the two shapes of one condition apart.
	for _, c := range append(append(cases, cases...), reversed(cases)...) {
		err := Check(c.cond, c.result)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%q on %T: unexpected error %v", c.cond, c.result, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%q on %T: want an error containing %q, got %v", c.cond, c.result, c.bad, err)
		}
	}
}

func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestEval(t *testing.T) {
	if err := Eval("result[0] < 0.02", []float64{}); err == nil || !strings.Contains(err.Error(), "index out of range") {
		t.Errorf("indexing an empty vector should fail, got %v", err)
	}
	if err := Eval("len(result) > 0 && result[0] < 0.02", []float64{}); err != nil {
		t.Errorf("guarded index: %v", err)
	}
	if err := Eval("result[0] * 2", []float64{1}); err == nil {
		t.Error("a non-boolean condition should be reported")
	}
}
