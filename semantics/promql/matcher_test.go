package promql

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// matcherRE is the regular expression matcherAt stands for.
var matcherRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*|"(?:[^"\\]|\\.)*")\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`" + `)\s*,?`)

func checkMatcherAt(t *testing.T, s string) {
	t.Helper()
	want := matcherRE.FindStringSubmatchIndex(s)
	got, ok := matcherAt(s)
	if want == nil {
		if ok {
			t.Fatalf("matcherAt(%q) = %v, the regular expression does not match", s, got)
		}
		return
	}
	if !ok || [8]int(want) != got {
		t.Fatalf("matcherAt(%q) = %v, %v; the regular expression gives %v", s, got, ok, want)
	}
}

func TestMatcherAtIsTheRegularExpression(t *testing.T) {
	for _, s := range []string{
		``, ` `, `a`, `a=`, `a="x"`, ` a = "x" , b="y"`, `a=~"5.."}`, `a!~'x'`, `a!="x\"y"`, "a=`x\ny`,",
		`"utf8.name"="v"`, `"a\"b"!="v"`, `_a9="v"`, `9a="v"`, `a=x`, `a=="x"`, `a="x`, `a="x\`, "a=\"x\\\ny\"",
		"a=\"x\ny\"", `a='x"y'`, `a="x'y"`, "a=`x", `a = "é\xff"`, "\t\r\n\fa\f=\f\"v\"\f,", `a="v",,`, `a~="v"`,
		`a!"v"`, `a=!"v"`, `é="v"`, `"é\é"="v"`, `a="\é"`,
	} {
		checkMatcherAt(t, s)
	}
	// Random texts over the characters that matter.
	const alphabet = "ab_Z9 \t\n\r\f=!~\"'`\\,{}é\xff"
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200000; n++ {
		b := make([]byte, r.IntN(14))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		checkMatcherAt(t, string(b))
	}
}

func FuzzMatcherAt(f *testing.F) {
	f.Add(` a = "x" , b="y"`)
	f.Add("a=`x\ny`,")
	f.Fuzz(func(t *testing.T, s string) { checkMatcherAt(t, s) })
}
