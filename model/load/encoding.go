package load

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeText turns a file's bytes into the UTF-8 text with LF or CRLF line
// ends that the document splitter, both YAML paths and the directive scanner
// read. YAML allows UTF-16 (with a byte-order mark) and lone CR line breaks;
// cutting such a file at "\n" bytes found one document where there were
// several, so a bad object after the first passed unlinted. Transcoding
// keeps every line and every character's column, so positions are those an
// editor shows in the original file. It returns the text, or a problem's
// line and message when the bytes are not valid in their encoding.
func decodeText(data []byte) (text []byte, badLine int, msg string) {
	switch {
	case bytes.HasPrefix(data, []byte{0, 0, 0xfe, 0xff}), bytes.HasPrefix(data, []byte{0xff, 0xfe, 0, 0}):
		return nil, 1, "the file is UTF-32, which YAML parsers do not read: save it as UTF-8"
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}):
		text, badLine, msg = fromUTF16(data[2:], binary.LittleEndian)
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		text, badLine, msg = fromUTF16(data[2:], binary.BigEndian)
	default:
		text = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
	}
	if msg != "" {
		return nil, badLine, msg
	}
	return crToLF(text), 0, ""
}

// fromUTF16 transcodes UTF-16 without its byte-order mark to UTF-8. An odd
// byte count or a surrogate without its pair is reported at its line.
func fromUTF16(b []byte, order binary.ByteOrder) ([]byte, int, string) {
	out := make([]byte, 0, len(b)/2*3/2+4)
	line := 1
	for i := 0; i+1 < len(b); i += 2 {
		u := order.Uint16(b[i:])
		r := rune(u)
		if utf16.IsSurrogate(r) {
			if u >= 0xdc00 || i+3 >= len(b) {
				return nil, line, fmt.Sprintf("invalid UTF-16: an unpaired surrogate (0x%04X)", u)
			}
			lo := order.Uint16(b[i+2:])
			if r = utf16.DecodeRune(r, rune(lo)); r == utf8.RuneError {
				return nil, line, fmt.Sprintf("invalid UTF-16: an unpaired surrogate (0x%04X)", u)
			}
			i += 2
		}
		if r == '\n' {
			line++
		}
		out = utf8.AppendRune(out, r)
	}
	if len(b)%2 != 0 {
		return nil, line, "invalid UTF-16: the file ends in the middle of a character (an odd number of bytes)"
	}
	return out, 0, ""
}

// crToLF turns each CR that is not followed by LF into LF. YAML reads a lone
// CR as a line break and normalises breaks in scalars to LF, so the documents
// are unchanged; CRLF is left alone (both paths read it).
func crToLF(text []byte) []byte {
	i := firstLoneCR(text)
	if i < 0 {
		return text
	}
	out := bytes.Clone(text)
	for j := i; j < len(out); j++ {
		if out[j] == '\r' && (j+1 == len(out) || out[j+1] != '\n') {
			out[j] = '\n'
		}
	}
	return out
}

// firstLoneCR is the index of the first CR not followed by LF, or -1.
func firstLoneCR(text []byte) int {
	i := bytes.IndexByte(text, '\r')
	for ; i >= 0 && i+1 < len(text) && text[i+1] == '\n'; i = nextCR(text, i+2) {
	}
	return i
}

// nextCR is the index of the next CR at or after from, or -1.
func nextCR(text []byte, from int) int {
	if from >= len(text) {
		return -1
	}
	if j := bytes.IndexByte(text[from:], '\r'); j >= 0 {
		return from + j
	}
	return -1
}
