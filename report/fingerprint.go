package report

import (
	"strconv"
	"unicode/utf16"
)

// GitHub code scanning identifies an alert across commits by
// partialFingerprints.primaryLocationLineHash. github/codeql-action computes it
// for SARIF uploaded from Actions; uploads from elsewhere must carry it. The
// value is a polynomial rolling hash (base 37, 64-bit wrap-around) over a
// window of the next 100 characters starting at the line, where spaces and
// tabs are skipped and CR, LF and CRLF all count as one LF. Characters are
// UTF-16 code units, as JavaScript strings see them. The file's end adds one
// 0xFFFF character and the window is then padded with zeros. A hash seen n
// times before in the same file gets the suffix ":n+1".
const (
	hashWindow = 100
	hashBase   = 37
	hashEOF    = 0xFFFF
)

// LineHashes returns the primaryLocationLineHash of every line of src, indexed
// by line number minus one.
func LineHashes(src []byte) []string {
	var firstMod uint64 = 1
	for i := 0; i < hashWindow; i++ {
		firstMod *= hashBase
	}
	var (
		window      [hashWindow]uint64
		lineNumbers [hashWindow]int // line starting at this window slot, or 0
		hash        uint64
		index       int
		line        int
		lineStart   = true
		prevCR      bool
		counts      = map[uint64]int{}
		out         []string
	)
	emit := func() {
		counts[hash]++
		n := lineNumbers[index]
		for len(out) < n {
			out = append(out, "")
		}
		out[n-1] = strconv.FormatUint(hash, 16) + ":" + strconv.Itoa(counts[hash])
		lineNumbers[index] = 0
	}
	update := func(c uint64) {
		begin := window[index]
		window[index] = c
		hash = hashBase*hash + c - firstMod*begin
		index = (index + 1) % hashWindow
	}
	process := func(c uint16) {
		if c == ' ' || c == '\t' || (prevCR && c == '\n') {
			prevCR = false
			return
		}
		if c == '\r' {
			c = '\n'
			prevCR = true
		} else {
			prevCR = false
		}
		if lineNumbers[index] != 0 {
			emit()
		}
		if lineStart {
			lineStart = false
			line++
			lineNumbers[index] = line
		}
		if c == '\n' {
			lineStart = true
		}
		update(uint64(c))
	}
	var units [2]uint16
	for _, r := range string(src) { // invalid UTF-8 becomes U+FFFD, as Node's decoder does
		if r1, r2 := utf16.EncodeRune(r); r1 != '\uFFFD' || r2 != '\uFFFD' {
			units[0], units[1] = uint16(r1), uint16(r2)
			process(units[0])
			process(units[1])
			continue
		}
		process(uint16(r))
	}
	process(hashEOF)
	for i := 0; i < hashWindow; i++ {
		if lineNumbers[index] != 0 {
			emit()
		}
		update(0)
	}
	return out
}
