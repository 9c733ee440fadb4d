package ruletest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/rules"
)

func TestNamesAreReadFromTheTestdata(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.yaml")
	src := "metadata: {name: checkout, namespace: shop}\nspec:\n  stableService: checkout-stable\n" +
		"  http:\n  - name: primary\n    route:\n    - destination: {host: reviews.prod, subset: canary}\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := Names([]string{f})
	for _, n := range []string{"checkout", "shop", "checkout-stable", "primary", "reviews.prod", "canary"} {
		if !got[n] {
			t.Errorf("%s is not among the names %v", n, got)
		}
	}
	if got["http"] || got["spec"] {
		t.Errorf("a key is taken for a name: %v", got)
	}
}

func TestMessageWidthLeavesNamesOut(t *testing.T) {
	names := map[string]bool{"checkout": true, "shop": true, "reviews": true, "stable": true}
	for _, c := range []struct {
		msg, shown string
	}{
		{`Service shop/checkout is also used by Rollout shop/cart`, `Service x is also used by Rollout shop/cart`},
		{`Rollout checkout's pods have "a very long quoted value"`, `Rollout x's pods have ""`},
		{"host reviews.shop.svc.cluster.local/stable of `query`", "host x of ``"},
	} {
		w, shown := MessageWidth(c.msg, names)
		if shown != c.shown || w != len([]rune(c.shown)) {
			t.Errorf("MessageWidth(%q) = %d, %q; want %q", c.msg, w, shown, c.shown)
		}
	}
}

func TestCheckMessage(t *testing.T) {
	names := map[string]bool{"checkout": true}
	long := "step 4: setWeight 120 is outside 0..100 " + strings.Repeat("and Argo Rollouts marks the Rollout InvalidSpec ", 2)
	for _, c := range []struct {
		d    rules.Diagnostic
		want string // a problem containing this, or "" for none
	}{
		{rules.Diagnostic{RuleID: "RL1001", Message: "step 4: setWeight 120 is outside 0..100", Detail: "Argo Rollouts marks the Rollout InvalidSpec."}, ""},
		{rules.Diagnostic{RuleID: "RL1001", Message: long}, "characters without its names"},
		{rules.Diagnostic{RuleID: "RL1001", Message: "Rollout " + strings.Repeat("checkout/checkout ", 20) + "is wrong"}, ""},
		{rules.Diagnostic{RuleID: "RL0009", Message: long}, ""},
		{rules.Diagnostic{RuleID: "RL1001", Message: "step 4: setWeight 120 is outside 0..100."}, "ends with a period"},
		{rules.Diagnostic{RuleID: "RL1001", Message: "step 4:\nsetWeight"}, "more than one line"},
		{rules.Diagnostic{RuleID: "RL1001", Message: "step 4", Detail: "Argo Rollouts marks it InvalidSpec"}, "detail does not end"},
	} {
		got := strings.Join(CheckMessage(&c.d, names), "; ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("CheckMessage(%q, %q) = %q, want %q", c.d.Message, c.d.Detail, got, c.want)
		}
	}
}
