package report

import (
	"strings"
	"testing"
)

// The expected values are the published test vectors of github/codeql-action's
// fingerprint tests, so a match means GitHub computes the same hashes.
func TestLineHashesMatchGitHub(t *testing.T) {
	ending := []string{"e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1", "e20e36e16fcb0cc8:1",
		"b3edc88f2938467e:1", "c8e28b0b4002a3a0:1", "c129715d7a2bc9a3:1"}
	cases := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", []string{"c129715d7a2bc9a3:1"}},
		{"indents", " a\nb\n  \t\tc\n d", []string{"271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"}},
		{"no final newline", " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
			[]string{"8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1", "c6805c5e1288b612:1", "b86d3392aea1be30:1", "e6ceba753e1a442:1"}},
		{"LF", " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n", ending},
		{"CR", " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r", ending},
		{"CRLF", " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n", ending},
		{"mixed", " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n", ending},
		{"repeated lines", strings.Repeat("Lorem ipsum dolor sit amet.\n", 10), []string{
			"a7f2ff13bc495cf2:1", "a7f2ff13bc495cf2:2", "a7f2ff13bc495cf2:3", "a7f2ff13bc495cf2:4",
			"a7f2ff13bc495cf2:5", "a7f2ff13bc495cf2:6", "a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1",
			"55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1", "c129715d7a2bc9a3:1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := LineHashes([]byte(c.in))
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("LineHashes(%q)\n got %v\nwant %v", c.in, got, c.want)
			}
		})
	}
}

// Characters outside the BMP count as two UTF-16 units, as in JavaScript; the
// hash of a line must change when such a character is replaced by a BMP one.
func TestLineHashesAstral(t *testing.T) {
	a := LineHashes([]byte("name: 🚀\n"))
	b := LineHashes([]byte("name: é\n"))
	if len(a) != 2 || len(b) != 2 || a[0] == b[0] {
		t.Fatalf("astral %v vs BMP %v", a, b)
	}
}
