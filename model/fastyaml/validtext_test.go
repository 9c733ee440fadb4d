package fastyaml

import (
	"encoding/binary"
	"testing"
	"unicode/utf8"
)

// validTextByByte is validText without the eight-byte fast path.
func validTextByByte(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c >= 0x20 && c < 0x7f || c == '\n' {
			i++
			continue
		}
		if c == '\r' {
			if i+1 < len(data) && data[i+1] == '\n' {
				i += 2
				continue
			}
			return false
		}
		if c < 0x80 {
			return false
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		switch {
		case r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFEFF, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			return false
		}
		i += size
	}
	return true
}

// TestPlainWordIsExactPerByte checks plainWord against the byte rule for
// every byte value at every position of a word of plain bytes.
func TestPlainWordIsExactPerByte(t *testing.T) {
	for _, fill := range []byte{' ', 'a', '~', '\n', '0'} {
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				var b [8]byte
				for i := range b {
					b[i] = fill
				}
				b[pos] = byte(c)
				want := c >= 0x20 && c < 0x7f || c == '\n'
				if got := plainWord(binary.LittleEndian.Uint64(b[:])); got != want {
					t.Fatalf("plainWord(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

func FuzzValidText(f *testing.F) {
	for _, s := range []string{"apiVersion: v1\nkind: Service\r\n", "a\tb", "caf\u00e9: x\n", "x\u2028y", "\x7fabcdefgh", "abcdefg\r", "abcdefgh\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validText(data), validTextByByte(data); got != want {
			t.Errorf("validText(%q) = %v, byte by byte %v", data, got, want)
		}
	})
}
