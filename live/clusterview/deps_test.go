package clusterview

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinksNoTypedClients keeps the view off the client-go packages that
// link the scheme of every built-in type and the typed clients (their
// package initialisation costs every run of the binary a few milliseconds,
// cluster or not): client-go/discovery, client-go/informers and
// client-go/kubernetes. The view needs the dynamic client, tools/cache and
// rest only.
func TestLinksNoTypedClients(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the package's dependencies")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !slices.Contains(deps, "k8s.io/client-go/tools/cache") {
		t.Fatalf("go list -deps gave %d packages, without tools/cache: not the view's dependencies", len(deps))
	}
	for _, p := range deps {
		for _, banned := range []string{"k8s.io/client-go/discovery", "k8s.io/client-go/informers", "k8s.io/client-go/kubernetes"} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("live/clusterview links %s", p)
			}
		}
	}
}
