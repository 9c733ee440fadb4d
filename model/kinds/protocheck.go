package kinds

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rolloutlint/rolloutlint/internal/textdist"
	"github.com/rolloutlint/rolloutlint/model/fastyaml"
)

// FieldProblem is a schema violation found while walking a yaml node against a
// type: an unknown field or a value of the wrong type.
type FieldProblem struct {
	Path    string
	Node    *yaml.Node // the offending key (unknown field) or value (wrong type)
	Unknown bool       // true for an unknown field, false for a type mismatch
	Message string
}

// CheckProto walks n against the protobuf message descriptor md the way the
// Istio CRD schema accepts it: camelCase JSON field names only (the API server
// prunes snake_case names), well-known wrapper types as plain scalars. It
// reports every unknown field at its key and every mistyped scalar at its value.
func CheckProto(md protoreflect.MessageDescriptor, n *yaml.Node, path string, report func(FieldProblem)) {
	var links [maxInlineDepth]pathLink
	root := fieldPath{root: path, links: links[:0]}
	checkProto(md, n, root, report)
}

func checkProto(md protoreflect.MessageDescriptor, n *yaml.Node, p fieldPath, report func(FieldProblem)) {
	n = deref(n)
	if n == nil || isNull(n) {
		return
	}
	if wk := wellKnown(md); wk != "" {
		checkWellKnown(wk, n, p, report)
		return
	}
	if n.Kind != yaml.MappingNode {
		path := p.String()
		report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("expected an object for %s, found %s", md.Name(), describe(n))})
		return
	}
	fields := md.Fields()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" {
			continue
		}
		fd := fields.ByJSONName(k.Value)
		child := p.key(k.Value)
		if fd == nil {
			hint := ""
			if alt := fields.ByName(protoreflect.Name(k.Value)); alt != nil {
				hint = fmt.Sprintf(" (write %q: the CRD schema knows only camelCase names)", alt.JSONName())
			} else if s := suggest(k.Value, fields); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			report(FieldProblem{Path: child.String(), Node: k, Unknown: true,
				Message: fmt.Sprintf("unknown field %q in %s%s", k.Value, md.Name(), hint)})
			continue
		}
		checkField(fd, v, child, report)
	}
}

func checkField(fd protoreflect.FieldDescriptor, v *yaml.Node, p fieldPath, report func(FieldProblem)) {
	v = deref(v)
	if v == nil || isNull(v) {
		return
	}
	switch {
	case fd.IsMap():
		if v.Kind != yaml.MappingNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: v, Message: fmt.Sprintf("expected a map for %s, found %s", fd.JSONName(), describe(v))})
			return
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			child := p.key(v.Content[i].Value)
			checkSingle(fd.MapValue(), v.Content[i+1], child, report)
		}
	case fd.IsList():
		if v.Kind != yaml.SequenceNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: v, Message: fmt.Sprintf("expected a list for %s, found %s", fd.JSONName(), describe(v))})
			return
		}
		for i, item := range v.Content {
			child := p.at(i)
			checkSingle(fd, item, child, report)
		}
	default:
		checkSingle(fd, v, p, report)
	}
}

func checkSingle(fd protoreflect.FieldDescriptor, v *yaml.Node, p fieldPath, report func(FieldProblem)) {
	v = deref(v)
	if v == nil || isNull(v) {
		return
	}
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		checkProto(fd.Message(), v, p, report)
		return
	}
	if v.Kind != yaml.ScalarNode {
		path := p.String()
		report(FieldProblem{Path: path, Node: v, Message: fmt.Sprintf("expected %s for %s, found %s", scalarName(fd.Kind()), fd.JSONName(), describe(v))})
		return
	}
	if msg := scalarMismatch(fd, v); msg != "" {
		path := p.String()
		report(FieldProblem{Path: path, Node: v, Message: msg})
	}
}

func scalarMismatch(fd protoreflect.FieldDescriptor, v *yaml.Node) string {
	switch protoScalarFit(fd, nodeClass(v), v.Value) {
	case fitBadType:
		return fmt.Sprintf("%s must be %s, found %s", fd.JSONName(), scalarName(fd.Kind()), describe(v))
	case fitBadEnum:
		names := enumNames(fd.Enum())
		return fmt.Sprintf("%s must be one of %s, found %q", fd.JSONName(), strings.Join(names, ", "), v.Value)
	case fitNegative:
		return fmt.Sprintf("%s must not be negative, found %s", fd.JSONName(), v.Value)
	}
	return ""
}

// fit is the verdict on one scalar against a schema type.
type fit uint8

const (
	fitOK fit = iota
	fitBadType
	fitBadEnum
	fitNegative
)

// protoScalarFit judges a scalar of class c and text text against a scalar
// proto field the way the API server does with Istio's CRD schema: its
// structural schema types every numeric spec field `type: integer` or
// `type: number` and every enum `type: string` with the names, so a quoted
// number ("50") is a string and rejected, and an enum given as its number is
// rejected, although protojson, which Istio itself decodes with, accepts
// both. The text is consulted only for an enum's name, so an empty text is
// the cautious stand-in when the text is unknown.
func protoScalarFit(fd protoreflect.FieldDescriptor, c scalarClass, text string) fit {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if c != clsBool {
			return fitBadType
		}
	case protoreflect.StringKind, protoreflect.BytesKind:
		// Kubernetes' structural schema would reject a number here, but YAML
		// writers often leave short strings unquoted; only collections are wrong,
		// and booleans (`host: y` unquoted is one to kubectl), which the
		// decoder cannot turn into text either.
		if c == clsBool {
			return fitBadType
		}
	case protoreflect.EnumKind:
		if c != clsString || fd.Enum().Values().ByName(protoreflect.Name(text)) == nil {
			return fitBadEnum
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if c&(intTags|floatTags) == 0 {
			return fitBadType
		}
	default: // integers; an integral float reaches the decoder as an integer
		switch {
		case c&(clsInt|clsWholeFloat) != 0:
		case c&(clsNegInt|clsNegWholeFloat) != 0:
			if isUnsigned(fd.Kind()) {
				return fitNegative
			}
		default:
			return fitBadType
		}
	}
	return fitOK
}

func isUnsigned(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		return true
	}
	return false
}

func wellKnown(md protoreflect.MessageDescriptor) string {
	name := string(md.FullName())
	if strings.HasPrefix(name, "google.protobuf.") {
		return strings.TrimPrefix(name, "google.protobuf.")
	}
	return ""
}

func checkWellKnown(name string, n *yaml.Node, p fieldPath, report func(FieldProblem)) {
	switch name {
	case "Struct", "Value", "ListValue", "Any", "Empty":
		return // free-form
	case "Duration":
		if n.Kind != yaml.ScalarNode || !validDuration(n.Value) {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: fmt.Sprintf("expected a duration such as \"5s\" or \"1.5s\", found %s", describe(n))})
		}
	case "Timestamp":
		if n.Kind != yaml.ScalarNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: "expected an RFC 3339 timestamp, found " + describe(n)})
		}
	case "BoolValue":
		if n.Kind != yaml.ScalarNode || fastyaml.NodeTag(n) != "!!bool" {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: "expected true or false, found " + describe(n)})
		}
	case "StringValue", "BytesValue":
		if n.Kind != yaml.ScalarNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: "expected a string, found " + describe(n)})
		}
	default: // numeric wrappers
		if n.Kind != yaml.ScalarNode {
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: "expected a number, found " + describe(n)})
			return
		}
		switch wrapperFit(name, nodeClass(n), n.Value) {
		case fitBadType:
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: "expected a number, found " + describe(n)})
		case fitNegative:
			path := p.String()
			report(FieldProblem{Path: path, Node: n, Message: "expected a non-negative number, found " + n.Value})
		}
	}
}

// wrapperFit judges a scalar against a numeric wrapper type (Int32Value,
// UInt32Value, DoubleValue, ...): any finite number, or text that reads as
// one; never a negative number for the unsigned ones. As for protoScalarFit,
// the text only ever accepts.
func wrapperFit(name string, c scalarClass, text string) fit {
	unsigned := strings.HasPrefix(name, "UInt")
	switch {
	case c&negatives != 0:
		if unsigned {
			return fitNegative
		}
	case c&(clsInt|clsBigInt|clsWholeFloat|clsFloat) != 0:
	default:
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return fitBadType
		}
		if unsigned && strings.HasPrefix(text, "-") {
			return fitNegative
		}
	}
	return fitOK
}

// validDuration accepts protobuf JSON durations ("1.5s") and, as Istio's CRD
// validation does, Go-style units ("100ms", "1m").
func validDuration(s string) bool {
	if s == "" {
		return false
	}
	// The other units come before "s" so that a valid "100ms" is never first
	// read as "100m" + "s": a failed parse allocates its error.
	for _, unit := range [...]string{"ms", "us", "ns", "m", "h", "s"} {
		if strings.HasSuffix(s, unit) {
			if _, err := strconv.ParseFloat(strings.TrimSuffix(s, unit), 64); err == nil {
				return true
			}
		}
	}
	return false
}

func scalarName(k protoreflect.Kind) string {
	switch k {
	case protoreflect.BoolKind:
		return "true or false"
	case protoreflect.StringKind, protoreflect.BytesKind:
		return "a string"
	case protoreflect.EnumKind:
		return "an enum name"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "a number"
	default:
		return "an integer"
	}
}

func enumNames(ed protoreflect.EnumDescriptor) []string {
	vals := ed.Values()
	out := make([]string, 0, vals.Len())
	for i := 0; i < vals.Len(); i++ {
		out = append(out, string(vals.Get(i).Name()))
	}
	return out
}

// suggest returns the field whose JSON name is closest to name, when close.
func suggest(name string, fields protoreflect.FieldDescriptors) string {
	best, bestDist := "", 3
	for i := 0; i < fields.Len(); i++ {
		cand := fields.Get(i).JSONName()
		if d := textdist.Distance(strings.ToLower(name), strings.ToLower(cand)); d < bestDist {
			best, bestDist = cand, d
		}
	}
	return best
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	}
	switch fastyaml.NodeTag(n) {
	case "!!str":
		return strconv.Quote(n.Value)
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		if b, ok := fastyaml.OldBool(n.Value); ok && n.ShortTag() == "!!str" {
			return fmt.Sprintf("%s, which kubectl reads as %t (YAML 1.1)", n.Value, b)
		}
		return n.Value
	}
	return n.Value
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
