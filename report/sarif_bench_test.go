package report_test

import (
	"io"
	"testing"

	"github.com/rolloutlint/rolloutlint/report"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// BenchmarkSARIF writes GitHub's maximum of 25,000 results (one file, so
// hashing is done once and the cache is what is measured with the encoding).
func BenchmarkSARIF(b *testing.B) {
	res := synthetic(report.MaxSARIFResults)
	opts := report.Options{AllRules: all.Rules(), Warnings: io.Discard}
	b.ReportAllocs()
	for b.Loop() {
		if err := report.SARIF(io.Discard, res, opts); err != nil {
			b.Fatal(err)
		}
	}
}
