package traffic

import (
	"github.com/rolloutlint/rolloutlint/model/graph"
)

// drSubsets returns a DestinationRule's subset names, in order.
func drSubsets(dr *graph.Resource) []string {
	o := dr.DestinationRule()
	if o == nil {
		return nil
	}
	var out []string
	for _, s := range o.Spec.GetSubsets() {
		out = append(out, s.GetName())
	}
	return out
}

// definesSubset reports whether a DestinationRule defines the subset: drSubsets
// and contains without the list.
func definesSubset(dr *graph.Resource, subset string) bool {
	if o := dr.DestinationRule(); o != nil {
		for _, s := range o.Spec.GetSubsets() {
			if s.GetName() == subset {
				return true
			}
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
