package tool

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestNameScannersAreTheValidation holds the scanners that skip the
// validation's regular expressions to what those accept.
func TestNameScannersAreTheValidation(t *testing.T) {
	names := []string{"", "a", "z", "0", "-", ".", "a-", "-a", "a-b", "a--b", "0a", "a0", "A", "aB", "a_b", "a.b", "a..b",
		".a", "a.", "a.-b", "a-.b", "1.2.3", "web-0.shop", "é", "a b", "a\n", "\na", "checkout-canary",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 126) + "ab", strings.Repeat("a", 254)}
	for _, n := range names {
		if got, want := isLabel(n, false), len(validation.IsDNS1123Label(n)) == 0; got != want {
			t.Errorf("isLabel(%q, false) = %v, IsDNS1123Label accepts: %v", n, got, want)
		}
		if got, want := isLabel(n, true), len(validation.IsDNS1035Label(n)) == 0; got != want {
			t.Errorf("isLabel(%q, true) = %v, IsDNS1035Label accepts: %v", n, got, want)
		}
		if got, want := isSubdomain(n), len(validation.IsDNS1123Subdomain(n)) == 0; got != want {
			t.Errorf("isSubdomain(%q) = %v, IsDNS1123Subdomain accepts: %v", n, got, want)
		}
	}
}
