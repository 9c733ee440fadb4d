package xds

import (
	"reflect"
	"testing"
)

// TestTypeListShared checks that the shared type lists are the sorted set of
// types asked for, for every combination, and that no list is nil (JSON []).
func TestTypeListShared(t *testing.T) {
	all := []Type{CDS, EDS, LDS, RDS}
	for mask := 0; mask < 1<<len(all); mask++ {
		m, want := map[Type]bool{}, []Type{}
		// Insert in reverse to show the order comes from typeOrder.
		for i := len(all) - 1; i >= 0; i-- {
			if mask&(1<<i) != 0 {
				m[all[i]] = true
			}
		}
		for i, ty := range all {
			if mask&(1<<i) != 0 {
				want = append(want, ty)
			}
		}
		got := typeList(m)
		if got == nil || !reflect.DeepEqual(got, want) {
			t.Errorf("typeList(%v) = %#v, want %#v", m, got, want)
		}
		if cap(got) != len(got) {
			t.Errorf("typeList(%v) has spare capacity: an append would write into the shared table", m)
		}
	}
	if got := typeList(map[Type]bool{"SDS": true, EDS: true}); !reflect.DeepEqual(got, []Type{"SDS", EDS}) && !reflect.DeepEqual(got, []Type{EDS, "SDS"}) {
		t.Errorf("unknown type: got %v", got)
	}
}
