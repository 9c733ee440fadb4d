package lookalike

import "testing"

func TestFindAndASCII(t *testing.T) {
	cases := []struct {
		name, describe, ascii string
	}{
		{"checkout", "", "checkout"},
		{"chеckout", "U+0435 CYRILLIC SMALL LETTER IE at position 3", "checkout"},
		{"check\u200bout", "U+200B ZERO WIDTH SPACE at position 6", "checkout"},
		{"ｃonfig", "U+FF43 FULLWIDTH LATIN SMALL LETTER C at position 1", "config"},
		{"a\tb", "U+0009 <control> at position 2", "a\tb"},
		{"日本", "U+65E5 <CJK Ideograph> at position 1, U+672C <CJK Ideograph> at position 2", ""}, // no ASCII look-alike
	}
	for _, c := range cases {
		if got := Describe(Find(c.name)); got != c.describe {
			t.Errorf("Describe(Find(%q)) = %q, want %q", c.name, got, c.describe)
		}
		if got := ASCII(c.name); got != c.ascii {
			t.Errorf("ASCII(%q) = %q, want %q", c.name, got, c.ascii)
		}
	}
}

func TestReference(t *testing.T) {
	if _, _, _, ok := Reference("checkout"); ok {
		t.Error("Reference of a plain ASCII name: ok")
	}
	msg, detail, ascii, ok := Reference("chеck\u200bout")
	if !ok || msg != "U+0435, U+200B" || ascii != "checkout" ||
		detail != `The name "chеck\u200bout" holds U+0435 CYRILLIC SMALL LETTER IE at position 3, U+200B ZERO WIDTH SPACE at position 6, which no name typed in ASCII matches.` {
		t.Errorf("Reference = %q, %q, %q, %v", msg, detail, ascii, ok)
	}
	if msg, _, _, _ := Reference("ｃｏｎｆｉｇ"); msg != "U+FF43, U+FF4F, …" {
		t.Errorf("Reference of six: codes %q, want the first two and …", msg)
	}
}
