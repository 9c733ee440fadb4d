package visibility

import "strings"

// Host names follow Istio's rules (pkg/config/host): a name is wildcarded
// when it starts with "*"; "*" alone matches every host, "*.example.com"
// every host ending in ".example.com" (several labels deep too).

// wildcarded reports whether a host name is a wildcard.
func wildcarded(h string) bool { return strings.HasPrefix(h, "*") }

// SubsetOf reports whether every host h names is also named by o (Istio's
// host.Name.SubsetOf): equal names, or o a wildcard whose suffix covers h.
func SubsetOf(h, o string) bool {
	if h == o {
		return true
	}
	if !wildcarded(o) {
		return false
	}
	if o == "*" {
		return true
	}
	suffix := o[1:] // ".example.com"
	if wildcarded(h) {
		return strings.HasSuffix(h[1:], suffix)
	}
	return strings.HasSuffix(h, suffix)
}

// Matches reports whether two host names overlap (Istio's host.Name.Matches):
// either is a subset of the other.
func Matches(a, b string) bool { return SubsetOf(a, b) || SubsetOf(b, a) }
