package fastyaml

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	k8syaml "sigs.k8s.io/yaml"
)

// viaYAML is the reference for Plain: yaml.v3's implicit resolution of an
// untagged plain scalar, with the YAML 1.1 booleans (NodeTag), then Scalar.
func viaYAML(s string) any {
	return Scalar(NodeTag(&yaml.Node{Kind: yaml.ScalarNode, Value: s}), s)
}

// TestPlainMatchesYAML checks Plain's shortcuts against yaml.v3's resolver on
// spelled-out edge cases and on random strings over the bytes that matter.
func TestPlainMatchesYAML(t *testing.T) {
	cases := []string{
		"", "0", "1", "-1", "+1", "12", "007", "080", "0777", "0o17", "-0o17", "0x1F", "-0x1F", "0b101", "-0b101",
		"1_000", "999999999999999999", "1000000000000000000", "9223372036854775807", "9223372036854775808",
		"18446744073709551615", "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
		"1.5", "1.0", "-1.0", ".5", "1.", "1e3", "1E3", "1e-3", "6.02e23", "1e400", "-1e400", "1_0.5",
		".inf", ".Inf", ".INF", "+.inf", "-.inf", ".nan", ".NaN", ".NAN", ".x", "..", ".",
		"true", "True", "TRUE", "tRUE", "false", "False", "FALSE", "yes", "Yes", "no", "No", "on", "On", "off",
		"y", "Y", "n", "N", "~", "null", "Null", "NULL", "nULL", "<<", "<", "nginx", "name", "5m", "10s", "1h",
		"1.0.0", "2024-01-01", "2024-1-1", "2024-01-01T10:00:00Z", "2024-01-01 10:00:00", "2024-01-01t10:00:00+02:00",
		"12:30", "1:2:3", "0x", "0o", "0b", "+", "-", "-x", "+x", "0 1", "1 ", "- 1", "1e", "e1", "0.99", "-.5",
		"1__0", "_1", "0_x1", "0x_1", "1e+3", "1e3.5", "٣", "1\u00e9",
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789+-._eExXoObBaftTzZ: nNuy~<"
	for i := 0; i < 20000; i++ {
		b := make([]byte, 1+r.IntN(8))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := Plain(s), viaYAML(s); !reflect.DeepEqual(got, want) {
			t.Errorf("Plain(%q) = %#v (%T), yaml.v3 gives %#v (%T)", s, got, got, want, want)
		}
	}
	plainCases = cases
}

// plainCases are TestPlainMatchesYAML's cases, for TestBooleansMatchKubectl.
var plainCases []string

// TestBooleansMatchKubectl checks, on TestPlainMatchesYAML's cases, that
// Plain reads a plain scalar as a boolean exactly when kubectl's YAML-to-JSON
// conversion (sigs.k8s.io/yaml, YAML 1.1) does, and as the same one; and
// that a quoted or !!str-tagged word stays a string there too.
func TestBooleansMatchKubectl(t *testing.T) {
	if plainCases == nil {
		TestPlainMatchesYAML(t)
	}
	for _, s := range plainCases {
		if strings.TrimSpace(s) != s {
			continue // a plain scalar as the parsers hand it over has no outer spaces
		}
		j, err := k8syaml.YAMLToJSON([]byte("v: " + s + "\n"))
		if err != nil {
			continue // not a value kubectl takes (and not a boolean)
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			t.Fatalf("%q: %v", j, err)
		}
		want, wantBool := m["v"].(bool)
		got, gotBool := Plain(s).(bool)
		if wantBool != gotBool || got != want {
			t.Errorf("Plain(%q) = %#v, kubectl reads %#v", s, Plain(s), m["v"])
		}
	}
	for _, s := range []string{`v: "yes"`, `v: 'on'`, `v: !!str n`} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(s), &n); err != nil {
			t.Fatal(err)
		}
		v := n.Content[0].Content[1]
		if tag := NodeTag(v); tag != "!!str" {
			t.Errorf("%s: NodeTag %s, want !!str", s, tag)
		}
		j, err := k8syaml.YAMLToJSON([]byte(s))
		if err != nil || strings.Contains(string(j), "true") || strings.Contains(string(j), "false") {
			t.Errorf("%s: kubectl reads %s (%v), want a string", s, j, err)
		}
	}
}

// goTemplateAction is the loader's pattern for Go template actions in plain
// scalars, the reference for template.
var goTemplateAction = regexp.MustCompile(`\{\{-?\s*(\.|\$|include\b|template\b|if\b|range\b|with\b|end\b|toYaml\b|default\b|quote\b|printf\b)`)

func TestTemplateMatchesPattern(t *testing.T) {
	cases := []string{
		"{{ .Values.x }}", "{{.x}}", "{{- .x }}", "{{$x}}", "{{ include \"a\" . }}", "{{ includes }}", "{{ if x }}",
		"{{iffy}}", "{{ end}}", "{{end", "{{ toYaml .x }}", "{{args.name}}", "{{ args.name }}", "{{-args}}", "{{", "{",
		"x{{ printf }}", "{{ printf_x }}", "{{ quote", "a{{b}}c{{ .d }}", "{{{ .x }}}", "{{ - .x }}", "{{default}}",
	}
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"{{", "-", " ", ".", "$", "if", "end", "with", "_", "x", "range", "}}", "include", "9"}
	for i := 0; i < 20000; i++ {
		s := ""
		for j := 0; j < 1+r.IntN(5); j++ {
			s += words[r.IntN(len(words))]
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		if got, want := template(s), goTemplateAction.MatchString(s); got != want {
			t.Errorf("template(%q) = %v, pattern says %v", s, got, want)
		}
	}
}
