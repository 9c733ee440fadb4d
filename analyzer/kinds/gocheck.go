package kinds

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// goFields caches, per struct type, its JSON field names (inline structs
// flattened) and their types.
var goFields sync.Map // reflect.Type → map[string]reflect.Type

func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if v, ok := goFields.Load(t); ok {
		return v.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
				if et := indirect(f.Type); et.Kind() == reflect.Struct {
					add(et)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := m[name]; !dup {
				m[name] = f.Type
			}
		}
	}
	add(t)
	goFields.Store(t, m)
	return m
}

func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// CheckGo walks n against the Go type t through its JSON tags, the schema
// Kubernetes and Argo Rollouts decode with. It reports unknown fields at their
// key and scalars of the wrong type at their value. Types with their own JSON
// decoding (quantities, IntOrString, raw JSON, times) are accepted as they come.
func CheckGo(t reflect.Type, n *yaml.Node, path string, report func(FieldProblem)) {
	n = deref(n)
	if n == nil || isNull(n) {
		return
	}
	t = indirect(t)
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || t.Implements(jsonUnmarshaler) {
		if reflect.PointerTo(t).Implements(textUnmarshaler) && n.Kind != yaml.ScalarNode {
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be a string, found %s", lastName(path), describe(n))})
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be an object, found %s", lastName(path), describe(n))})
			return
		}
		fields := fieldsOf(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				continue
			}
			childPath := joinKey(path, k.Value)
			ft, ok := fields[k.Value]
			if !ok {
				hint := ""
				if s := suggestName(k.Value, fields); s != "" {
					hint = fmt.Sprintf(" (did you mean %q?)", s)
				}
				report(FieldProblem{Path: childPath, Node: k, Unknown: true,
					Message: fmt.Sprintf("unknown field %q in %s%s", k.Value, t.Name(), hint)})
				continue
			}
			CheckGo(ft, v, childPath, report)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be a map, found %s", lastName(path), describe(n))})
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			CheckGo(t.Elem(), n.Content[i+1], joinKey(path, n.Content[i].Value), report)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 { // []byte is base64 text
			return
		}
		if n.Kind != yaml.SequenceNode {
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be a list, found %s", lastName(path), describe(n))})
			return
		}
		for i, c := range n.Content {
			CheckGo(t.Elem(), c, fmt.Sprintf("%s[%d]", path, i), report)
		}
	case reflect.Interface:
		return
	default:
		if n.Kind != yaml.ScalarNode {
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be %s, found %s", lastName(path), goKindName(t.Kind()), describe(n))})
			return
		}
		if !scalarFits(t.Kind(), n) {
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("%s must be %s, found %s", lastName(path), goKindName(t.Kind()), describe(n))})
		}
	}
}

func scalarFits(k reflect.Kind, n *yaml.Node) bool {
	tag := n.ShortTag()
	switch k {
	case reflect.String:
		return tag == "!!str" || tag == "!!timestamp" || tag == "!!binary"
	case reflect.Bool:
		return tag == "!!bool"
	case reflect.Float32, reflect.Float64:
		return tag == "!!int" || tag == "!!float"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if tag == "!!float" {
			f, err := strconv.ParseFloat(n.Value, 64)
			return err == nil && f == float64(int64(f))
		}
		return tag == "!!int"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return tag == "!!int" && !strings.HasPrefix(n.Value, "-")
	}
	return true
}

func goKindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	}
	return "an integer"
}

func lastName(path string) string {
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return strings.Trim(path[i:], ".[]\"")
	}
	return path
}

func suggestName(name string, fields map[string]reflect.Type) string {
	best, bestDist := "", 3
	for cand := range fields {
		d := textdist.Distance(strings.ToLower(name), strings.ToLower(cand))
		if d < bestDist || d == bestDist && cand < best {
			best, bestDist = cand, d
		}
	}
	return best
}
