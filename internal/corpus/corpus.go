// Package corpus generates realistic bundles for benchmarks and scale tests:
// Rollouts with their Services, VirtualServices, DestinationRules, Gateways
// and AnalysisTemplates, host- and subset-level, with an optional sprinkle of
// known mistakes. Output is deterministic for a given seed.
//
// Two profiles give bundles of different shape, so that a comparison with
// another tool does not flatter one shape: Mixed (the default: half
// host-level applications, each with a Gateway, half subset-level, each with
// a DestinationRule, 50 applications a file) and Gateways (every application
// behind its own Gateway, one in ten subset-level with a DestinationRule, one
// application a file).
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/load"
)

// Profile is the shape of a corpus.
type Profile string

// The profiles.
const (
	// Mixed alternates host-level applications (two Services, a
	// VirtualService bound to a Gateway) and subset-level ones (one Service,
	// a mesh VirtualService, a DestinationRule).
	Mixed Profile = "mixed"
	// Gateways puts every application behind its own Gateway; one in ten is
	// subset-level with a DestinationRule. PerFile defaults to 1: many small
	// files, as a repository with one directory per application has.
	Gateways Profile = "gateways"
)

// Options shape a corpus.
type Options struct {
	// Profile selects the shape (default Mixed).
	Profile Profile
	// Rollouts is the number of applications (each ~5 objects).
	Rollouts int
	// Namespaces spreads the applications over this many namespaces (default 10).
	Namespaces int
	// PerFile puts this many applications in one file (default 50; 1 for
	// the Gateways profile).
	PerFile int
	// MistakeRate is the fraction (0..1) of applications given one known mistake.
	MistakeRate float64
	// Seed makes the corpus reproducible.
	Seed uint64
}

// Generate returns the corpus as in-memory inputs.
func Generate(o Options) []load.Input {
	if o.Namespaces <= 0 {
		o.Namespaces = 10
	}
	if o.PerFile <= 0 {
		o.PerFile = 50
		if o.Profile == Gateways {
			o.PerFile = 1
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	var inputs []load.Input
	var b strings.Builder
	flush := func(i int) {
		if b.Len() == 0 {
			return
		}
		inputs = append(inputs, load.Input{Path: fmt.Sprintf("corpus/apps-%05d.yaml", i), Data: []byte(b.String())})
		b.Reset()
	}
	for i := 0; i < o.Rollouts; i++ {
		ns := fmt.Sprintf("team-%02d", i%o.Namespaces)
		app := fmt.Sprintf("app-%05d", i)
		mistake := o.MistakeRate > 0 && rng.Float64() < o.MistakeRate
		switch {
		case o.Profile == Gateways && i%10 == 9:
			writeSubsetLevel(&b, ns, app, mistake, true, rng)
		case o.Profile == Gateways:
			// Half the mistakes are a VirtualService bound to a Gateway
			// that does not exist, which istioctl reports too.
			missing := mistake && rng.IntN(2) == 0
			writeHostLevel(&b, ns, app, mistake && !missing, missing, rng)
		case i%2 == 0:
			writeHostLevel(&b, ns, app, mistake, false, rng)
		default:
			writeSubsetLevel(&b, ns, app, mistake, false, rng)
		}
		if (i+1)%o.PerFile == 0 {
			flush(i / o.PerFile)
		}
	}
	flush(o.Rollouts / o.PerFile)
	return inputs
}

// Objects returns the number of objects Generate writes for n applications
// of the Mixed profile.
func Objects(n int) int { return ObjectsOf(Options{Rollouts: n}) }

// ObjectsOf returns the number of objects Generate writes for o.
func ObjectsOf(o Options) int {
	n := o.Rollouts
	if o.Profile == Gateways {
		subsets := (n + 1) / 10 // applications 9, 19, 29, ...
		return (n-subsets)*6 + subsets*6
	}
	hosts := (n + 1) / 2
	subsets := n / 2
	return hosts*6 + subsets*5
}

func steps(b *strings.Builder, rng *rand.Rand, mistake, subset bool) {
	b.WriteString("      steps:\n")
	w := 10 + rng.IntN(3)*10
	fmt.Fprintf(b, "      - setWeight: %d\n      - pause: {duration: 5m}\n", w)
	b.WriteString("      - analysis:\n          templates:\n          - templateName: TPL\n          args:\n          - name: service-name\n            value: SVC\n")
	if subset {
		// Stable and canary share the Service: the analysis selects the
		// canary's pods by their template hash.
		b.WriteString("          - name: canary-hash\n            valueFrom: {podTemplateHashValue: Latest}\n")
	}
	if mistake {
		b.WriteString("      - setWeight: 120\n")
	} else {
		b.WriteString("      - setWeight: 50\n      - pause: {duration: 10m}\n")
	}
}

// writeRollout writes an application's Rollout: the shared head, the
// strategy's routing lines, then the steps (with the analysis args of its
// routing level).
func writeRollout(b *strings.Builder, ns, app, routing string, subset, mistake bool, rng *rand.Rand) {
	var s strings.Builder
	fmt.Fprintf(&s, `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 4
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: app
        image: registry.example.com/%[1]s:1.0.0
        ports: [{name: http, containerPort: 8080}]
  strategy:
    canary:
%[3]s`, app, ns, routing)
	steps(&s, rng, mistake, subset)
	svc := app + "-canary"
	if subset {
		svc = app
	}
	b.WriteString(strings.NewReplacer("SVC", svc, "TPL", app+"-success-rate").Replace(s.String()))
}

// writeHostLevel writes a host-level application behind its own Gateway;
// missingGateway, a mistake, binds the VirtualService to a Gateway name that
// does not exist instead.
func writeHostLevel(b *strings.Builder, ns, app string, mistake, missingGateway bool, rng *rand.Rand) {
	writeRollout(b, ns, app, fmt.Sprintf(`      stableService: %[1]s-stable
      canaryService: %[1]s-canary
      trafficRouting:
        istio:
          virtualService: {name: %[1]s, routes: [primary]}
`, app), false, mistake, rng)
	for _, role := range []string{"stable", "canary"} {
		fmt.Fprintf(b, `---
apiVersion: v1
kind: Service
metadata: {name: %[1]s-%[3]s, namespace: %[2]s}
spec:
  selector: {app: %[1]s}
  ports: [{name: http, port: 80, targetPort: http}]
`, app, ns, role)
	}
	fmt.Fprintf(b, `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  hosts: [%[1]s.%[2]s.example.com]
  gateways: [%[1]s-%[3]s]
  http:
  - name: primary
    route:
    - destination: {host: %[1]s-stable}
      weight: 100
    - destination: {host: %[1]s-canary}
      weight: 0
`, app, ns, gatewayName(missingGateway))
	writeGateway(b, ns, app)
	writeTemplate(b, ns, app, false)
}

func gatewayName(missing bool) string {
	if missing {
		return "gw"
	}
	return "gateway"
}

// writeGateway writes the application's Gateway, named app-gateway, for its
// public host.
func writeGateway(b *strings.Builder, ns, app string) {
	fmt.Fprintf(b, `---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: %[1]s-gateway, namespace: %[2]s}
spec:
  selector: {istio: ingressgateway}
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: [%[1]s.%[2]s.example.com]
`, app, ns)
}

// writeSubsetLevel writes a subset-level application; withGateway binds its
// VirtualService to a Gateway of its own as well as the mesh.
func writeSubsetLevel(b *strings.Builder, ns, app string, mistake, withGateway bool, rng *rand.Rand) {
	writeRollout(b, ns, app, fmt.Sprintf(`      trafficRouting:
        istio:
          virtualService: {name: %[1]s, routes: [primary]}
          destinationRule: {name: %[1]s, stableSubsetName: stable, canarySubsetName: canary}
`, app), true, mistake, rng)
	extraHost, gateways := "", ""
	if withGateway {
		extraHost = fmt.Sprintf(", %s.%s.example.com", app, ns)
		gateways = fmt.Sprintf("\n  gateways: [mesh, %s-gateway]", app)
	}
	fmt.Fprintf(b, `---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  selector: {app: %[1]s}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  hosts: [%[1]s%[3]s]%[4]s
  http:
  - name: primary
    route:
    - destination: {host: %[1]s, subset: stable}
      weight: 100
    - destination: {host: %[1]s, subset: canary}
      weight: 0
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  host: %[1]s
  subsets:
  - name: stable
    labels: {app: %[1]s}
  - name: canary
    labels: {app: %[1]s}
`, app, ns, extraHost, gateways)
	if withGateway {
		writeGateway(b, ns, app)
	}
	writeTemplate(b, ns, app, true)
}

func writeTemplate(b *strings.Builder, ns, app string, subset bool) {
	args, selector := "", ""
	if subset {
		args = "\n  - name: canary-hash"
		selector = `,destination_workload_label_rollouts_pod_template_hash="{{args.canary-hash}}"`
	}
	fmt.Fprintf(b, `---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: %[1]s-success-rate, namespace: %[2]s}
spec:
  args:
  - name: service-name%[3]s
  metrics:
  - name: success-rate
    interval: 1m
    count: 5
    failureLimit: 1
    successCondition: len(result) > 0 && result[0] >= 0.99
    provider:
      prometheus:
        address: http://prometheus.monitoring.svc:9090
        query: sum(rate(istio_requests_total{destination_service_name="{{args.service-name}}"%[4]s,response_code!~"5.."}[2m])) / sum(rate(istio_requests_total{destination_service_name="{{args.service-name}}"%[4]s}[2m]))
---
`, app, ns, args, selector)
}
