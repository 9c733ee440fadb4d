package graph

// ParseDocument exposes parseDocument to the external tests.
var ParseDocument = parseDocument
