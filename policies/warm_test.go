package policies

import (
	"slices"
	"testing"
)

// TestWarmSet: Warm compiles the policies a Rollout bundle without Argo CD
// needs (RL5001, RL5002), none that needs an Application or an HPA, and none
// the lint disables.
func TestWarmSet(t *testing.T) {
	if _, err := LoadBuiltin(); err != nil {
		t.Fatal(err)
	}
	ids := func(ps []*policy) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.rule.ID)
		}
		slices.Sort(out)
		return out
	}
	if got, want := ids(warmSet(func(string) bool { return false })), []string{"RL5001", "RL5002"}; !slices.Equal(got, want) {
		t.Errorf("warm set %v, want %v", got, want)
	}
	if got, want := ids(warmSet(func(id string) bool { return id == "RL5002" })), []string{"RL5001"}; !slices.Equal(got, want) {
		t.Errorf("warm set without RL5002: %v, want %v", got, want)
	}
}
