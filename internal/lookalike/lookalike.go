// Package lookalike finds the characters of a name that only look like ASCII
// (homoglyphs such as a Cyrillic е, zero-width spaces), names them, and gives
// the ASCII name they imitate: for findings on such names, and on references
// that resolve to nothing because of them.
package lookalike

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/runenames"
)

// Char is a character of a name that is not printable ASCII.
type Char struct {
	Rune rune
	// Pos is its position in the name, in characters from 1, as an editor's
	// column counts.
	Pos int
}

// String names the character: U+0435 CYRILLIC SMALL LETTER IE at position 3.
func (c Char) String() string {
	return fmt.Sprintf("%U %s at position %d", c.Rune, runenames.Name(c.Rune), c.Pos)
}

// Find lists the characters of name that are not printable ASCII: every
// non-ASCII character (a homoglyph, an invisible format character) and the
// ASCII control characters. It is nil for a plain ASCII name.
func Find(name string) []Char {
	var out []Char
	pos := 0
	for _, c := range name {
		pos++
		if c >= utf8.RuneSelf || c < ' ' || c == 0x7f {
			out = append(out, Char{Rune: c, Pos: pos})
		}
	}
	return out
}

// Describe lists chars for a message or a detail: "U+0435 CYRILLIC SMALL
// LETTER IE at position 3, U+200B ZERO WIDTH SPACE at position 6".
func Describe(chars []Char) string {
	s := make([]string, len(chars))
	for i, c := range chars {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}

// ASCII is the ASCII name a name imitates: invisible format characters
// (zero-width spaces and joiners, soft hyphens, byte-order marks) dropped,
// every other non-ASCII character replaced by the ASCII it is confusable
// with (Unicode TR39 confusables, accents stripped), and upper case lowered.
// It is "" when a character has no ASCII look-alike.
func ASCII(name string) string {
	var b strings.Builder
	for _, c := range name {
		switch {
		case c < utf8.RuneSelf:
			b.WriteRune(unicode.ToLower(c))
		case unicode.Is(unicode.Cf, c):
		default:
			i, ok := slices.BinarySearchFunc(asciiTable[:], c, func(a asciiOf, c rune) int { return int(a.r - c) })
			if !ok {
				return ""
			}
			b.WriteString(asciiTable[i].s)
		}
	}
	return b.String()
}

// asciiOf is an entry of asciiTable: a character and the ASCII it looks like.
type asciiOf struct {
	r rune
	s string
}

// Reference is what a finding about a reference that resolves to nothing
// says when the referenced name holds characters Find lists: the first two's
// code points for the message ("U+0435", "U+0435, U+200B, …": messages stay
// short), a detail sentence naming them all, and the ASCII name the
// reference imitates ("" when it imitates none), for the rule to look up as
// the object meant. ok is false for a plain ASCII name.
func Reference(name string) (codes, detail, ascii string, ok bool) {
	chars := Find(name)
	if len(chars) == 0 {
		return "", "", "", false
	}
	var b strings.Builder
	for i, c := range chars {
		if i == 2 {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%U", c.Rune)
	}
	detail = fmt.Sprintf("The name %q holds %s, which no name typed in ASCII matches.", name, Describe(chars))
	if ascii = ASCII(name); ascii == name {
		ascii = ""
	}
	return b.String(), detail, ascii, true
}
