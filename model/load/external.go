package load

import (
	"bytes"
	"fmt"
	"io/fs"

	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// This file serves the files another YAML reader parses: kustomize reads a
// unit's resources, patches and kustomizations itself, with none of the
// loader's bounds and with its own idea of a document.

// SpecialFile names a file type that is not a regular file or a directory
// ("named pipe", "socket", "character device", ...), or "". A directory walk
// skips such files (RL0011 "not linted: named pipe"): a named pipe blocks
// its reader until something writes to it.
func SpecialFile(mode fs.FileMode) string {
	if mode.IsDir() {
		return ""
	}
	return special(mode.Type())
}

// Text is a file's text as the loader reads it: UTF-16 (with its byte-order
// mark) transcoded to UTF-8, a UTF-8 byte-order mark dropped and lone CR
// line breaks made LF, every line and column kept. ok is false when the
// bytes are not valid in their encoding (UTF-32, broken UTF-16).
func Text(data []byte) (text []byte, ok bool) {
	text, _, msg := decodeText(data)
	return text, msg == ""
}

// HasLoneCR reports whether data has a CR not followed by LF: a line break
// to YAML (and to Text), none to a reader that cuts at LF bytes.
func HasLoneCR(data []byte) bool { return firstLoneCR(data) >= 0 }

// DocumentStart is where a document of a file starts (the line of its `---`
// marker, if it has one), and whether it names apiVersion and kind.
type DocumentStart struct {
	Line     int
	Manifest bool
}

// Documents cuts a file into its YAML documents as the loader does (after
// Text), without parsing them. ok is false as for Text.
func Documents(data []byte) (docs []DocumentStart, ok bool) {
	text, ok := Text(data)
	if !ok {
		return nil, false
	}
	for _, c := range splitDocuments(text) {
		docs = append(docs, DocumentStart{Line: c.line, Manifest: looksLikeManifest(c.data)})
	}
	return docs, true
}

// AliasProblem is what the loader reports for a file whose YAML aliases it
// would not expand: an alias that refers to a node containing it, or the
// aliases of the file, all its documents together, adding more than limit
// nodes (limit <= 0: DefaultMaxAliasNodes). It measures without expanding
// anything, keys included (kustomize expands an alias wherever it is). It
// is nil when the file is within the limit, has no alias, or does not
// parse (whose reader reports that).
func AliasProblem(path string, data []byte, limit int) *graph.Problem {
	if limit <= 0 {
		limit = DefaultMaxAliasNodes
	}
	// An alias needs an anchor: most files have neither character.
	if bytes.IndexByte(data, '*') < 0 || bytes.IndexByte(data, '&') < 0 {
		return nil
	}
	text, ok := Text(data)
	if !ok {
		return nil
	}
	used := 0
	for _, c := range splitDocuments(text) {
		var root yaml.Node
		if err := yaml.Unmarshal(c.data, &root); err != nil {
			continue
		}
		shiftLines(&root, c.line-1)
		if n := selfAlias(&root); n != nil {
			return &graph.Problem{RuleID: RuleLimit, Pos: graph.NodePos(path, n),
				Message: "a YAML alias refers to a node that contains it",
				Detail:  "Its expansion never ends."}
		}
		var ex expansion
		var over *yaml.Node
		walkAll(&root, func(n *yaml.Node) bool {
			if n.Kind == yaml.AliasNode && n.Alias != nil {
				if used = satAdd(used, ex.size(n.Alias)); used > limit && over == nil {
					over = n
				}
			}
			return over == nil
		})
		if over != nil {
			return &graph.Problem{RuleID: RuleLimit, Pos: graph.NodePos(path, over),
				Message: fmt.Sprintf("YAML aliases in this file expand to more than %d nodes, the limit per file", limit),
				Detail:  "An alias bomb? Expanding them would take that many nodes of memory and time."}
		}
	}
	return nil
}

// walkAll visits n and every node below it, keys included, in document
// order, without following aliases, until visit returns false.
func walkAll(n *yaml.Node, visit func(*yaml.Node) bool) bool {
	if !visit(n) {
		return false
	}
	for _, c := range n.Content {
		if !walkAll(c, visit) {
			return false
		}
	}
	return true
}

// selfAlias is the first alias below n that refers to a node containing it
// (`a: &a [*a]`, or `&a {*a: 1}`, which the loader's measure, reading only
// values, would not see), or nil.
func selfAlias(n *yaml.Node) *yaml.Node {
	open := map[*yaml.Node]bool{} // the anchored nodes being walked
	var walk func(*yaml.Node) *yaml.Node
	walk = func(n *yaml.Node) *yaml.Node {
		if n.Kind == yaml.AliasNode {
			if open[n.Alias] {
				return n
			}
			return nil
		}
		if n.Anchor != "" {
			open[n] = true
			defer delete(open, n)
		}
		for _, c := range n.Content {
			if bad := walk(c); bad != nil {
				return bad
			}
		}
		return nil
	}
	return walk(n)
}
