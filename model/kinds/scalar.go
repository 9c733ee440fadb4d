package kinds

import (
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
)

// scalarClass says what a YAML scalar resolved to, in exactly the detail the
// schema checks tell apart. It is the one source of truth for "which scalar
// fits which type", shared by the node walks (CheckGo, CheckProto) and the
// value walks (GoClean, ProtoClean).
//
// A yaml node has exactly one class. A decoded value may have come from
// several (int64 5 was written "5" or "5.0"), so the value walks get a set of
// classes and accept a value only when every member fits.
type scalarClass uint16

const (
	clsString        scalarClass = 1 << iota // !!str, !!timestamp, !!binary
	clsBool                                  // !!bool
	clsInt                                   // !!int that fits int64, >= 0
	clsNegInt                                // !!int that fits int64, < 0
	clsBigInt                                // !!int beyond int64 but within uint64
	clsOddInt                                // any other !!int text (explicitly tagged garbage)
	clsWholeFloat                            // !!float with an integral value within int64, >= 0
	clsNegWholeFloat                         // !!float with an integral value within int64, < 0
	clsFloat                                 // other finite !!float, >= 0
	clsNegFloat                              // other finite !!float, < 0
	clsOddFloat                              // !!float that is not a finite number: .inf, .nan
	clsOther                                 // any other tag, e.g. a local tag such as !foo
)

// Sets of classes.
const (
	intTags   = clsInt | clsNegInt | clsBigInt | clsOddInt
	floatTags = clsWholeFloat | clsNegWholeFloat | clsFloat | clsNegFloat | clsOddFloat
	negatives = clsNegInt | clsNegWholeFloat | clsNegFloat
	anyScalar = ^scalarClass(0)
	noClass   = scalarClass(0)
)

// twoTo63 bounds the floats that convert to int64 exactly.
const twoTo63 = float64(1 << 63)

// nodeClass classifies a scalar node by its (implicit or explicit) tag and text.
func nodeClass(n *yaml.Node) scalarClass {
	switch fastyaml.NodeTag(n) {
	case "!!str", "!!timestamp", "!!binary":
		return clsString
	case "!!bool":
		return clsBool
	case "!!int":
		plain := strings.ReplaceAll(n.Value, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			if i < 0 {
				return clsNegInt
			}
			return clsInt
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return clsBigInt
		}
		return clsOddInt
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			return clsOddFloat
		}
		return floatClass(f)
	}
	return clsOther
}

// floatClass classifies a parsed !!float.
func floatClass(f float64) scalarClass {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return clsOddFloat
	case f == math.Trunc(f) && f >= -twoTo63 && f < twoTo63:
		if f < 0 {
			return clsNegWholeFloat
		}
		return clsWholeFloat
	case f < 0:
		return clsNegFloat
	}
	return clsFloat
}

// valueClasses returns every class a decoded scalar value can have come from,
// and false when v is not a scalar the loader's converter produces (a map, a
// list, or a type it never yields).
//
// It assumes the scalar's tag was implicit or one whose value shows it (see
// GoClean): under a local tag (`!foo x`) or on `!!int abc` the text decodes to
// a plain string, and a string is taken to be a !!str.
func valueClasses(v any) (scalarClass, bool) {
	switch x := v.(type) {
	case string:
		return stringClasses(x), true
	case bool:
		return clsBool, true
	case int64:
		return intClasses(x), true
	case float64: // a !!float, or a !!int beyond int64
		c := floatClass(x)
		if x >= twoTo63 {
			c |= clsBigInt
		}
		return c, true
	}
	return noClass, false
}

// intClasses is valueClasses of an int64, which was written "5", "0x5" or
// "5.0".
func intClasses(x int64) scalarClass {
	if x < 0 {
		return clsNegInt | clsNegWholeFloat
	}
	return clsInt | clsWholeFloat
}

// stringClasses is valueClasses of a string.
func stringClasses(x string) scalarClass {
	if yamlNonFinite(x) { // a plain .inf or .nan stays text
		return clsString | clsOddFloat
	}
	return clsString
}

// yamlNonFinite reports whether s, written plain, is one of YAML's spellings
// of infinity or not-a-number (which have no JSON form and so decode to text).
func yamlNonFinite(s string) bool {
	switch s {
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
		".nan", ".NaN", ".NAN":
		return true
	}
	return false
}

// each calls fn for every class in set and reports whether all returned true.
func (set scalarClass) each(fn func(scalarClass) bool) bool {
	for set != 0 {
		c := set & -set
		if !fn(c) {
			return false
		}
		set &^= c
	}
	return true
}
