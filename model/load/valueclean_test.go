package load_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
)

// These tests hold kinds.GoClean/ProtoClean (the schema check over generic
// values) against kinds.CheckGo/CheckProto (the walk over yaml nodes the
// loader runs today), on the same documents decoded both ways.

// schemaDoc is one known-kind document as a node and as the value the loader's
// converter makes of it.
type schemaDoc struct {
	where string
	kind  *kinds.Kind
	t     reflect.Type
	spec  protoreflect.MessageDescriptor // nil for kinds without a proto spec
	node  *yaml.Node
	value map[string]any
}

// slow returns what the node walks report, as the loader runs them.
func (d schemaDoc) slow() []string {
	var out []string
	report := func(p kinds.FieldProblem) { out = append(out, p.Path+": "+p.Message) }
	kinds.CheckGo(d.t, d.node, "", report)
	if d.spec != nil {
		if spec := childOf(d.node, "spec"); spec != nil {
			kinds.CheckProto(d.spec, spec, "spec", report)
		}
	}
	return out
}

// fast is the value walks' verdict, through the entry point the loader uses.
func (d schemaDoc) fast() bool {
	return d.kind.SchemaClean(d.value)
}

func childOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			n := m.Content[i+1]
			if n.Kind == yaml.AliasNode {
				n = n.Alias
			}
			return n
		}
	}
	return nil
}

// docsOf parses every document of a stream and returns the known-kind ones,
// `kind: List` items included.
func docsOf(where string, data []byte) []schemaDoc {
	var out []schemaDoc
	for i, chunk := range load.SplitDocuments(data) {
		var root yaml.Node
		if yaml.Unmarshal(chunk, &root) != nil || len(root.Content) == 0 {
			continue
		}
		out = append(out, known(fmt.Sprintf("%s#%d", where, i), root.Content[0])...)
	}
	return out
}

func known(where string, n *yaml.Node) []schemaDoc {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	v, ok := load.ConvertNode(n)
	obj, isMap := v.(map[string]any)
	if !ok || !isMap {
		return nil
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if items, ok := obj["items"].([]any); ok && strings.HasSuffix(kind, "List") {
		var out []schemaDoc
		if in := childOf(n, "items"); in != nil && in.Kind == yaml.SequenceNode && len(in.Content) == len(items) {
			for i, item := range in.Content {
				out = append(out, known(fmt.Sprintf("%s.items[%d]", where, i), item)...)
			}
		}
		return out
	}
	group, version := "", apiVersion
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		group, version = apiVersion[:i], apiVersion[i+1:]
	}
	k := kinds.Lookup(group, kind)
	if k == nil || k.New == nil || !k.SupportsVersion(version) {
		return nil
	}
	typed := k.New()
	d := schemaDoc{where: where + " " + kind, kind: k, t: reflect.TypeOf(typed), node: n, value: obj}
	if k.Spec != nil {
		d.spec = k.Spec(typed).ProtoReflect().Descriptor()
	}
	return []schemaDoc{d}
}

// outsideContract names the node detail a generic value cannot show (see
// kinds.GoClean), or returns "".
func outsideContract(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Style&yaml.TaggedStyle != 0 {
			switch n.ShortTag() {
			case "!!str", "!!binary", "!!timestamp", "!!bool", "!!null":
			default:
				return "explicit tag " + n.Tag
			}
		}
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			switch {
			case k.Kind == yaml.AliasNode:
				return "alias as a key"
			case k.ShortTag() == "!!merge":
				return "merge key"
			case seen[k.Value]:
				return "duplicate key " + k.Value
			}
			seen[k.Value] = true
		}
	}
	for _, c := range n.Content {
		if r := outsideContract(c); r != "" {
			return r
		}
	}
	return ""
}

// realDocuments gathers the repository's manifests (every testdata and
// examples directory) and generated corpora.
func realDocuments(t testing.TB) []schemaDoc {
	var docs []schemaDoc
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if e.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		inScope := strings.HasPrefix(rel, "examples"+string(filepath.Separator)) ||
			strings.Contains(string(filepath.Separator)+rel, string(filepath.Separator)+"testdata"+string(filepath.Separator))
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
		default:
			inScope = false
		}
		if !inScope {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		docs = append(docs, docsOf(rel, data)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []corpus.Options{
		{Rollouts: 80, Seed: 1},
		{Rollouts: 80, Seed: 2, MistakeRate: 0.3},
		{Rollouts: 80, Seed: 3, MistakeRate: 1},
	} {
		for _, in := range corpus.Generate(o) {
			docs = append(docs, docsOf(fmt.Sprintf("seed%d/%s", o.Seed, in.Path), in.Data)...)
		}
	}
	return docs
}

func TestValueCleanAgreesWithNodeWalk(t *testing.T) {
	var checked, clean, outside int
	for _, d := range realDocuments(t) {
		if outsideContract(d.node) != "" {
			outside++
			continue
		}
		checked++
		problems := d.slow()
		if fast := d.fast(); fast != (len(problems) == 0) {
			t.Errorf("%s: value walk says clean=%v, node walk reports %q", d.where, fast, problems)
		}
		if len(problems) == 0 {
			clean++
		}
	}
	t.Logf("%d documents checked: %d clean, %d with schema problems; %d outside the value contract", checked, clean, checked-clean, outside)
	if clean < 1000 || checked-clean < 10 {
		t.Fatalf("too few documents of one kind to compare: %d clean, %d not", clean, checked-clean)
	}
}

// mutants are the values a mutation writes over a node: every scalar class
// the schema walks tell apart, plus collections.
var mutants = []string{"true", "no", "12", "-3", "0", "-0", "5.0", "1e2", "1.5", "-2.5", ".inf", "-.inf", ".nan",
	"0x1F", "0o17", "1_000", "100ms", "5m", "text", "2001-12-14", "~", "ISTIO_MUTUAL", "UPGRADE",
	"99999999999999999999", `"80"`, `"-1"`, `"5s"`, "{a: 1}", "[x]", "[]", "{}"}

// TestValueCleanIsSoundOnMutants breaks real documents one node at a time (a
// misspelt key or a value of another type) and checks the value walk never
// calls clean what the node walk reports. Where the value cannot tell (5 or
// 5.0, .inf or ".inf", an enum written as a number) it may be stricter;
// those cases stay rare.
func TestValueCleanIsSoundOnMutants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var mutated, broken, stricter int
	for _, d := range realDocuments(t) {
		if outsideContract(d.node) != "" {
			continue
		}
		for range 6 {
			node := cloneNode(d.node, map[*yaml.Node]*yaml.Node{})
			mutate(node, rng)
			if outsideContract(node) != "" {
				continue
			}
			v, ok := load.ConvertNode(node)
			obj, isMap := v.(map[string]any)
			if !ok || !isMap {
				continue
			}
			m := d
			m.node, m.value = node, obj
			problems := m.slow()
			fast := m.fast()
			mutated++
			switch {
			case fast && len(problems) > 0:
				out, _ := yaml.Marshal(node)
				t.Fatalf("%s: value walk says clean, node walk reports %q on\n%s", d.where, problems, out)
			case len(problems) > 0:
				broken++
			case !fast:
				stricter++
			}
		}
	}
	t.Logf("%d mutants: %d with schema problems, %d clean, of which the value walk doubted %d", mutated, broken, mutated-broken, stricter)
	if broken < 1000 || mutated-broken < 1000 {
		t.Fatalf("mutants too one-sided: %d broken of %d", broken, mutated)
	}
	if stricter*20 > mutated-broken {
		t.Errorf("the value walk doubted %d of %d clean mutants: more than 5%%", stricter, mutated-broken)
	}
}

// mutate changes one node of n: a key gets misspelt or a value replaced.
func mutate(n *yaml.Node, rng *rand.Rand) {
	var keys, values []*yaml.Node
	var walk func(*yaml.Node)
	walk = func(c *yaml.Node) {
		if c.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(c.Content); i += 2 {
				keys = append(keys, c.Content[i])
				values = append(values, c.Content[i+1])
				walk(c.Content[i+1])
			}
			return
		}
		for _, x := range c.Content {
			values = append(values, x)
			walk(x)
		}
	}
	walk(n)
	if rng.IntN(4) == 0 && len(keys) > 0 {
		k := keys[rng.IntN(len(keys))]
		if len(k.Value) > 1 {
			k.Value = k.Value[1:] + k.Value[:1]
		}
		return
	}
	if len(values) == 0 {
		return
	}
	var repl yaml.Node
	if err := yaml.Unmarshal([]byte(mutants[rng.IntN(len(mutants))]), &repl); err != nil || len(repl.Content) == 0 {
		panic(fmt.Sprintf("mutant does not parse: %v", err))
	}
	*values[rng.IntN(len(values))] = *repl.Content[0]
}

// cloneNode deep-copies n, aliases pointing into the copy.
func cloneNode(n *yaml.Node, seen map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := seen[n]; ok {
		return c
	}
	c := *n
	seen[n] = &c
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = cloneNode(x, seen)
	}
	c.Alias = cloneNode(n.Alias, seen)
	return &c
}

// FuzzSchemaClean: for any document within the value contract, the value
// walk never calls clean what the node walk reports.
func FuzzSchemaClean(f *testing.F) {
	for _, c := range valueCleanCases {
		f.Add([]byte(c.doc))
	}
	f.Add([]byte("apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: a}\nspec: {host: a, trafficPolicy: {outlierDetection: {consecutive5xxErrors: 0x10, interval: 1.5s}, tls: {mode: SIMPLE}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range docsOf("fuzz", data) {
			if outsideContract(d.node) != "" {
				continue
			}
			if problems := d.slow(); len(problems) > 0 && d.fast() {
				t.Fatalf("%s: value walk says clean, node walk reports %q", d.where, problems)
			}
		}
	})
}
