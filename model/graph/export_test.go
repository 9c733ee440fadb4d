package graph

// ParseDocument exposes parseDocument to the external tests.
var ParseDocument = parseDocument

// AppendFQDN exposes appendFQDN to the external tests.
var AppendFQDN = appendFQDN

// NewSerial is New building every index on the caller's goroutine, as it
// does for a small bundle.
func NewSerial(defaultNamespace string, resources []*Resource, files []*File, problems []Problem) *Graph {
	return newGraph(defaultNamespace, resources, files, problems, false)
}
