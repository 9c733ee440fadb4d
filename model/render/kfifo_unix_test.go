//go:build unix

package render

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKustomizationNamingAPipeDoesNotHang: a kustomization that names a
// named pipe among its resources hung the lint (reading the file for
// positions, then kustomize itself, blocked until something wrote to the
// pipe). It is an RL0010 error at the pipe now, and the unit is not built.
func TestKustomizationNamingAPipeDoesNotHang(t *testing.T) {
	dir := writeTree(t, map[string]string{"app/kustomization.yaml": "resources:\n- pipe.yaml\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "app", "pipe.yaml"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan []string, 1)
	go func() {
		_, problems := renderedNames(t, dir, "app")
		done <- problems
	}()
	select {
	case problems := <-done:
		want := "app/pipe.yaml:1:1 RL0010 a kustomization names this named pipe, which kustomize would read"
		if strings.Join(problems, "\n") != want {
			t.Errorf("problems\n%s\nwant\n%s", strings.Join(problems, "\n"), want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the render of a kustomization naming a named pipe did not finish in 20 s")
	}
}
