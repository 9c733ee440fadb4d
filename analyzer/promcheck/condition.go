package promcheck

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/expr-lang/expr"
)

// argoValue is what the Argo Rollouts Prometheus provider hands a condition
// as `result`: a []float64 for a vector (one value per series), a float64
// for a scalar. ok is false for result types the provider rejects.
func argoValue(r *Result) (any, bool) {
	switch r.Type {
	case "vector":
		if r.Values == nil {
			return []float64{}, true
		}
		return r.Values, true
	case "scalar":
		return r.Values[0], true
	}
	return nil, false
}

// evalCondition evaluates a success/failure condition with the expr engine
// Argo Rollouts uses, in an environment with the helper functions Argo
// offers conditions (asInt, asFloat, isNaN, isInf, isNil, default).
func evalCondition(result any, condition string) error {
	env := map[string]any{
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
	program, err := expr.Compile(condition, expr.Env(env))
	if err != nil {
		return err
	}
	out, err := expr.Run(program, env)
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
