package kinds

import "math/bits"

// keyTable is a read-only table from a type's field names to V, for the tape
// decoder, which looks up every key of every document: a Go map hashes the
// whole key with AES, where a type's few names are told apart by their length
// and three of their bytes. It is an open-addressing table, at most half
// full, probed linearly, with the multiplier that gives the fewest probes.
type keyTable[V any] struct {
	slots []keySlot[V]
	mul   uint32
	shift uint8 // 32 - log2(len(slots))
	empty *V    // the value of the key "", which has no bytes to hash
}

type keySlot[V any] struct {
	key  string
	val  V
	used bool // false: a free slot, which ends a probe
}

// keyMuls are the multipliers newKeyTable tries, odd and with well-spread
// bits.
var keyMuls = [...]uint32{0x9e3779b1, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f, 0x165667b1, 0xd3a2646c | 1, 0xfd7046c5, 0xb55a4f09}

// newKeyTable builds the table of m.
func newKeyTable[V any](m map[string]V) keyTable[V] {
	var kt keyTable[V]
	n := len(m)
	if v, ok := m[""]; ok {
		kt.empty = &v
		n--
	}
	if n == 0 {
		return kt
	}
	logSize := max(bits.Len(uint(2*n-1)), 1) // 2n rounded up to a power of two
	kt.shift = uint8(32 - logSize)
	best, bestMul := -1, uint32(0)
	var bestSlots []keySlot[V]
	for _, mul := range keyMuls {
		kt.mul = mul
		slots := make([]keySlot[V], 1<<logSize)
		probes := 0
		for k, v := range m {
			if k == "" {
				continue
			}
			h := kt.hash(k)
			for slots[h].used {
				h = (h + 1) & uint32(len(slots)-1)
				probes++
			}
			slots[h] = keySlot[V]{key: k, val: v, used: true}
		}
		if best < 0 || probes < best {
			best, bestMul, bestSlots = probes, mul, slots
		}
		if best == 0 {
			break
		}
	}
	kt.mul, kt.slots = bestMul, bestSlots
	return kt
}

func (kt *keyTable[V]) hash(key string) uint32 {
	n := len(key)
	x := uint32(n) | uint32(key[0])<<8 | uint32(key[n/2])<<16 | uint32(key[n-1])<<24
	return x * kt.mul >> kt.shift
}

// get returns the value of key, or nil.
func (kt *keyTable[V]) get(key string) *V {
	if len(key) == 0 {
		return kt.empty
	}
	if kt.slots == nil {
		return nil
	}
	mask := uint32(len(kt.slots) - 1)
	for h := kt.hash(key); ; h = (h + 1) & mask {
		s := &kt.slots[h]
		if !s.used {
			return nil
		}
		if s.key == key {
			return &s.val
		}
	}
}
