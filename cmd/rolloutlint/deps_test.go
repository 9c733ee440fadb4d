package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyDeps are packages rolloutlint must not link: their initialisers run
// on every start (Helm's packages, the JSON Schema compiler that compiles its
// meta-schemas at init, and client-go's typed clients with the scheme that
// registers every built-in API group). Helm lives in rolloutlint-helm, which
// rolloutlint starts only when a lint holds a chart; the cluster view and the
// webhook use the dynamic client, tools/cache and clusterview.RESTDiscovery.
var heavyDeps = []string{"helm.sh/", "github.com/santhosh-tekuri/jsonschema", "k8s.io/client-go/kubernetes", "k8s.io/client-go/discovery", "k8s.io/client-go/informers"}

// allowedDeps are exceptions: strvals parses --set and an Application's
// parameters into the values in rolloutlint itself; it has no initialiser
// and links only sigs.k8s.io/yaml.
var allowedDeps = map[string]bool{"helm.sh/helm/v4/pkg/strvals": true}

// TestCommandLinksNoHeavyInitialisers lists the command's dependencies as the
// release builds it and fails on any package of heavyDeps.
func TestCommandLinksNoHeavyInitialisers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-tags", "kustomize_disable_go_plugin_support", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list gave %d packages: %q", len(deps), out)
	}
	sawStrvals := false
	for _, p := range deps {
		if allowedDeps[p] {
			sawStrvals = true
			continue
		}
		for _, h := range heavyDeps {
			if strings.HasPrefix(p, h) {
				t.Errorf("rolloutlint links %s: its initialiser would run on every lint (Helm renders in rolloutlint-helm; the cluster code uses the dynamic client)", p)
			}
		}
	}
	if !sawStrvals {
		t.Log("strvals is no longer linked: allowedDeps can go")
	}
}
