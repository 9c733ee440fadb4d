// Package layers holds the test that keeps the import picture of
// docs/architecture.md true: which layer of rolloutlint may import which.
// The table is in layers_test.go; `make test` runs it.
package layers
