package rollout

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestPlainMatchAgreesWithSelector checks RL1005's shortcut: whenever
// plainMatch says a selector matches, building it succeeds and it matches.
func TestPlainMatchAgreesWithSelector(t *testing.T) {
	texts := []string{"", "a", "app", "app-1", "-a", "a-", "a.b", "a_b", "a/b", "example.com/app", "A9", "a b", "ä",
		"1234567890123456789012345678901234567890123456789012345678901",    // 61
		"123456789012345678901234567890123456789012345678901234567890123",  // 63
		"1234567890123456789012345678901234567890123456789012345678901234", // 64
	}
	for _, k := range texts {
		for _, v := range texts {
			ml := map[string]string{k: v}
			for _, tl := range []map[string]string{{k: v}, {k: v, "other": "x"}, {k: v + "x"}, {}} {
				if !plainMatch(ml, tl) {
					continue
				}
				s, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: ml})
				if err != nil || !s.Matches(labels.Set(tl)) {
					t.Errorf("plainMatch(%q, %q) is true, but the selector gives err %v, matches %v", ml, tl, err, err == nil && s.Matches(labels.Set(tl)))
				}
			}
		}
	}
	if !plainMatch(map[string]string{"app": "web", "tier": "a.b_c-1"}, map[string]string{"app": "web", "tier": "a.b_c-1", "x": "y"}) {
		t.Error("plain matching labels not taken by the shortcut")
	}
}
