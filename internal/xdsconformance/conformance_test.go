package xdsconformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

const root = "../.."

// recordedVersions are the Istio releases whose observations are committed,
// one directory each under testdata/xds-conformance.
var recordedVersions = []string{"1.28.2", "1.30.3", "1.31.0"}

func scenarios(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "testdata", "xds-conformance", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	return out
}

// TestRecordedObservations compares the model's predictions with what the
// real istiod did, for every scenario and every recorded version, without
// building istio: a model change that breaks agreement fails here.
func TestRecordedObservations(t *testing.T) {
	want := scenarios(t)
	for _, v := range recordedVersions {
		t.Run(v, func(t *testing.T) {
			obs, err := Load(filepath.Join(root, "testdata", "xds-conformance", v))
			if err != nil {
				t.Fatal(err)
			}
			var have []string
			for _, o := range obs {
				have = append(have, o.Scenario)
				if o.Istio.Version != v || o.Istio.Commit == "" || o.Istio.Commit == "unknown" {
					t.Errorf("%s: recorded against %q at commit %q", o.Scenario, o.Istio.Version, o.Istio.Commit)
				}
			}
			for _, s := range want {
				if !slices.Contains(have, s) {
					t.Errorf("no observation of scenario %s for Istio %s (make conformance XDS_RECORD=1)", s, v)
				}
			}
			res, err := Compare(root, obs)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range res.Stale {
				t.Errorf("stale record (re-record with make conformance XDS_RECORD=1): %s", s)
			}
			known, err := LoadKnown(filepath.Join(root, "testdata", "xds-conformance", "known-differences.txt"))
			if err != nil {
				t.Fatal(err)
			}
			var unexpected []Row
			listed := 0
			for _, r := range res.Rows {
				why, isKnown := known[r.ID()]
				switch {
				case !r.Match && !isKnown:
					unexpected = append(unexpected, r)
				case isKnown && r.Match:
					t.Errorf("%s matches now: remove it from known-differences.txt", r.ID())
				case isKnown && why != strings.Join(r.Why, ", "):
					t.Errorf("%s differs in %q, known-differences.txt says %q", r.ID(), strings.Join(r.Why, ", "), why)
				case isKnown:
					listed++
				}
			}
			if len(unexpected) > 0 {
				t.Errorf("%d of %d pushes differ from the model:\n%s", len(unexpected), res.Pushes, Table(unexpected, true))
			}
			for id := range known {
				if strings.HasPrefix(id, v+" ") && !slices.ContainsFunc(res.Rows, func(r Row) bool { return r.ID() == id }) {
					t.Errorf("known difference %q names no compared push", id)
				}
			}
			if res.Pushes == 0 || res.Writes == 0 {
				t.Errorf("nothing compared: %d writes, %d pushes", res.Writes, res.Pushes)
			}
			t.Logf("Istio %s: %d scenarios, %d writes, %d pushes, %d match, %d known differences", v, len(obs), res.Writes, res.Pushes, res.Matched, listed)
		})
	}
}

// TestEveryProxyKind: each proxy kind the model predicts for (sidecars and
// gateways) is connected in some scenario, and some push reaches each.
func TestEveryProxyKind(t *testing.T) {
	obs, err := Load(filepath.Join(root, "testdata", "xds-conformance", recordedVersions[len(recordedVersions)-1]))
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	for _, o := range obs {
		kinds := map[string]string{}
		for _, p := range o.Proxies {
			kinds[p.Name] = p.Kind
		}
		for _, r := range o.Runs {
			for _, s := range r.States {
				for _, p := range s.Pushes {
					for n, g := range p.Proxies {
						if g.Pushed {
							reached[kinds[n]] = true
						}
					}
				}
			}
		}
	}
	for _, k := range []string{"sidecar", "gateway"} {
		if !reached[k] {
			t.Errorf("no scenario pushes a %s proxy", k)
		}
	}
}

// TestCompareDetectsDifferences: the comparison fails a push whose observed
// scope, types, changes or class differ from the prediction.
func TestCompareDetectsDifferences(t *testing.T) {
	dir := filepath.Join(root, "testdata", "xds-conformance", recordedVersions[len(recordedVersions)-1])
	if _, err := os.Stat(filepath.Join(dir, "host-level.json")); err != nil {
		t.Skip("no recorded host-level observation")
	}
	obs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var o *Observation
	for _, x := range obs {
		if x.Scenario == "host-level" {
			o = x
		}
	}
	mutations := map[string]func(p *Push){
		"scope": func(p *Push) {
			for n, g := range p.Proxies {
				g.Pushed = !g.Pushed
				p.Proxies[n] = g
				return
			}
		},
		"changes": func(p *Push) {
			for n, g := range p.Proxies {
				g.Changed = append(g.Changed, "LDS")
				p.Proxies[n] = g
			}
		},
		"keys": func(p *Push) { p.Keys = append(p.Keys, "VirtualService/x/y") },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			c := deepCopy(t, o)
			for i := range c.Runs[0].States {
				if len(c.Runs[0].States[i].Pushes) > 0 {
					mutate(&c.Runs[0].States[i].Pushes[0])
					break
				}
			}
			res, err := Compare(root, []*Observation{c})
			if err != nil {
				t.Fatal(err)
			}
			if res.Matched == res.Pushes {
				t.Errorf("mutation %s went unnoticed", name)
			}
		})
	}
	// A push the model does not predict is a mismatch too.
	c := deepCopy(t, o)
	for i := range c.Runs[0].States {
		if len(c.Runs[0].States[i].Pushes) > 0 {
			s := &c.Runs[0].States[i]
			s.Pushes = append(s.Pushes, s.Pushes[0])
			break
		}
	}
	if res, err := Compare(root, []*Observation{c}); err != nil || res.Matched == res.Pushes {
		t.Errorf("an extra observed push went unnoticed (err %v)", err)
	}
}

func deepCopy(t *testing.T, o *Observation) *Observation {
	t.Helper()
	c := *o
	c.Runs = nil
	for _, r := range o.Runs {
		rc := r
		rc.States = nil
		for _, s := range r.States {
			sc := s
			sc.Pushes = nil
			for _, p := range s.Pushes {
				pc := p
				pc.Keys = slices.Clone(p.Keys)
				pc.Proxies = map[string]ProxyGot{}
				for n, g := range p.Proxies {
					g.Changed = slices.Clone(g.Changed)
					pc.Proxies[n] = g
				}
				sc.Pushes = append(sc.Pushes, pc)
			}
			rc.States = append(rc.States, sc)
		}
		c.Runs = append(c.Runs, rc)
	}
	return &c
}

// TestInScope reads predicted scopes the way the comparison does.
func TestInScope(t *testing.T) {
	s := xds.Scope{SidecarNamespaces: []string{"*"}, SidecarExcept: []string{"team-a"}, GatewayNamespaces: []string{"edge"}}
	cases := map[Proxy]bool{
		{Kind: "sidecar", Namespace: "shop"}:         true,
		{Kind: "sidecar", Namespace: "team-a"}:       false,
		{Kind: "gateway", Namespace: "edge"}:         true,
		{Kind: "gateway", Namespace: "istio-system"}: false,
	}
	for p, want := range cases {
		if got := InScope(s, p); got != want {
			t.Errorf("InScope(%s/%s) = %v, want %v", p.Kind, p.Namespace, got, want)
		}
	}
}

// TestModelsNameTheirVerification: each model's Verified names the release,
// commit and scenario count of its recorded observations, so that `plan`
// states truthfully what the model was checked against.
func TestModelsNameTheirVerification(t *testing.T) {
	n := len(scenarios(t))
	for _, v := range recordedVersions {
		obs, err := Load(filepath.Join(root, "testdata", "xds-conformance", v))
		if err != nil || len(obs) == 0 {
			t.Errorf("Istio %s: no observations (%v)", v, err)
			continue
		}
		m, err := xds.ForVersion(obs[0].Istio.Model)
		if err != nil {
			t.Fatal(err)
		}
		want := xds.Verification{Release: v, Commit: obs[0].Istio.Commit, Scenarios: n}
		if m.Verified != want {
			t.Errorf("model %s: Verified = %+v, want %+v", m.Version, m.Verified, want)
		}
	}
}
