package render

import (
	"bytes"
	"fmt"

	"github.com/rolloutlint/rolloutlint/model/load"
)

// kustomize cuts a resource file into documents at `---` lines that follow
// a line feed byte, then reads only the first document of each piece
// (kyaml's ByteReader). A UTF-16 file has no such byte sequence, and a file
// with lone CR line ends has no line feed: kustomize builds the first
// document of either and silently drops the others, which `kubectl apply
// -k` and Argo CD then never deploy. rolloutlint lints what kustomize
// builds, so without a finding those documents were neither deployed nor
// linted, and a lint of the directory passed.

// droppedDocuments is, for a file kustomize reads as resources, the line of
// the first manifest document kustomize does not build, how many it does
// not build, and why (0, 0, "" when it builds them all).
func droppedDocuments(raw []byte) (line, n int, why string) {
	utf16 := bytes.HasPrefix(raw, []byte{0xff, 0xfe}) || bytes.HasPrefix(raw, []byte{0xfe, 0xff})
	if !utf16 && !load.HasLoneCR(raw) {
		return 0, 0, ""
	}
	docs, ok := load.Documents(raw)
	if !ok || len(docs) < 2 {
		return 0, 0, ""
	}
	// Where kustomize's pieces start, in the lines the loader counts (a
	// CRLF, a lone CR and a LF are one line break each).
	starts := []int{1}
	why = "it is UTF-16"
	if !utf16 {
		why = "its lines end in CR alone"
		s := bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
		ln := 1
		for i, b := range s {
			switch b {
			case '\r':
				ln++
			case '\n':
				ln++
				if rest := s[i+1:]; bytes.HasPrefix(rest, []byte("---")) && bytes.IndexByte(rest, '\n') >= 0 {
					starts = append(starts, ln)
				}
			}
		}
	}
	piece, kept := 0, false
	for _, d := range docs {
		for piece+1 < len(starts) && d.Line >= starts[piece+1] {
			piece, kept = piece+1, false
		}
		if !d.Manifest {
			continue
		}
		if !kept {
			kept = true
			continue
		}
		if n == 0 {
			line = d.Line
		}
		n++
	}
	return line, n, why
}

// droppedMessage is the finding's message and detail for droppedDocuments'
// result.
func droppedMessage(n int, why string) (msg, detail string) {
	msg = "kustomize does not build this document: " + why
	if n > 1 {
		msg = fmt.Sprintf("kustomize does not build this document, nor %d more of the file: %s", n-1, why)
	}
	detail = "kustomize cuts a file into documents only at --- lines that follow a line feed byte and reads the first " +
		"document of each piece, so kubectl apply -k and Argo CD deploy none of these objects, and they are not linted. " +
		"Save the file as UTF-8 with LF (or CRLF) line ends."
	return msg, detail
}
