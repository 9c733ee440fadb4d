package textdist

import "testing"

func TestDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"setWeight", "setWieght", 2},
		{"route", "rout", 1},
		{"canary", "stable", 6}, // no shared letter at a cheap alignment: six substitutions
		{"ü", "u", 1},           // runes, not bytes
	}
	for _, c := range cases {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

// Within agrees with Distance on every pair of a set of names and every
// bound: the length cut-off and the early stop never change the answer.
func TestWithinAgreesWithDistance(t *testing.T) {
	names := []string{"", "a", "ab", "gateway", "gatewy", "gateway-1", "gateway-12", "gatweay",
		"public-gw", "public-gateway", "ü", "gätewäy", "gatewäy", "istio-system", "stable", "canary"}
	agreed := 0
	for _, a := range names {
		for _, b := range names {
			d := Distance(a, b)
			for k := 0; k <= 4; k++ {
				got, ok := Within(a, b, k)
				if ok != (d <= k) || ok && got != d {
					t.Errorf("Within(%q, %q, %d) = %d, %v; Distance is %d", a, b, k, got, ok, d)
				}
				if ok {
					agreed++
				}
			}
		}
	}
	if agreed == 0 {
		t.Fatal("no pair was within any bound")
	}
}
