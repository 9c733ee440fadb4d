// Package condition compiles and evaluates Argo Rollouts metric conditions
// (successCondition, failureCondition) with the expr engine Argo Rollouts
// uses, so that rolloutlint judges them the way the controller will.
package condition

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/expr-lang/expr"

	"github.com/rolloutlint/rolloutlint/internal/recent"
)

// Vector and Scalar are example values of the shapes the Argo Rollouts
// Prometheus provider hands a condition as `result`: a []float64 with one
// value per series of a vector, a float64 for a scalar.
var (
	Vector any = []float64{}
	Scalar any = float64(0)
)

// env is the environment a condition sees: `result` plus the helper
// functions Argo Rollouts offers (asInt, asFloat, isNaN, isInf, isNil,
// default).
func env(result any) map[string]any {
	return map[string]any{
		"result":  result,
		"asInt":   func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) },
		"asFloat": func(s string) (float64, error) { return strconv.ParseFloat(s, 64) },
		"isNaN":   math.IsNaN,
		"isInf":   func(f float64) bool { return math.IsInf(f, 0) },
		"isNil":   func() bool { return isEmpty(result) },
		"default": func(v, def any) any {
			if v == nil || isEmpty(result) {
				return def
			}
			return v
		},
	}
}

// Check type-checks a condition against the shape of result (only its type
// matters): an error means every evaluation would fail, whatever the data.
// The verdict is remembered by condition and type (a webhook checks the same
// templates' conditions at every review), so the same error value may be
// returned again.
func Check(cond string, result any) error {
	return checked.Get(checkKey{cond, reflect.TypeOf(result)}, func() error {
		_, err := expr.Compile(cond, expr.Env(env(result)))
		return err
	})
}

// checkKey is what a Check verdict depends on: the expr compiler sees only
// the type of result.
type checkKey struct {
	cond string
	typ  reflect.Type
}

// checked remembers recent Check verdicts.
var checked = recent.New[checkKey, error](2048)

// Eval evaluates a condition on an actual result; an error is what the
// measurement would record instead of a verdict.
func Eval(cond string, result any) error {
	e := env(result)
	program, err := expr.Compile(cond, expr.Env(e))
	if err != nil {
		return err
	}
	out, err := expr.Run(program, e)
	if err != nil {
		return err
	}
	if _, ok := out.(bool); !ok {
		return fmt.Errorf("the condition gives %T, not a boolean", out)
	}
	return nil
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && rv.Len() == 0
}
