//go:build unix

package childrun

import (
	"bytes"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	s, err := Run([]string{"sh", "-c", "echo hi; i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done"}, &out, func(int) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "hi\n" || s.Wall <= 0 || s.CPU() <= 0 || s.MaxRSSKB <= 0 {
		t.Errorf("output %q, sample %+v: want the output and a wall time, CPU time and RSS", out.String(), s)
	}
	if _, err := Run([]string{"sh", "-c", "echo boom >&2; exit 3"}, nil, func(st int) bool { return st == 1 }); err == nil || !bytes.Contains([]byte(err.Error()), []byte("boom")) {
		t.Errorf("exit 3 not accepted: %v, want an error quoting stderr", err)
	}
	if _, err := Run([]string{"sh", "-c", "exit 3"}, nil, func(st int) bool { return st == 3 }); err != nil {
		t.Errorf("exit 3 accepted: %v", err)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
