package promql

// Result is Prometheus' answer to an instant query, reduced to what the Argo
// Rollouts Prometheus provider looks at.
type Result struct {
	// Type is vector, scalar, matrix or string.
	Type string
	// Values are the sample values: one per series for a vector, one for a
	// scalar.
	Values []float64
	// Series is the number of series of a vector or matrix.
	Series int
}

// ArgoValue is what the Argo Rollouts Prometheus provider hands a condition
// as `result`: a []float64 for a vector (one value per series), a float64
// for a scalar. ok is false for result types the provider rejects.
func ArgoValue(r *Result) (any, bool) {
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
