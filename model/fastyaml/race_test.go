//go:build race

package fastyaml_test

// raceEnabled: the race detector drops sync.Pool entries at random, so the
// parser scratch is not reused and allocation counts mean nothing.
const raceEnabled = true
