package xds

import (
	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// Citations are section numbers of /work/shared/reference/istio-xds-push-model.md.

// changes128 maps Argo's writes to config updates; it holds for every version
// so far (what changes is how istiod treats each kind).
var changes128 = []ChangeRow{
	{Write: plan.WriteVSWeight, Route: graph.HTTP,
		Events: []Event{{Kind: KindVirtualService, Effective: []Type{RDS}}},
		Cite:   "§9 row 1: VS weight change → full push, only RDS weighted_clusters change (§7: weight-0 entries dropped)"},
	{Write: plan.WriteVSWeight, Route: graph.TLS,
		Events: []Event{{Kind: KindVirtualService, Effective: []Type{LDS}}},
		Cite:   "§9 row 1 + §7: TLS weighted routes are rendered in LDS (tcp_proxy weighted_clusters)"},
	{Write: plan.WriteVSWeight, Route: graph.TCP,
		Events: []Event{{Kind: KindVirtualService, Effective: []Type{LDS}}},
		Cite:   "§9 row 1 + §7: TCP weighted routes are rendered in LDS (tcp_proxy weighted_clusters)"},
	{Write: plan.WriteVSRouteAdd,
		Events: []Event{{Kind: KindVirtualService, Effective: []Type{RDS}}},
		Cite:   "§9 row 2: routes appear in the route config → RDS"},
	{Write: plan.WriteVSRouteRemove,
		Events: []Event{{Kind: KindVirtualService, Effective: []Type{RDS}}},
		Cite:   "§9 row 2: routes disappear from the route config → RDS"},
	{Write: plan.WriteServiceSelector,
		Events: []Event{
			{Kind: KindServiceEntry},
			{Kind: KindEndpoints, Async: true, Effective: []Type{EDS}},
		},
		Cite: "§9 row 5 / §4.1: LabelSelectors differ → full push keyed ServiceEntry/<fqdn>, outbound CDS/LDS/RDS unchanged; endpoints follow through the EndpointSlice path (§4.2) → EDS"},
	{Write: plan.WriteDRSubsetLabel,
		Events: []Event{{Kind: KindDestinationRule, Effective: []Type{EDS}}},
		Cite:   "§9 row 3: subset label change → full push, only EDS of the subset clusters changes (§7: labels are not in the Cluster)"},
	{Write: plan.WriteScale,
		Events: []Event{{Kind: KindEndpoints, Async: true, Effective: []Type{EDS}}},
		Cite:   "§9 rows 7-8: ReplicaSet scaling → EndpointSlice churn as pods turn ready → incremental EDS"},
}

var sidecarFull = []Type{CDS, EDS, LDS, RDS}

var models = map[string]*Model{
	"1.28": {
		Version: "1.28", DebounceMillis: 100,
		Cite: "§0-§10: Istio 1.28.2 (ab413ac), default flags",
		Kinds: []KindRow{
			{Kind: KindVirtualService, Full: true, Sidecar: []Type{CDS, LDS, RDS}, Gateway: []Type{LDS, RDS}, EDS: EDSNone, AllGateways: true,
				Cite: "§2.5 + §3: VS is in skippedEdsConfigs, dropped by cdsNeedsPush for routers; proxyDependentOnConfig is true for every router"},
			{Kind: KindDestinationRule, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSAll, BlocksPartialEDS: true, AllGateways: true,
				Cite: "§2.1 canSendPartialFullPushes: a DR key blocks partial EDS; §3: every router pushed"},
			{Kind: KindServiceEntry, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial,
				Cite: "§4.1 + §2.1: Service update → full push, EDS partial-full for that host; routers scoped by host visibility"},
			{Kind: KindEndpoints, Full: false, Sidecar: []Type{EDS}, Gateway: []Type{EDS}, EDS: EDSPartial,
				Cite: "§4.2 + §2.1: EDSUpdate → incremental push, CLAs of the updated host only"},
		},
		Changes: changes128,
	},
	"1.30": {
		Version: "1.30", DebounceMillis: 100,
		Cite: "§11 1.30 (#59482): DR keys become delta-aware for EDS; a VS key blocks partial EDS",
		Kinds: []KindRow{
			{Kind: KindVirtualService, Full: true, Sidecar: []Type{CDS, LDS, RDS}, Gateway: []Type{LDS, RDS}, EDS: EDSNone, BlocksPartialEDS: true, AllGateways: true,
				Cite: "§11 1.30: a VS key blocks partial EDS; otherwise as §2.5"},
			{Kind: KindDestinationRule, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial, AllGateways: true,
				Cite: "§11 1.30: EDS partial pushes work for DestinationRule keys (deltaAwareEdsConfigs)"},
			{Kind: KindServiceEntry, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial,
				Cite: "§4.1 + §2.1, unchanged in 1.30"},
			{Kind: KindEndpoints, Full: false, Sidecar: []Type{EDS}, Gateway: []Type{EDS}, EDS: EDSPartial,
				Cite: "§4.2, unchanged in 1.30"},
		},
		Changes: changes128,
	},
	"1.31": {
		Version: "1.31", DebounceMillis: 100, NoFullSplit: true,
		Cite: "§11 1.31 (#59808): PushRequest.Full removed; endpoint-only updates are ConfigsUpdated={Endpoints}",
		Kinds: []KindRow{
			{Kind: KindVirtualService, Full: true, Sidecar: []Type{CDS, LDS, RDS}, Gateway: []Type{LDS, RDS}, EDS: EDSNone, BlocksPartialEDS: true, AllGateways: true,
				Cite: "§11: 1.31 builds on 1.30; config push, VS blocks partial EDS"},
			{Kind: KindDestinationRule, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial, AllGateways: true,
				Cite: "§11: DR delta-aware EDS since 1.30"},
			{Kind: KindServiceEntry, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial,
				Cite: "§11 1.31: EDSUpdate uses kind.ServiceEntry for a FullPush-equivalent config push"},
			{Kind: KindEndpoints, Full: false, Sidecar: []Type{EDS}, Gateway: []Type{EDS}, EDS: EDSPartial,
				Cite: "§11 1.31: incremental EDS is ConfigsUpdated={Endpoints}; computeProxyState skipped"},
		},
		Changes: changes128,
	},
}
