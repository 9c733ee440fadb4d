package graph

import (
	"bytes"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// A document of one line is parsed split (see parseDocument) when it is
// between minSplitLine and maxSplitLine bytes: shorter ones gain nothing,
// and on longer ones the saving is outweighed by yaml.v3's cost per line
// (a 16 KB Rollout: 1.3 ms as written, 2.0 ms split; 4 KB: 0.56 and 0.38).
const (
	minSplitLine = 256
	maxSplitLine = 8 << 10
)

// parseDocument parses a document into its node tree, as yaml.Unmarshal
// does. A document of one long line of JSON (what the API server sends the
// webhook, and `kubectl get -o json | jq -c` writes) costs yaml.v3 about
// twice the time and three times the bytes of the same text over many lines:
// it queues the tokens of a line of flow content. Such a document is parsed
// with a line break after every '{', '[' and ',' outside strings (YAML flow
// content may span lines; nothing else changes), and its nodes are then
// given the line and columns of the text as written, so positions are the
// ones the single line gives (a test holds the trees to each other).
func parseDocument(data []byte, doc *yaml.Node) error {
	split, starts := splitLine(data)
	if split == nil {
		return yaml.Unmarshal(data, doc)
	}
	if err := yaml.Unmarshal(split, doc); err != nil {
		*doc = yaml.Node{}
		return yaml.Unmarshal(data, doc)
	}
	// runes[i]: the characters of data before output line i+1.
	runes := make([]int, len(starts))
	prev, n := 0, 0
	for i, off := range starts {
		n += utf8.RuneCount(data[prev:off])
		runes[i], prev = n, off
	}
	stack := []*yaml.Node{doc}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur.Line >= 1 && cur.Line <= len(runes) {
			cur.Column += runes[cur.Line-1]
			cur.Line = 1
		}
		stack = append(stack, cur.Content...)
	}
	return nil
}

// splitLine returns data with a line break after every '{', '[' and ','
// outside strings, and the offset in data where each output line starts;
// nil when data is not one line of JSON-like flow text of a size worth it
// (a line break, carriage return or tab anywhere, or not starting with '{').
func splitLine(data []byte) ([]byte, []int) {
	if len(data) < minSplitLine || len(data) > maxSplitLine || data[0] != '{' || bytes.ContainsAny(data, "\n\r\t") {
		return nil, nil
	}
	out := make([]byte, 0, len(data)+len(data)/8)
	starts := make([]int, 1, len(data)/16+1)
	inString, escaped := false, false
	for i, c := range data {
		out = append(out, c)
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[' || c == ',':
			if i+1 < len(data) {
				out = append(out, '\n')
				starts = append(starts, i+1)
			}
		}
	}
	return out, starts
}
