package kinds

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
)

func TestFieldPathRendersLikeResourcePos(t *testing.T) {
	var links [maxInlineDepth]pathLink
	p := fieldPath{root: "spec", links: links[:0]}
	want := "spec"
	// Deeper than the inline links, so the chain spills to the heap midway.
	for i := 0; i < maxInlineDepth+10; i++ {
		p = p.key("http").at(i)
		want += fmt.Sprintf(".http[%d]", i)
	}
	p = p.key("labels").key("app.kubernetes.io/name")
	want += `.labels["app.kubernetes.io/name"]`
	if got := p.String(); got != want {
		t.Fatalf("path\n got %s\nwant %s", got, want)
	}
	if got := (fieldPath{}).key("").String(); got != `[""]` {
		t.Errorf("empty key renders %s", got)
	}
}

// Siblings reuse the slots of the links below their parent: a problem found
// after a sibling's deep subtree must still name its own path.
func TestCheckGoPathsAfterSiblings(t *testing.T) {
	src := `metadata:
  labels: {a: b, "x.y": 1}
spec:
  ports:
  - {name: a, port: 80, targetPort: 8080}
  - {name: b, port: "eighty"}
  selector: {app: x}
  typo: 1
`
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	var got []string
	CheckGo(reflect.TypeFor[corev1.Service](), n.Content[0], "", func(p FieldProblem) { got = append(got, p.Path) })
	want := []string{`metadata.labels["x.y"]`, "spec.ports[1].port", "spec.typo"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("paths %q, want %q", got, want)
	}
}
