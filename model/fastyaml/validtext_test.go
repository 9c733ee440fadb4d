package fastyaml

import (
	"encoding/binary"
	"testing"
)

// validTextByByte is validText without the eight-byte fast path.
func validTextByByte(data []byte) bool {
	for i := 0; i < len(data); {
		var ok bool
		if i, ok = validStep(data, i); !ok {
			return false
		}
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
