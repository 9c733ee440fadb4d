package main

// The observation format (schema version 1), documented in
// docs/xds-conformance.md. The main module reads it back
// (internal/xdsconformance) without importing this module.

// Observation is what one scenario did against one istiod.
type Observation struct {
	SchemaVersion int       `json:"schemaVersion"`
	Istio         IstioInfo `json:"istio"`
	Scenario      string    `json:"scenario"`
	// Bundle is the scenario's bundle, relative to the repository root.
	Bundle  string   `json:"bundle"`
	Proxies []Proxy  `json:"proxies"`
	Runs    []RunObs `json:"runs"`
}

// IstioInfo names the istiod the observation was recorded against.
type IstioInfo struct {
	// Version is the release (1.31.0); Model is the plan model it is compared with (1.31).
	Version string `json:"version"`
	Model   string `json:"model"`
	// Module is the istio.io/istio module version or "source tree".
	Module string `json:"module"`
	Commit string `json:"commit"`
}

// Proxy is one connected proxy.
type Proxy struct {
	Name      string `json:"name"` // sidecar/<ns>, gateway/<ns>[/<label value>]
	Kind      string `json:"kind"` // sidecar | gateway
	Namespace string `json:"namespace"`
}

// RunObs is one pass over one path of one Rollout's plan.
type RunObs struct {
	Rollout string `json:"rollout"` // ns/name
	// Path is "states" (forward) or "abort".
	Path string `json:"path"`
	// Timing is "inside" (an EndpointSlice follows its Service selector
	// within milliseconds, inside the debounce window) or "after" (it lands
	// after the window closed).
	Timing string     `json:"timing"`
	States []StateObs `json:"states"`
}

// StateObs is what one plan state's writes caused.
type StateObs struct {
	Phase  string     `json:"phase"`
	Step   int        `json:"step"`
	Writes []WriteRef `json:"writes"`
	Pushes []PushObs  `json:"pushes"`
}

// WriteRef repeats the plan write the harness applied, so that a reader can
// tell a stale observation (the plan's writes changed) from a model change.
type WriteRef struct {
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Field  string `json:"field"`
	Old    string `json:"old"`
	New    string `json:"new"`
	Batch  int    `json:"batch"`
}

// PushObs is one debounced push istiod made.
type PushObs struct {
	// Stage says when it came: "write" (with a batch's API writes), "ready"
	// (pods turned ready), "deleted" (terminated pods deleted), "slice" (an
	// EndpointSlice following a selector after the window).
	Stage string `json:"stage"`
	Batch int    `json:"batch"`
	// Keys are the merged ConfigsUpdated, as Kind/ns/name or Kind/<host>.
	Keys []string `json:"keys"`
	// Full is PushRequest.Full (nil from 1.31, which has no such field).
	Full    *bool               `json:"full,omitempty"`
	Reasons map[string]int      `json:"reasons"`
	Proxies map[string]ProxyObs `json:"proxies"`
}

// ProxyObs is what one proxy got from one push.
type ProxyObs struct {
	// Pushed is ProxyNeedsPush's answer.
	Pushed bool `json:"pushed"`
	// Sent are the types istiod sent; Changed those whose content changed.
	Sent    []string `json:"sent"`
	Changed []string `json:"changed"`
	// EDSSent and EDSWatched count ClusterLoadAssignments sent and subscribed.
	EDSSent    int `json:"edsSent"`
	EDSWatched int `json:"edsWatched"`
	// RDSWatched counts the route configurations subscribed: a proxy with
	// none (a gateway no Gateway configures) cannot be sent RDS.
	RDSWatched int `json:"rdsWatched"`
	// Requested are types sent in answer to the proxy's own subscription
	// change (new clusters → EDS), not by the push itself.
	Requested []string `json:"requested,omitempty"`
}
