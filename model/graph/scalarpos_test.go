package graph_test

import (
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
)

const scalarDoc = `apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: t}
spec:
  metrics:
  - name: block
    provider:
      prometheus:
        query: |
          sum(rate(x{a="1"}[1m]))
            / sum(rate(x{b="{{args.b}}"}[1m]))
  - name: quoted
    successCondition: "result[0] < \"é\" || result[0] > 1"
  - name: plain
    successCondition: len(result) > 0 && result[0] < 1
`

func TestPosInScalar(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "t.yaml", Data: []byte(scalarDoc)}}, load.Options{})
	r := g.OfKind("AnalysisTemplate")[0]
	lines := strings.Split(scalarDoc, "\n")
	cases := []struct {
		path, value, find string
	}{
		{"spec.metrics[0].provider.prometheus.query", "", "{{args.b}}"},
		{"spec.metrics[0].provider.prometheus.query", "", `a="1"`},
		{"spec.metrics[1].successCondition", `result[0] < "é" || result[0] > 1`, "> 1"},
		{"spec.metrics[2].successCondition", "", "result[0]"},
	}
	for _, c := range cases {
		val := r.NodeAt(c.path).Value
		off := strings.Index(val, c.find)
		if off < 0 {
			t.Fatalf("%q not in %q", c.find, val)
		}
		p := g.PosInScalar(r, c.path, off, off+len(c.find))
		line := lines[p.Line-1]
		runes := []rune(line)
		if p.Column-1+len([]rune(c.find)) > len(runes) {
			t.Errorf("%s %q: position %d:%d is past the line %q", c.path, c.find, p.Line, p.Column, line)
			continue
		}
		if got := string(runes[p.Column-1 : p.Column-1+len([]rune(c.find))]); got != c.find {
			t.Errorf("%s %q: position %d:%d shows %q", c.path, c.find, p.Line, p.Column, got)
		}
		if p.EndColumn-p.Column != len([]rune(c.find)) {
			t.Errorf("%s %q: width %d", c.path, c.find, p.EndColumn-p.Column)
		}
	}
}
