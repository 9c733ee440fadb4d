package graph

// ParseDocument exposes parseDocument to the external tests.
var ParseDocument = parseDocument

// AppendFQDN exposes appendFQDN to the external tests.
var AppendFQDN = appendFQDN
