package promcheck

// argoValue is what the Argo Rollouts Prometheus provider hands a condition
// as `result`: a []float64 for a vector (one value per series), a float64
// for a scalar. ok is false for result types the provider rejects.
func argoValue(r *Result) (any, bool) {
	switch r.Type {
	case "vector":
		if r.Values == nil {
			return []float64{}, true
		}
		return r.Values, true
	case "scalar":
		return r.Values[0], true
	}
	return nil, false
}
