package graph

import (
	"hash/maphash"
	"math/bits"
)

// keyIndex finds a graph's resources by kind, namespace and name.
//
// Nearly every key names one object, so the index maps a 64-bit hash of the
// key to that object's position in the graph's Resources, and a lookup
// compares the key with the object it finds. A table of 16-byte slots is a
// fifth of a map keyed by ObjectKey holding a slice (72-byte slots): on a
// bundle of 250,000 objects 8 MB rather than 38 MB, so more of the probes
// every phase after loading makes hit the processor's caches. The keys more
// than one resource hashes to (an object the bundle defines twice, or two
// keys whose hashes collide, which the comparison tells apart) are kept
// whole in a map of their own.
type keyIndex struct {
	res  []*Resource
	one  map[uint64]int32          // key hash → position in res, or -1: see many
	many map[ObjectKey][]*Resource // every key of a hash more than one resource has, in load order
	// dups are the resources defined after an earlier one with the same key,
	// in load order.
	dups []*Resource
}

// keySeed seeds every graph's key hashes; the hashes stay in memory.
var keySeed = maphash.MakeSeed()

// keyHash is the hash of an object's key. Tests replace it to make keys
// collide.
var keyHash = func(kind, namespace, name string) uint64 {
	h := maphash.String(keySeed, name)
	h = bits.RotateLeft64(h, 23) ^ maphash.String(keySeed, namespace)
	return bits.RotateLeft64(h, 17) ^ maphash.String(keySeed, kind)
}

// newKeyIndex indexes res (a graph's Resources, whose positions it keeps).
func newKeyIndex(res []*Resource) *keyIndex {
	x := &keyIndex{res: res, one: make(map[uint64]int32, len(res))}
	for i, r := range res {
		h := keyHash(r.Kind, r.Namespace, r.Name)
		j, seen := x.one[h]
		if !seen {
			x.one[h] = int32(i)
			continue
		}
		if x.many == nil {
			x.many = map[ObjectKey][]*Resource{}
		}
		if j >= 0 { // the hash's first resource moves to many
			f := res[j]
			fk := ObjectKey{Kind: f.Kind, Namespace: f.Namespace, Name: f.Name}
			x.many[fk] = append(x.many[fk], f)
			x.one[h] = -1
		}
		k := ObjectKey{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
		if len(x.many[k]) > 0 {
			x.dups = append(x.dups, r)
		}
		x.many[k] = append(x.many[k], r)
	}
	return x
}

// all returns every resource with the key, in load order.
func (x *keyIndex) all(kind, namespace, name string) []*Resource {
	i, ok := x.one[keyHash(kind, namespace, name)]
	switch {
	case !ok:
		return nil
	case i < 0:
		return x.many[ObjectKey{Kind: kind, Namespace: namespace, Name: name}]
	}
	if r := x.res[i]; r.Name == name && r.Namespace == namespace && r.Kind == kind {
		return x.res[i : i+1 : i+1] // capacity one: appending to it copies
	}
	return nil
}

// first returns the first resource with the key, or nil.
func (x *keyIndex) first(kind, namespace, name string) *Resource {
	i, ok := x.one[keyHash(kind, namespace, name)]
	switch {
	case !ok:
		return nil
	case i < 0:
		if rs := x.many[ObjectKey{Kind: kind, Namespace: namespace, Name: name}]; len(rs) > 0 {
			return rs[0]
		}
		return nil
	}
	if r := x.res[i]; r.Name == name && r.Namespace == namespace && r.Kind == kind {
		return r
	}
	return nil
}
