// Package xdsconformance compares the xDS push predictions of `rolloutlint
// plan` (semantics/xds) with what the real istiod did, as recorded by the
// harness in conformance/xds (a module of its own, so that this module never
// depends on istio.io/istio). The record format is documented in
// docs/xds-conformance.md; the harness writes it, this package reads it.
package xdsconformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Observation is what one scenario did against one istiod (schema version 1).
type Observation struct {
	SchemaVersion int       `json:"schemaVersion"`
	Istio         IstioInfo `json:"istio"`
	Scenario      string    `json:"scenario"`
	Bundle        string    `json:"bundle"`
	Proxies       []Proxy   `json:"proxies"`
	Runs          []Run     `json:"runs"`
}

// IstioInfo names the istiod an observation was recorded against.
type IstioInfo struct {
	Version string `json:"version"`
	Model   string `json:"model"`
	Module  string `json:"module"`
	Commit  string `json:"commit"`
}

// Proxy is one connected proxy.
type Proxy struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"` // sidecar | gateway
	Namespace string `json:"namespace"`
}

// Run is one pass over one path of one Rollout's plan.
type Run struct {
	Rollout string  `json:"rollout"`
	Path    string  `json:"path"`   // states | abort
	Timing  string  `json:"timing"` // inside | after
	States  []State `json:"states"`
}

// State is what one plan state's writes caused.
type State struct {
	Phase  string     `json:"phase"`
	Step   int        `json:"step"`
	Writes []WriteRef `json:"writes"`
	Pushes []Push     `json:"pushes"`
}

// WriteRef is a plan write as the harness applied it.
type WriteRef struct {
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Field  string `json:"field"`
	Old    string `json:"old"`
	New    string `json:"new"`
	Batch  int    `json:"batch"`
}

// Push is one debounced push istiod made.
type Push struct {
	Stage   string              `json:"stage"`
	Batch   int                 `json:"batch"`
	Keys    []string            `json:"keys"`
	Full    *bool               `json:"full,omitempty"`
	Reasons map[string]int      `json:"reasons"`
	Proxies map[string]ProxyGot `json:"proxies"`
}

// ProxyGot is what one proxy got from one push.
type ProxyGot struct {
	Pushed     bool     `json:"pushed"`
	Sent       []string `json:"sent"`
	Changed    []string `json:"changed"`
	EDSSent    int      `json:"edsSent"`
	EDSWatched int      `json:"edsWatched"`
	RDSWatched int      `json:"rdsWatched"`
	Requested  []string `json:"requested,omitempty"`
}

// Load reads every <scenario>.json of a directory.
func Load(dir string) ([]*Observation, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*Observation
	for _, n := range names {
		raw, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		o := &Observation{}
		if err := json.Unmarshal(raw, o); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if o.SchemaVersion != 1 {
			return nil, fmt.Errorf("%s: schema version %d, want 1", n, o.SchemaVersion)
		}
		out = append(out, o)
	}
	return out, nil
}
