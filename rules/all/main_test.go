package all_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/render/helmtest"
)

// TestMain renders the charts of these tests through a companion process,
// as rolloutlint does (the test binary serves as rolloutlint-helm).
func TestMain(m *testing.M) { helmtest.Main(m) }
