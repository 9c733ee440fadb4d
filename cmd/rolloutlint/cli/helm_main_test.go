package cli

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/render/helmtest"
)

// TestMain renders the charts these tests lint through a companion
// process, as rolloutlint does (the test binary serves as rolloutlint-helm).
func TestMain(m *testing.M) { helmtest.Main(m) }
