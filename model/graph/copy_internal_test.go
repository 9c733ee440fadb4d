package graph

import (
	"reflect"
	"testing"
)

// TestCopyCoversEveryField fails when Resource gains a field, so that Copy
// is revisited: a field it does not carry would be lost in every review
// that joins a cluster object loaded once.
func TestCopyCoversEveryField(t *testing.T) {
	const known = "Typed Kind Namespace Name APIVersion Group Version NamespaceExplicit File Doc object Known DecodeFailed index kindPos weights mu node src positions derived"
	var got string
	rt := reflect.TypeFor[Resource]()
	for i := range rt.NumField() {
		if i > 0 {
			got += " "
		}
		got += rt.Field(i).Name
	}
	if got != known {
		t.Fatalf("Resource fields changed; update Copy and this list:\ngot  %s\nwant %s", got, known)
	}
}

// TestCopySharesPositions: a copy gives the positions the original gives,
// and what one copy positioned, the next finds without the node tree.
func TestCopySharesPositions(t *testing.T) {
	src := &NodeSource{Data: []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  ports:\n  - port: 80\n"), Item: -1, LineOffset: 4}
	r := &Resource{Kind: "Service", Name: "a", File: "f.yaml"}
	r.SetNode(nil, src)
	want := r.Pos("spec.ports[0].port")
	if want.Line != 11 {
		t.Fatalf("original: line %d, want 11", want.Line)
	}
	a := r.Copy()
	if got := a.Pos("spec.ports[0].port"); got != want {
		t.Fatalf("copy: %v, want %v", got, want)
	}
	if a.node == nil {
		t.Fatal("the first copy did not parse its document")
	}
	b := r.Copy()
	if got := b.Pos("spec.ports[0].port"); got != want {
		t.Fatalf("second copy: %v, want %v", got, want)
	}
	if b.node != nil {
		t.Fatal("the second copy parsed the document again for a remembered position")
	}
	if b.Kind != r.Kind || b.Name != r.Name || b.File != r.File || b.index != 0 {
		t.Fatalf("copy identity: %+v", b)
	}
}

// TestCopySharesDerived: a value derived once is derived for the original
// and every copy; a resource never copied derives it on every call, and the
// bound on the keys holds.
func TestCopySharesDerived(t *testing.T) {
	calls := 0
	derive := func() any { calls++; return calls }
	lone := &Resource{Kind: "Service", Name: "a"}
	lone.Derived("k", derive)
	lone.Derived("k", derive)
	if calls != 2 {
		t.Fatalf("a resource never copied derived %d times in 2 calls, want 2", calls)
	}
	calls = 0
	r := &Resource{Kind: "Service", Name: "a"}
	a, b := r.Copy(), r.Copy()
	c := a.Copy()
	for _, x := range []*Resource{a, b, c, r} {
		if got := x.Derived("k", derive); got != 1 {
			t.Fatalf("derived %v, want the first value, 1", got)
		}
	}
	if got := b.Derived("other", derive); got != 2 || calls != 2 {
		t.Fatalf("another key: %v after %d calls, want 2 after 2", got, calls)
	}
	for i := range 3 * maxDerived {
		a.Derived(i, derive)
	}
	if n := len(r.derived.m); n > maxDerived {
		t.Fatalf("%d derived values kept, bound %d", n, maxDerived)
	}
}
