package graph

// ParseDocument exposes parseDocument to the external tests.
var ParseDocument = parseDocument

// NewSerial is New building every index on the caller's goroutine, as it
// does for a small bundle.
func NewSerial(defaultNamespace string, resources []*Resource, files []*File, problems []Problem) *Graph {
	return newGraph(defaultNamespace, resources, files, problems, false)
}
