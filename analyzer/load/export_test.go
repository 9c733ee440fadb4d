package load

import "go.yaml.in/yaml/v3"

// ConvertNode exposes the loader's node-to-value conversion to the external
// tests: the generic value the fast path would decode for n, and false when
// the conversion ran out of budget.
func ConvertNode(n *yaml.Node) (any, bool) {
	c := converter{budget: 1 << 16}
	v := c.value(n, 0)
	return v, c.budget >= 0
}

// SplitDocuments exposes the document splitter: the chunks of a stream.
func SplitDocuments(data []byte) [][]byte {
	var out [][]byte
	for _, c := range splitDocuments(data) {
		out = append(out, c.data)
	}
	return out
}
