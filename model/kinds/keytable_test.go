package kinds

import (
	"fmt"
	"testing"
)

// TestKeyTable checks that a keyTable finds exactly the keys of its map,
// among names that share lengths and bytes, the empty key and none at all.
func TestKeyTable(t *testing.T) {
	for _, keys := range [][]string{
		nil,
		{""},
		{"a"},
		{"name", "namespace", "labels", "annotations", "uid", "", "lables", "nam", "namf"},
		{"aa", "ab", "ba", "bb", "aab", "abb", "aba", "baa"},
	} {
		m := map[string]int{}
		for i, k := range keys {
			m[k] = i
		}
		for n := 0; n < 40; n++ { // many names: the table grows
			m[fmt.Sprintf("f%dx", n)] = 100 + n
		}
		kt := newKeyTable(m)
		for k, v := range m {
			if got := kt.get(k); got == nil || *got != v {
				t.Errorf("%q: got %v, want %d", k, got, v)
			}
		}
		for _, k := range []string{"x", "namesp", "f40x", "f1", "aaa", "labelz", "f0xx"} {
			if _, in := m[k]; !in && kt.get(k) != nil {
				t.Errorf("%q: found, not in the map", k)
			}
		}
		if _, in := m[""]; !in && kt.get("") != nil {
			t.Errorf(`"": found, not in the map`)
		}
	}
}
