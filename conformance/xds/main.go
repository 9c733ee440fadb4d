// Command xdsconformance runs istiod's real push machinery in-process
// (istio.io/istio/pilot/test/xds: the real DiscoveryServer with its
// debounce, PushContext and Kubernetes registry), plays each scenario's
// `rolloutlint plan` writes against it, and records what istiod pushed to a
// sidecar and a gateway proxy connected over delta xDS. The records are
// compared with the plan's predictions by the main module
// (internal/xdsconformance); see docs/xds-conformance.md.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"istio.io/istio/pkg/log"
	"istio.io/istio/pkg/test"
)

func main() {
	var (
		rolloutlint = flag.String("rolloutlint", "bin/rolloutlint", "rolloutlint binary that plans the scenarios")
		version     = flag.String("istio-version", "", "Istio release the harness is built against (1.31.0)")
		model       = flag.String("model", "", "plan model to drive the writes with (1.31)")
		module      = flag.String("istio-module", "", "istio.io/istio module version, or \"source tree\"")
		commit      = flag.String("istio-commit", "", "istio commit the build is from")
		out         = flag.String("out", "", "directory to write <scenario>.json observations to")
		root        = flag.String("root", ".", "repository root (bundle paths are recorded relative to it)")
	)
	flag.Parse()
	if *version == "" || *model == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: xdsconformance -istio-version V -model M -istio-commit C -out DIR BUNDLE.yaml...")
		os.Exit(2)
	}
	// istiod logs at info by default; the harness reports through its records.
	for _, s := range log.Scopes() {
		s.SetOutputLevel(log.NoneLevel)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	failed := false
	for _, bundlePath := range flag.Args() {
		name := strings.TrimSuffix(filepath.Base(bundlePath), filepath.Ext(bundlePath))
		obs, err := scenario(*rolloutlint, *root, bundlePath, *model)
		if err != nil {
			fmt.Fprintf(os.Stderr, "xdsconformance: %s: %v\n", name, err)
			failed = true
			continue
		}
		obs.Istio = IstioInfo{Version: *version, Model: *model, Module: *module, Commit: *commit}
		data, err := json.MarshalIndent(obs, "", "  ")
		if err != nil {
			fatal(err)
		}
		dst := filepath.Join(*out, name+".json")
		if err := os.WriteFile(dst, append(data, '\n'), 0o644); err != nil {
			fatal(err)
		}
		n := 0
		for _, rn := range obs.Runs {
			for _, s := range rn.States {
				n += len(s.Pushes)
			}
		}
		fmt.Printf("xdsconformance: %s: %d runs, %d pushes → %s\n", name, len(obs.Runs), n, dst)
	}
	if failed {
		os.Exit(1)
	}
}

// maxAttempts bounds how often a run whose timing failed is played again.
const maxAttempts = 5

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "xdsconformance:", err)
	os.Exit(1)
}

// defaultProxies are connected in every scenario: a sidecar in a client
// namespace, a sidecar in the Rollout's namespace, and the ingress gateway.
func defaultProxies(rolloutNS string) []proxySpec {
	out := []proxySpec{
		{Kind: "sidecar", Namespace: "client", Labels: map[string]string{"app": "tester"}},
		{Kind: "gateway", Namespace: "istio-system", Labels: map[string]string{"istio": "ingressgateway"}},
	}
	if rolloutNS != "client" {
		out = append(out, proxySpec{Kind: "sidecar", Namespace: rolloutNS, Labels: map[string]string{"app": "tester"}})
	}
	return out
}

func scenario(rolloutlint, root, bundlePath, model string) (*Observation, error) {
	b, err := loadBundle(bundlePath)
	if err != nil {
		return nil, err
	}
	p, _, err := runPlan(rolloutlint, bundlePath, model)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, bundlePath)
	if err != nil {
		rel = bundlePath
	}
	obs := &Observation{SchemaVersion: 1, Scenario: strings.TrimSuffix(filepath.Base(bundlePath), filepath.Ext(bundlePath)), Bundle: filepath.ToSlash(rel)}
	for _, pr := range p.Rollouts {
		id := pr.Rollout.Namespace + "/" + pr.Rollout.Name
		ro := b.rollouts[id]
		if ro == nil {
			return nil, fmt.Errorf("plan names Rollout %s, which the bundle lacks", id)
		}
		proxies := append(defaultProxies(pr.Rollout.Namespace), b.proxies...)
		seen := map[string]bool{}
		for i := range proxies {
			proxies[i].IP = fmt.Sprintf("10.20.0.%d", i+1)
			if seen[proxies[i].Name()] {
				return nil, fmt.Errorf("proxy %s listed twice", proxies[i].Name())
			}
			seen[proxies[i].Name()] = true
		}
		if len(obs.Proxies) == 0 {
			for _, px := range proxies {
				obs.Proxies = append(obs.Proxies, Proxy{Name: px.Name(), Kind: px.Kind, Namespace: px.Namespace})
			}
			sort.Slice(obs.Proxies, func(i, j int) bool { return obs.Proxies[i].Name < obs.Proxies[j].Name })
		}
		timings := []string{TimingInside}
		if hasSelectorWrite(pr) {
			timings = append(timings, TimingAfter)
		}
		for _, timing := range timings {
			for _, path := range []string{"states", "abort"} {
				start, states := pr.States[0], pr.States[1:]
				if path == "abort" {
					if len(pr.Abort) == 0 {
						continue
					}
					start, states = pr.States[pr.AbortFrom], pr.Abort
				}
				var rn RunObs
				for attempt := 1; ; attempt++ {
					var stalled *timingError
					rn = RunObs{Rollout: id, Path: path, Timing: timing, States: []StateObs{}}
					err := test.Wrap(func(t test.Failer) {
						r := &run{t: t, b: b, ro: ro, pr: &pr, timing: timing, proxies: proxies}
						if err := r.setup(start); err != nil {
							t.Fatal(err)
						}
						for _, s := range states {
							so, err := r.playState(s)
							if err != nil {
								errors.As(err, &stalled)
								t.Fatalf("%s step %d: %v", s.Phase, s.Step, err)
							}
							rn.States = append(rn.States, so)
						}
					})
					if err == nil {
						break
					}
					if stalled == nil || attempt == maxAttempts {
						return nil, fmt.Errorf("%s %s (%s): %w", id, path, timing, err)
					}
					// A stalled machine split a stage istiod would have
					// merged: the record would be wrong, so play it again.
					fmt.Fprintf(os.Stderr, "xdsconformance: %s %s %s (%s), attempt %d of %d: %v; playing it again\n",
						obs.Scenario, id, path, timing, attempt, maxAttempts, stalled)
				}
				obs.Runs = append(obs.Runs, rn)
			}
		}
	}
	return obs, nil
}

func hasSelectorWrite(pr planRollout) bool {
	for _, ss := range [][]planState{pr.States, pr.Abort} {
		for _, s := range ss {
			for _, w := range s.Writes {
				if w.Kind == "service-selector" {
					return true
				}
			}
		}
	}
	return false
}
