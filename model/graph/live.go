package graph

import "strings"

// LivePrefix starts the file name of an object read from a running cluster
// rather than from a file: cluster:Kind/namespace/name (cluster:Kind/name
// when cluster-scoped). Such names sort after every file (LessFile), so
// that a rule that reports a pair once, on the first object, reports it on
// the local one when the other is live.
const LivePrefix = "cluster:"

// LiveFile is the file name of a live object.
func LiveFile(kind, namespace, name string) string {
	if namespace == "" {
		return LivePrefix + kind + "/" + name
	}
	return LivePrefix + kind + "/" + namespace + "/" + name
}

// IsLive reports whether a file name is a live object's (LiveFile).
func IsLive(file string) bool { return strings.HasPrefix(file, LivePrefix) }

// LessFile orders file names: files by name, then live objects by name.
func LessFile(a, b string) bool {
	if la, lb := IsLive(a), IsLive(b); la != lb {
		return lb
	}
	return a < b
}
