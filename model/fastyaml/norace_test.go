//go:build !race

package fastyaml_test

const raceEnabled = false
