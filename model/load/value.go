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
	return fastyaml.Scalar(n.ShortTag(), n.Value)
}
