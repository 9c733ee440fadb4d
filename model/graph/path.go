package graph

import (
	"strconv"
	"strings"
)

// PathElem is one step of a field path: a mapping key or a sequence index.
type PathElem struct {
	Key   string
	Index int
	IsKey bool
}

// ParsePath splits a field path such as `spec.strategy.canary.steps[0].setWeight` or
// `metadata.annotations["rolloutlint.io/ignore"]` into its elements. It is lenient:
// a malformed bracket is treated as part of a key, so a bad path degrades to the
// nearest parent position instead of failing.
func ParsePath(path string) []PathElem {
	var out []PathElem
	i := 0
	for i < len(path) {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				out = append(out, PathElem{Key: path[i:], IsKey: true})
				return out
			}
			inner := path[i+1 : i+end]
			if len(inner) >= 2 && (inner[0] == '"' || inner[0] == '\'') {
				if s, err := strconv.Unquote(`"` + strings.Trim(inner, `"'`) + `"`); err == nil {
					out = append(out, PathElem{Key: s, IsKey: true})
				} else {
					out = append(out, PathElem{Key: inner[1 : len(inner)-1], IsKey: true})
				}
			} else if n, err := strconv.Atoi(inner); err == nil {
				out = append(out, PathElem{Index: n})
			} else {
				out = append(out, PathElem{Key: inner, IsKey: true})
			}
			i += end + 1
		default:
			j := i
			for j < len(path) && path[j] != '.' && path[j] != '[' {
				j++
			}
			out = append(out, PathElem{Key: path[i:j], IsKey: true})
			i = j
		}
	}
	return out
}

// Key appends a mapping key to a path, quoting it when it holds characters that
// the dotted form cannot carry.
func Key(base, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\"' /") {
		return base + "[" + strconv.Quote(key) + "]"
	}
	if base == "" {
		return key
	}
	return base + "." + key
}

// Index appends a sequence index to a path. Paths are built for every
// reference of every object: a concatenation is one allocation, fmt several.
func Index(base string, i int) string {
	return base + "[" + strconv.Itoa(i) + "]"
}
