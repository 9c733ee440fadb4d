package istio_test

import (
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/istio"
)

// versionBundle sets the mesh defaults to [".", "istio-ingress"]: Istio 1.28
// reads only "." of them (own namespace), 1.30 and 1.31 the whole list. A
// Sidecar of web excludes shop's VirtualService, which only 1.31 reads.
const versionBundle = `
apiVersion: v1
kind: ConfigMap
metadata: {name: istio, namespace: istio-system}
data:
  mesh: |-
    defaultServiceExportTo: [".", "istio-ingress"]
    defaultVirtualServiceExportTo: [".", "istio-ingress"]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ingress, namespace: istio-ingress}
spec:
  selector: {matchLabels: {istio: ingress}}
  template:
    metadata: {labels: {istio: ingress}}
    spec: {containers: [{name: istio-proxy, image: proxyv2}]}
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: public, namespace: istio-ingress}
spec:
  selector: {istio: ingress}
  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*/*"]}]
---
apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews-ingress, namespace: shop}
spec:
  hosts: [reviews.example.com]
  gateways: [istio-ingress/public]
  exportTo: ["*"]
  http: [{route: [{destination: {host: reviews}}]}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: details-ingress, namespace: shop}
spec:
  hosts: [details.example.com]
  gateways: [istio-ingress/public]
  http: [{route: [{destination: {host: reviews}}]}]
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: shop, annotations: {networking.istio.io/exportTo: shop}}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ratings, namespace: shop}
spec:
  hosts: [ratings]
  exportTo: [".", web]
  http: [{route: [{destination: {host: ratings}}]}]
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: web}
spec: {egress: [{hosts: ["*/*", "~shop/*"]}]}
`

// TestVisibilityFollowsIstioVersion runs the visibility rules under each
// supported --istio-version: the findings follow that version's istiod.
func TestVisibilityFollowsIstioVersion(t *testing.T) {
	g := load.Inputs([]load.Input{{Path: "b.yaml", Data: []byte(versionBundle)}}, load.Options{})
	run := func(r *rules.Rule, version string) []rules.Diagnostic {
		var out []rules.Diagnostic
		pass := rules.NewPass(g, r, nil, rules.ModeCLI, rules.Globals{IstioVersion: version}, func(d rules.Diagnostic) { out = append(out, d) })
		if err := r.Run(pass); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		version string
		// RL3015: details-ingress (no exportTo) reaches istio-ingress from
		// 1.30. RL3014: reviews (no exportTo) likewise; ratings is routed
		// from web's sidecars unless 1.31 excludes shop/*.
		rl3015, rl3014 int
		webMissing     bool
	}{
		{"1.28", 1, 2, true},
		{"1.30", 0, 1, true},
		{"1.31", 0, 0, false},
	} {
		if got := len(run(istio.VirtualServiceNotExportedToGateway, c.version)); got != c.rl3015 {
			t.Errorf("Istio %s: RL3015 findings = %d, want %d", c.version, got, c.rl3015)
		}
		ds := run(istio.DestinationHostNotExported, c.version)
		if len(ds) != c.rl3014 {
			for _, d := range ds {
				t.Logf("%s", d.Message+" "+d.Detail)
			}
			t.Errorf("Istio %s: RL3014 findings = %d, want %d", c.version, len(ds), c.rl3014)
		}
		web := false
		for _, d := range ds {
			if strings.Contains(d.Detail, "web") {
				web = true
			}
		}
		if web != c.webMissing {
			t.Errorf("Istio %s: RL3014 names web = %v, want %v", c.version, web, c.webMissing)
		}
	}
}
