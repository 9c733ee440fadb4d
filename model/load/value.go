package load

import (
	"go.yaml.in/yaml/v3"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
)

// maxDepth bounds nesting; deeper documents are treated like alias bombs.
const maxDepth = 5000

// converter turns yaml nodes into JSON-compatible data. Every node visited,
// aliases included, costs one unit of budget; when the budget runs out the
// result is nil, budget is negative and exhaustedAt is the outermost alias
// whose expansion ran out.
type converter struct {
	budget      int
	exhaustedAt *yaml.Node
	// tooDeep is set when the budget ran out because of nesting, not aliases.
	tooDeep bool
}

func (c *converter) value(n *yaml.Node, depth int) any {
	c.budget--
	if c.budget < 0 || depth > maxDepth {
		if c.budget >= 0 {
			c.tooDeep = true
		}
		c.budget = -1
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil
		}
		v := c.value(n.Alias, depth+1)
		if c.budget < 0 {
			c.exhaustedAt = n
		}
		return v
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			out = append(out, c.value(item, depth+1))
		}
		return out
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		// Merge keys first, so explicit keys override merged ones.
		for i := 0; i+1 < len(n.Content); i += 2 {
			if isMergeKey(n.Content[i]) {
				merge(out, c.value(n.Content[i+1], depth+1))
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if isMergeKey(k) {
				continue
			}
			out[keyString(k)] = c.value(n.Content[i+1], depth+1)
		}
		return out
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

func merge(dst map[string]any, src any) {
	switch s := src.(type) {
	case map[string]any:
		for k, v := range s {
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	case []any:
		for _, item := range s {
			merge(dst, item)
		}
	}
}

func keyString(k *yaml.Node) string {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	return k.Value
}

// scalar resolves a scalar by its (implicit or explicit) tag, as a JSON decoder
// would see the value after YAML-to-JSON conversion; the conversion is shared
// with the fast decoder.
func scalar(n *yaml.Node) any {
	return fastyaml.Scalar(fastyaml.NodeTag(n), n.Value)
}

// aliasUse is one alias as written in a document and the nodes its
// expansion adds.
type aliasUse struct {
	node *yaml.Node
	adds int
}

// expansion measures, without expanding anything, what converting a
// document visits: the same count as converter.value (values, not keys; an
// alias is one node plus its target expanded). Anchored nodes are measured
// once, so the measure is linear in the document as written however large
// the expansion; sizes saturate at sizeCap instead of overflowing.
type expansion struct {
	memo map[*yaml.Node]int
	busy map[*yaml.Node]bool // anchored nodes being measured
	// recursive is an alias to a node that contains it, whose expansion
	// never ends.
	recursive *yaml.Node
}

const sizeCap = 1 << 61

func satAdd(a, b int) int { return min(a+b, sizeCap) }

// measure returns the nodes the document's own tree holds (aliases counted
// as one node) and every alias of that tree in document order with what it
// adds.
func (e *expansion) measure(body *yaml.Node) (own int, uses []aliasUse) {
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		own++
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1])
			}
		case yaml.AliasNode:
			if n.Alias != nil {
				uses = append(uses, aliasUse{node: n, adds: e.size(n.Alias)})
			}
		}
	}
	walk(body)
	return own, uses
}

// size is the nodes the converter visits for n, aliases expanded.
func (e *expansion) size(n *yaml.Node) int {
	if n.Anchor != "" {
		if v, ok := e.memo[n]; ok {
			return v
		}
		if e.busy[n] {
			return sizeCap // recursive; measure's caller reports it
		}
		if e.memo == nil {
			e.memo, e.busy = map[*yaml.Node]int{}, map[*yaml.Node]bool{}
		}
		e.busy[n] = true
		defer delete(e.busy, n)
	}
	total := 1
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			total = satAdd(total, e.size(n.Content[0]))
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			total = satAdd(total, e.size(c))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			total = satAdd(total, e.size(n.Content[i+1]))
		}
	case yaml.AliasNode:
		if n.Alias != nil {
			if e.busy[n.Alias] && e.recursive == nil {
				e.recursive = n
			}
			total = satAdd(total, e.size(n.Alias))
		}
	}
	if n.Anchor != "" {
		e.memo[n] = total
	}
	return total
}
