package docgen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsCurrent fails when docs/rules or the README table is stale.
func TestDocsCurrent(t *testing.T) {
	root := "../.."
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range files {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `make docs`", rel)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(root, "docs", "rules"))
	for _, e := range entries {
		rel := filepath.Join("docs", "rules", e.Name())
		if _, ok := files[rel]; !ok && strings.HasPrefix(e.Name(), "RL") {
			t.Errorf("%s documents no rule: run `make docs`", rel)
		}
	}
}
