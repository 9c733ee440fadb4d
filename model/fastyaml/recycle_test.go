package fastyaml

import (
	"reflect"
	"testing"
	"unsafe"
)

// Documents decoded after Recycle (into the recycled maps) equal fresh
// decodes, and the recycled maps are really reused.
func TestRecycleReusesMapsWithoutChangingResults(t *testing.T) {
	docs := []string{
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: {app: web, tier: front}\nspec:\n  ports:\n  - port: 80\n    name: http\n  - {port: 443, name: https}\n",
		"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: vs\nspec:\n  hosts: [web]\n  http:\n  - name: primary\n    route:\n    - destination: {host: web, subset: stable}\n      weight: 100\n",
		"kind: Wide\napiVersion: v1\nmetadata:\n  name: w\ndata:\n  a: 1\n  b: 2\n  c: 3\n  d: 4\n  e: 5\n  f: 6\n  g: 7\n  h: 8\n  i: 9\n  j: 10\n",
	}
	for round := 0; round < 3; round++ {
		for _, d := range docs {
			want, ok := DecodeLimit([]byte(d), DefaultMaxNodes)
			if !ok {
				t.Fatalf("declined %q", d)
			}
			got, _ := DecodeShared([]byte(d), DefaultMaxNodes)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: decoded %v after recycling, want %v", round, got, want)
			}
			Recycle(got)
		}
	}
	// The decoding parser reuses the maps it recorded: decode and recycle
	// on one parser and see a recycled map come back.
	p := new(parser)
	obj, _ := p.decode(docs[0], DefaultMaxNodes, nil, false)
	p.recycleResult(obj)
	// root, metadata, labels, spec and its two ports
	if len(p.free) != 6 {
		t.Fatalf("recycled %d maps of the Service, want its 6 small maps", len(p.free))
	}
	last := p.free[len(p.free)-1]
	if len(last) != 0 {
		t.Fatalf("a recycled map still holds %v", last)
	}
	m := p.newMap(2)
	m["x"] = 1
	if len(last) != 1 {
		t.Fatal("newMap did not hand out the recycled map")
	}
	// A map too large to be small is left to the collector.
	q := new(parser)
	wide, _ := q.decode(docs[2], DefaultMaxNodes, nil, false)
	q.recycleResult(wide)
	if len(q.free) != 2 { // root and metadata; data has 10 entries
		t.Fatalf("kept %d maps of the wide document, want 2", len(q.free))
	}
}

// A result recycled where its decoding parser is not (the pool gave another
// one) is left to the collector: had that parser reused its maps, the
// decoding parser's record of them would later hand the ones it did not
// reuse out a second time, and two mappings would fill one map. Decodes on
// both parsers afterwards share no map and equal fresh decodes.
func TestRecycleOnAnotherParser(t *testing.T) {
	big, small := "a: {x: 1}\nb: {x: 2}\nc: {x: 3}\nd: {x: 4}\n", "e: 5\n"
	want, ok := Decode([]byte(big))
	if !ok {
		t.Fatal("declined")
	}
	a, b := new(parser), new(parser)
	obj1, _ := a.decode(big, DefaultMaxNodes, nil, false)
	b.recycleResult(obj1) // not b's result
	if len(b.free) != 0 {
		t.Fatalf("another parser kept %d maps of a result", len(b.free))
	}
	obj2, _ := b.decode(small, DefaultMaxNodes, nil, false)
	a.recycleResult(obj2) // a's record is of obj1
	ra, _ := a.decode(big, DefaultMaxNodes, nil, false)
	rb, _ := b.decode(big, DefaultMaxNodes, nil, false)
	seen := map[unsafe.Pointer]bool{}
	for _, r := range []map[string]any{ra, rb} {
		for _, v := range r {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("decoded %v, want %v", r, want)
			}
			id := mapID(m)
			if seen[id] {
				t.Fatal("two mappings share one map")
			}
			seen[id] = true
		}
	}
	if !reflect.DeepEqual(ra, want) || !reflect.DeepEqual(rb, want) {
		t.Fatalf("decoded %v and %v, want %v", ra, rb, want)
	}
}

// The maps a decode records for Recycle are exactly the maps of its result.
func TestDecodeRecordsTheMapsOfItsResult(t *testing.T) {
	doc := []byte("a: {b: 1, c: {d: 2}}\ne:\n- f: 1\n- [x, {g: 3}]\nh:\n  i:\n    j: k\n")
	for range 20 {
		obj, ok := DecodeShared(doc, DefaultMaxNodes)
		if !ok {
			t.Fatal("declined")
		}
		p := scratch.Get().(*parser)
		if p.last != mapID(obj) {
			scratch.Put(p) // another parser (the pool is per CPU): try again
			continue
		}
		got := map[unsafe.Pointer]bool{}
		for _, m := range p.made {
			got[mapID(m)] = true
		}
		want := map[unsafe.Pointer]bool{}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				want[mapID(v)] = true
				for _, e := range v {
					walk(e)
				}
			case []any:
				for _, e := range v {
					walk(e)
				}
			}
		}
		walk(obj)
		scratch.Put(p)
		if len(want) != 7 || !reflect.DeepEqual(got, want) {
			t.Fatalf("recorded %d maps, the result has %d (want 7)", len(got), len(want))
		}
		Recycle(obj)
		return
	}
	t.Fatal("never got the decoding parser back from the pool")
}

// A result recycled by another parser than the one that decoded it (the
// goroutine moved to another CPU in between, or another goroutine took the
// decoding parser from the pool) must not let the decoding parser hand out
// the result's maps later: its record of them is stale. The decoding
// parser still names the result's root as its last result, so if that root
// were reused as the root of another result, Recycle of that result on the
// decoding parser took the stale record for the result's maps, and two
// parsers handed out the same maps: two live documents sharing a map, which
// a webhook's concurrent reviews then write and iterate at once ("fatal
// error: concurrent map iteration and map write").
func TestRecycleOnAnotherParserLeavesNoStaleRecord(t *testing.T) {
	docA := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  ports:\n  - {port: 80, name: http}\n"
	docB := "a: 1\n" // a result whose only map is its root
	docC := "metadata:\n  labels: {x: c}\nspec: {c: 1}\n"
	docD := "metadata:\n  labels: {y: d}\nspec: {d: 2}\n"
	decode := func(p *parser, doc string) map[string]any {
		t.Helper()
		obj, ok := p.decode(doc, DefaultMaxNodes, nil, false)
		if !ok {
			t.Fatalf("declined %q", doc)
		}
		return obj
	}
	dec, other := new(parser), new(parser)
	a := decode(dec, docA)
	other.recycleResult(a) // recycled elsewhere: dec's record of a's maps is stale
	b := decode(other, docB)
	dec.recycleResult(b) // on the parser that decoded a, not b
	// The two parsers' free lists must not share a map.
	seen := map[unsafe.Pointer]bool{}
	for _, m := range other.free {
		seen[mapID(m)] = true
	}
	for _, m := range dec.free {
		if seen[mapID(m)] {
			t.Fatal("two parsers hold the same recycled map")
		}
	}
	// And so documents decoded on each do not share one.
	c := decode(dec, docC)
	wantC, _ := DecodeLimit([]byte(docC), DefaultMaxNodes)
	for range 4 {
		other.decode(docD, DefaultMaxNodes, nil, false)
	}
	if !reflect.DeepEqual(c, wantC) {
		t.Fatalf("a document changed when another was decoded: %v, want %v", c, wantC)
	}
}
