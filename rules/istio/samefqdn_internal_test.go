package istio

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// sameFQDN must agree with comparing graph.FQDN of both hosts.
func TestSameFQDN(t *testing.T) {
	hosts := []string{"", "*", "reviews", "ratings", "reviews.shop", "reviews.shop.svc", "reviews.shop.svc.cluster.local",
		"reviews.", "reviews.other", "*.example.com", "api.example.com", "reviews.shop.svc."}
	for _, a := range hosts {
		for _, b := range hosts {
			want := graph.FQDN(a, "shop") == graph.FQDN(b, "shop")
			if got := sameFQDN(a, b, "shop"); got != want {
				t.Errorf("sameFQDN(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
	}
}
