//go:build !linux

package webhook

func resetPeakRSS() {}

// peakRSS is not measured here.
func peakRSS() uint64 { return 0 }
