package kinds

import (
	"strconv"
	"strings"
)

// fieldPath is the path of the node a schema walk is at: the rendered path of
// the walk's root and one link per level below it. Links are appended as the
// walk descends (siblings reuse the same slots), and the path is rendered only
// when a problem is reported, so clean documents build no path strings.
type fieldPath struct {
	root  string
	links []pathLink
}

// pathLink is one step: a key, or a list index when key is not set.
type pathLink struct {
	key   string
	index int
	isKey bool
}

// maxInlineDepth is how deep a walk goes before its links spill to the heap.
const maxInlineDepth = 48

// key is the path to the value of key k below p.
func (p fieldPath) key(k string) fieldPath {
	p.links = append(p.links, pathLink{key: k, isKey: true})
	return p
}

// at is the path to list item i below p.
func (p fieldPath) at(i int) fieldPath {
	p.links = append(p.links, pathLink{index: i})
	return p
}

// String renders the path, such as `spec.http[0].route` or
// `metadata.labels["app.kubernetes.io/name"]`.
func (p fieldPath) String() string {
	b := []byte(p.root)
	for _, l := range p.links {
		switch {
		case !l.isKey:
			b = append(strconv.AppendInt(append(b, '['), int64(l.index), 10), ']')
		case strings.ContainsAny(l.key, ".[]\"' /") || l.key == "":
			b = append(strconv.AppendQuote(append(b, '['), l.key), ']')
		default:
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, l.key...)
		}
	}
	return string(b)
}
