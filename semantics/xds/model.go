// Package xds predicts Istio's reaction to the writes of a rollout plan: the
// push class, the xDS types generated and those that effectively change, and
// the proxies in scope.
//
// The model is data: one Model per Istio version, made of rows that each cite
// the section of /work/shared/reference/istio-xds-push-model.md they encode.
// Supporting a new Istio version means adding a table, not changing code.
package xds

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// Type is an xDS resource type.
type Type string

// xDS types, in istiod's push order.
const (
	CDS Type = "CDS"
	EDS Type = "EDS"
	LDS Type = "LDS"
	RDS Type = "RDS"
)

var typeOrder = map[Type]int{CDS: 0, EDS: 1, LDS: 2, RDS: 3}

// Class is the kind of push istiod makes.
type Class string

// Push classes. Versions up to 1.30 distinguish full and incremental pushes;
// 1.31 removed the distinction (reference §11) and has config pushes and
// endpoints-only pushes.
const (
	ClassNone           Class = "none"
	ClassFull           Class = "full"             // PushContext rebuilt, EDS for every watched cluster (or none)
	ClassPartialFullEDS Class = "partial-full-eds" // full push whose EDS is limited to the updated hosts
	ClassIncrementalEDS Class = "incremental-eds"  // Full=false: EDS of the updated hosts only
	ClassConfig         Class = "config"           // 1.31: config push (no Full flag any more)
	ClassEndpointsOnly  Class = "endpoints-only"   // 1.31: only Endpoints keys, proxy state not recomputed
)

// IsFull reports whether the push rebuilds the PushContext and recomputes proxy state.
func (c Class) IsFull() bool {
	return c == ClassFull || c == ClassPartialFullEDS || c == ClassConfig
}

// ConfigKind is the key kind a change puts into PushRequest.ConfigsUpdated.
type ConfigKind string

// Config kinds Argo's writes produce.
const (
	KindVirtualService  ConfigKind = "VirtualService"
	KindDestinationRule ConfigKind = "DestinationRule"
	KindServiceEntry    ConfigKind = "ServiceEntry" // a Kubernetes Service update is keyed ServiceEntry/<fqdn>
	KindEndpoints       ConfigKind = "Endpoints"    // EndpointSlice churn (EDSUpdate)
)

// EDSMode is what EDS a config kind causes.
type EDSMode string

// EDS modes.
const (
	EDSNone    EDSMode = "none"    // kind is in skippedEdsConfigs
	EDSPartial EDSMode = "partial" // only the updated hosts' ClusterLoadAssignments
	EDSAll     EDSMode = "all"     // every watched ClusterLoadAssignment
)

// KindRow is how istiod treats one config kind.
type KindRow struct {
	Kind ConfigKind
	// Full is true when an update of this kind is a full push.
	Full bool
	// Sidecar and Gateway are the types generated for an in-scope sidecar and
	// gateway proxy (EDS included when EDS is not none).
	Sidecar, Gateway []Type
	EDS              EDSMode
	// BlocksPartialEDS makes EDS of a merged full push cover every watched
	// cluster when this key is present.
	BlocksPartialEDS bool
	// AllGateways is true when every gateway proxy is pushed whatever the
	// object's gateways or exportTo say.
	AllGateways bool
	// KeepsGatewayEDS is true when the key stays in the ConfigsUpdated of
	// every gateway, also one that cannot see the host: it sends such a
	// gateway nothing alone, but keeps EDS generation on, so a merged full
	// push whose partial EDS is blocked sends it every CLA it watches.
	KeepsGatewayEDS bool
	// KeyKind is the kind istiod puts into ConfigsUpdated for this update
	// when it differs from Kind (up to 1.30 an EndpointSlice update is keyed
	// ServiceEntry/<host>, like a Service update, with Full=false).
	KeyKind ConfigKind
	Cite    string
	// Proof names the conformance scenarios (testdata/xds-conformance/scenarios)
	// whose recorded observations show the row's behaviour.
	Proof string
}

// Stage is when, relative to the API write, a config update reaches istiod.
type Stage int

// Stages, in the order they happen after one reconcile's writes.
const (
	// StageWrite: with the API write, in its reconcile's debounce window.
	StageWrite Stage = iota
	// StageSlice: the EndpointSlice controller following a Service selector.
	// It writes within milliseconds, so the update usually lands inside the
	// write's window; a late one has a window of its own (Push.IfLate).
	StageSlice
	// StageReady: pods a scale-up created turn ready (seconds later).
	StageReady
	// StageDeleted: pods a scale-down made terminating are deleted (after
	// the termination grace period).
	StageDeleted
)

var stageNames = [...]string{"write", "slice", "ready", "deleted"}

// String names the stage as the plan JSON does.
func (s Stage) String() string { return stageNames[s] }

// Event is one config update a write causes.
type Event struct {
	Kind  ConfigKind
	Stage Stage
	// Effective are the types whose content actually changes.
	Effective []Type
}

// EndpointRow is how istiod treats one kind of endpoint change (reference
// §4.2 EndpointIndex.UpdateServiceEndpoints), per version.
type EndpointRow struct {
	Change EndpointChange
	// Selected restricts the row to hosts whose endpoints are pods a
	// ServiceEntry's workloadSelector selects (no EndpointSlice: the
	// endpoints follow pod readiness through workload instances).
	Selected bool
	// Kind is the update's key kind: KindEndpoints (incremental) or
	// KindServiceEntry (a full push: a shard created).
	Kind ConfigKind
	// None is true when istiod makes no push at all.
	None bool
	// Effective are the types whose content changes.
	Effective []Type
	Cite      string
	// Proof names the conformance scenarios that show the row's behaviour.
	Proof string
}

// EndpointChange classifies the endpoint changes Argo's writes cause.
type EndpointChange string

// Endpoint changes, as the EndpointSlice controller writes them.
const (
	// NotReadyAdded: a scale-up's pods join the slice not ready.
	NotReadyAdded EndpointChange = "not-ready-added"
	// NotReadyToEmpty: the same, on a host whose endpoints were all gone.
	NotReadyToEmpty EndpointChange = "not-ready-added-to-empty-host"
	// TurnedReady: those pods turn ready.
	TurnedReady EndpointChange = "turned-ready"
	// Terminating: a scale-down's pods turn terminating.
	Terminating EndpointChange = "terminating"
	// Deleted: terminating pods are deleted.
	Deleted EndpointChange = "deleted"
	// Reselected: a selector change swaps a host's endpoints for other pods.
	Reselected EndpointChange = "reselected"
	// Resized: a selector change swaps them for a different number of pods.
	Resized EndpointChange = "resized"
	// Emptied: a selector change leaves the host with no endpoints.
	Emptied EndpointChange = "emptied"
	// Filled: a selector change gives endpoints to a host that had none.
	Filled EndpointChange = "filled"
)

// ChangeRow maps a plan write to config updates.
type ChangeRow struct {
	Write plan.WriteKind
	// Route restricts the row to VirtualService writes of a route list ("" = any).
	Route  graph.RouteKind
	Events []Event
	Cite   string
}

// Model is the push model of one Istio version.
type Model struct {
	Version string
	// NoFullSplit is true from 1.31: there is no Full flag (reference §11).
	NoFullSplit bool
	// DelegateRootKeys is true when a delegate VirtualService's update also
	// carries its roots' keys (conformance scenario delegate: 1.31 adds them,
	// 1.28 keys the delegate alone; both scope it by its roots).
	DelegateRootKeys bool
	Kinds            []KindRow
	Changes          []ChangeRow
	Endpoints        []EndpointRow
	// DebounceMillis is PILOT_DEBOUNCE_AFTER (reference §5).
	DebounceMillis int
	Cite           string
	// Verified says against which istiod the table was checked.
	Verified Verification
}

// Verification names the istiod release and commit a model was checked
// against by the xDS conformance harness (docs/xds-conformance.md), and on
// how many scenarios: internal/xdsconformance keeps it in step with the
// recorded observations.
type Verification struct {
	Release   string `json:"release"`
	Commit    string `json:"commit"`
	Scenarios int    `json:"scenarios"`
}

// String is the sentence the plan output prints.
func (v Verification) String() string {
	if v.Release == "" {
		return "not verified against istiod"
	}
	return fmt.Sprintf("verified against istiod %s (commit %s) on %d conformance scenarios", v.Release, v.Commit, v.Scenarios)
}

// Versions lists the supported Istio versions; the first is the default.
func Versions() []string { return []string{"1.28", "1.30", "1.31"} }

// DefaultVersion is the model used when none is chosen.
const DefaultVersion = "1.28"

// ForVersion returns the model of an Istio version ("" = default), or an error
// naming the supported ones.
func ForVersion(v string) (*Model, error) {
	if v == "" {
		v = DefaultVersion
	}
	v = strings.TrimPrefix(v, "v")
	m, ok := models[v]
	if !ok {
		return nil, fmt.Errorf("unsupported Istio version %q (supported: %s)", v, strings.Join(Versions(), ", "))
	}
	return m, nil
}

func (m *Model) kind(k ConfigKind) *KindRow {
	for i := range m.Kinds {
		if m.Kinds[i].Kind == k {
			return &m.Kinds[i]
		}
	}
	return nil
}

func (m *Model) endpoint(c EndpointChange, selected bool) *EndpointRow {
	var fallback *EndpointRow
	for i := range m.Endpoints {
		r := &m.Endpoints[i]
		if r.Change != c {
			continue
		}
		if r.Selected == selected {
			return r
		}
		if !r.Selected {
			fallback = r
		}
	}
	return fallback
}

func (m *Model) change(w plan.Write) *ChangeRow {
	for i := range m.Changes {
		c := &m.Changes[i]
		if c.Write == w.Kind && (c.Route == "" || c.Route == w.RouteKind) {
			return c
		}
	}
	return nil
}

func sortTypes(ts []Type) []Type {
	sort.Slice(ts, func(i, j int) bool { return typeOrder[ts[i]] < typeOrder[ts[j]] })
	return ts
}
