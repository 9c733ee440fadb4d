package fastyaml

import (
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Scalar converts a scalar's value, given its resolved short tag (as
// yaml.Node.ShortTag returns it), into the generic value a JSON decoder would
// see after YAML-to-JSON conversion: nil, bool, int64, float64 or string.
// Integers that need a float (above int64) and whole floats below 2^53 are
// normalised the way sigs.k8s.io/yaml's round trip would; .inf and .nan have
// no JSON form and stay strings. Both the fast and the slow decoding path use
// this one conversion.
func Scalar(tag, value string) any {
	switch tag {
	case "!!null":
		return nil
	case "!!bool":
		switch strings.ToLower(value) {
		case "true", "yes", "on", "y":
			return true
		}
		return false
	case "!!int":
		v := strings.ReplaceAll(value, "_", "")
		if i, err := strconv.ParseInt(v, 0, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(v, 0, 64); err == nil {
			return float64(u)
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
		return value
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return value // .inf and .nan have no JSON form
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f)
		}
		return f
	}
	return value
}

// OldBool reports whether s is one of the YAML 1.1 booleans that YAML 1.2
// (and so yaml.v3) reads as a string: y, yes, on, n, no, off, in the three
// spellings YAML 1.1 lists. kubectl, Helm and Argo CD convert manifests to
// JSON with sigs.k8s.io/yaml, a YAML 1.1 parser: to them an unquoted
// `enabled: yes` is the boolean true, which a string field rejects and a
// boolean field takes. The loader reads such plain scalars as they do.
// (kustomize reads YAML 1.2 and quotes these words when it writes them, so
// its output keeps them strings.)
func OldBool(s string) (value, ok bool) {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// NodeTag is the short tag a scalar node resolves to for kubectl: its
// ShortTag, except that an untagged plain YAML 1.1 boolean (OldBool) is a
// !!bool.
func NodeTag(n *yaml.Node) string {
	tag := n.ShortTag()
	if tag == "!!str" && n.Kind == yaml.ScalarNode && n.Style == 0 {
		if _, ok := OldBool(n.Value); ok {
			return "!!bool"
		}
	}
	return tag
}

// Plain resolves an untagged plain scalar exactly as yaml.v3's implicit
// resolution (with the YAML 1.1 booleans, see OldBool) followed by Scalar does, without yaml.v3's regexp and map
// look-ups for the values that are obviously strings or small integers.
func Plain(s string) any {
	if v, str := plainValue(s); !str {
		return v
	}
	return s
}

// plainValue is Plain without the allocation of a string in an interface:
// str says the value is s itself, a string; otherwise it is v.
func plainValue(s string) (v any, str bool) {
	if s == "" {
		return nil, false
	}
	switch c := s[0]; {
	case c >= '1' && c <= '9':
		if v, ok := smallInt(s); ok {
			return v, false
		}
	case c == '-' && len(s) > 1 && s[1] >= '1' && s[1] <= '9':
		if v, ok := smallInt(s[1:]); ok {
			return -v, false
		}
	case c == '0' && len(s) == 1:
		return int64(0), false
	}
	switch s[0] {
	case '+', '-', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// yaml.v3 tries timestamps, integers in every base, YAML floats and
		// .inf/.nan here. None of them can hold a byte outside numberBytes,
		// so anything that does is a string; the rest goes through yaml.v3.
		if s[0] != '.' && !onlyNumberBytes(s) {
			return nil, true
		}
		return Scalar((&yaml.Node{Kind: yaml.ScalarNode, Value: s}).ShortTag(), s), false
	case 'y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O', '~':
		// Only these exact spellings resolve to something other than a
		// string: yaml.v3's resolve map, and the YAML 1.1 booleans kubectl
		// reads (see OldBool).
		switch s {
		case "true", "True", "TRUE":
			return true, false
		case "false", "False", "FALSE":
			return false, false
		case "~", "null", "Null", "NULL":
			return nil, false
		}
		if b, ok := OldBool(s); ok {
			return b, false
		}
	}
	// Every other first byte (and "<<", a merge tag whose value stays "<<")
	// resolves to a string.
	return nil, true
}

// smallInt parses up to 18 decimal digits with no leading zero: always an
// int64 for yaml.v3 and Scalar alike.
func smallInt(s string) (int64, bool) {
	if len(s) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// numberBytes holds every byte a YAML timestamp, an integer in any base (with
// `_` separators) or a YAML float can contain.
var numberBytes = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEFxXoOtTzZ_+-.: " {
		t[c] = true
	}
	return t
}()

func onlyNumberBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if !numberBytes[s[i]] {
			return false
		}
	}
	return true
}
