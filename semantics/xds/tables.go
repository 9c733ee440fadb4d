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
		Events: []Event{{Kind: KindServiceEntry}},
		Cite:   "§9 row 5 / §4.1: LabelSelectors differ → full push keyed ServiceEntry/<fqdn>, outbound CDS/LDS/RDS unchanged; the endpoints follow through the EndpointSlice path (§4.2, Endpoints rows)"},
	{Write: plan.WriteDRSubsetLabel,
		Events: []Event{{Kind: KindDestinationRule, Effective: []Type{EDS}}},
		Cite:   "§9 row 3: subset label change → full push, only EDS of the subset clusters changes (§7: labels are not in the Cluster)"},
	{Write: plan.WriteScale,
		Cite: "§9 rows 7-8: ReplicaSet scaling → EndpointSlice churn as pods start, turn ready, terminate and go (Endpoints rows)"},
}

// endpoints128 is how 1.28 treats the endpoint changes Argo's writes cause.
var endpoints128 = []EndpointRow{
	{Change: NotReadyAdded, None: true,
		Cite: "§4.2 endpointUpdateRequiresPush: a new UnHealthy endpoint needs no push"},
	{Change: NotReadyToEmpty, Kind: KindEndpoints,
		Cite:  "§4.2 + conformance: on a host whose endpoints were all gone, new not-ready endpoints are an incremental push (the shard's key was preserved); they are filtered from the CLA, nothing changes",
		Proof: "host-level, dynamic-stable-scale"},
	{Change: TurnedReady, Kind: KindEndpoints, Effective: []Type{EDS},
		Cite: "§9 row 8: HealthStatus differs → incremental EDS, the endpoints enter the CLA"},
	{Change: Terminating, Kind: KindEndpoints, Effective: []Type{EDS},
		Cite: "§9 row 8: terminating endpoints are dropped from the CLA → incremental EDS"},
	{Change: Deleted, Kind: KindEndpoints,
		Cite: "§4.2: an old endpoint disappeared → incremental EDS, the CLA already lacked it"},
	{Change: Reselected, Kind: KindEndpoints, Effective: []Type{EDS},
		Cite: "§9 row 5 / §4.2: the slice swaps the host's endpoints → incremental EDS"},
	{Change: Resized, Kind: KindEndpoints, Effective: []Type{EDS},
		Cite:  "§9 row 5 / §4.2: the slice swaps the host's endpoints for a different number → incremental EDS; nothing else changes (see Emptied)",
		Proof: "bluegreen, dynamic-stable-scale"},
	{Change: Emptied, Kind: KindEndpoints, Effective: []Type{EDS},
		Cite: "§4.2: len(eps)==0 → IncrementalPush, the shard is deleted (keys preserved). The selector write's full push keeps CDS: the push recomputes the " +
			"service targets of proxies in the Service's namespace (pilot/pkg/xds/ads.go computeProxyState → Proxy.ShouldUpdateServiceTargets), which " +
			"changes inbound clusters only for a proxy whose own pod the Service selects; the CDS change seen before on 1.28/1.30 came from proxies " +
			"whose pod istiod could not find at connect (1.28/1.30 computeProxyState sets service targets before workload labels; istio#60568, in 1.31, " +
			"swaps them). Re-recorded with every harness proxy owning its pod: no CDS change on 1.28.2, 1.30.3 or 1.31.0",
		Proof: "host-level, dynamic-stable-scale, header-mirror, multi-vs, bluegreen"},
	{Change: Filled, Kind: KindEndpoints, Effective: []Type{EDS},
		Cite:  "§4.2 + conformance: the emptied host kept its key, so its endpoints coming back are an incremental push; CDS unchanged as for an emptied host",
		Proof: "host-level, dynamic-stable-scale, header-mirror, multi-vs"},
	// A ServiceEntry's workloadSelector turns pods into workload instances
	// only once they are ready, and drops them when they stop being ready.
	{Change: NotReadyAdded, Selected: true, None: true,
		Cite:  "§4.4 + conformance: a not-ready pod is no workload instance of the ServiceEntry: no push",
		Proof: "service-entry"},
	{Change: NotReadyToEmpty, Selected: true, None: true,
		Cite:  "§4.4 + conformance: a not-ready pod is no workload instance of the ServiceEntry: no push",
		Proof: "service-entry"},
	{Change: Deleted, Selected: true, None: true,
		Cite:  "§4.4 + conformance: the terminating pod already left the ServiceEntry's endpoints: deleting it pushes nothing",
		Proof: "service-entry"},
}

// endpoints131: 1.31 sends not-ready endpoints as UNHEALTHY, and a host's
// first endpoints no longer make a full push.
var endpoints131 = func() []EndpointRow {
	out := append([]EndpointRow(nil), endpoints128...)
	for i := range out {
		if out[i].Selected {
			continue
		}
		switch out[i].Change {
		case NotReadyAdded, NotReadyToEmpty:
			out[i] = EndpointRow{Change: out[i].Change, Kind: KindEndpoints, Effective: []Type{EDS},
				Cite:  "§11 1.31 + conformance: not-ready endpoints are sent as UNHEALTHY → endpoints-only push, EDS changes, also on a host whose shard was deleted",
				Proof: "host-level"}
		case Filled:
			out[i] = EndpointRow{Change: Filled, Kind: KindEndpoints, Effective: []Type{EDS},
				Cite:  "§11 1.31 + conformance: a host's first endpoints are an endpoints-only update (kind.Endpoints), no full push",
				Proof: "host-level"}
		}
	}
	return out
}()

var sidecarFull = []Type{CDS, EDS, LDS, RDS}

var models = map[string]*Model{
	"1.28": {
		Version: "1.28", DebounceMillis: 100,
		Verified: Verification{Release: "1.28.2", Commit: "ab413ac6c1f40b2f7c69d97e0db4e712e4ef1ecc", Scenarios: 11},
		Cite:     "§0-§10: Istio 1.28.2 (ab413ac), default flags",
		Kinds: []KindRow{
			{Kind: KindVirtualService, Full: true, Sidecar: []Type{CDS, LDS, RDS}, Gateway: []Type{LDS, RDS}, EDS: EDSNone, AllGateways: true,
				Cite: "§2.5 + §3: VS is in skippedEdsConfigs, dropped by cdsNeedsPush for routers; proxyDependentOnConfig is true for every router"},
			{Kind: KindDestinationRule, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSAll, BlocksPartialEDS: true, AllGateways: true,
				Cite: "§2.1 canSendPartialFullPushes: a DR key blocks partial EDS; §3: every router pushed"},
			{Kind: KindServiceEntry, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial,
				Cite: "§4.1 + §2.1: Service update → full push, EDS partial-full for that host; routers scoped by host visibility"},
			{Kind: KindEndpoints, Full: false, Sidecar: []Type{EDS}, Gateway: []Type{EDS}, EDS: EDSPartial, KeyKind: KindServiceEntry,
				Cite: "§4.2 + §2.1: EDSUpdate → incremental push keyed ServiceEntry/<host>, CLAs of the updated host only; merged into a full push " +
					"(Full is the merge's, not the key's) the key is a Service update's to the generators: cdsNeedsPush keeps a ServiceEntry key for " +
					"routers, so a gateway gets CDS where the VirtualService key alone gives it none",
				Proof: "additional-subsets"},
		},
		Changes:   changes128,
		Endpoints: endpoints128,
	},
	"1.30": {
		Version: "1.30", DebounceMillis: 100, DelegateRootKeys: true,
		Verified: Verification{Release: "1.30.3", Commit: "56df41f63e513f834c9a3af33d8aed82d1d961f2", Scenarios: 11},
		Cite:     "§11 1.30 (#59482): DR keys become delta-aware for EDS; a VS key blocks partial EDS",
		Kinds: []KindRow{
			{Kind: KindVirtualService, Full: true, Sidecar: []Type{CDS, LDS, RDS}, Gateway: []Type{CDS, LDS, RDS}, EDS: EDSNone, BlocksPartialEDS: true, AllGateways: true,
				Cite:  "§11 1.30: a VS key blocks partial EDS; cdsNeedsPush no longer drops a VS key for routers (pushCdsGatewayConfig / skippedCdsConfigs)",
				Proof: "host-level, delegate"},
			{Kind: KindDestinationRule, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial, AllGateways: true,
				Cite: "§11 1.30: EDS partial pushes work for DestinationRule keys (deltaAwareEdsConfigs)"},
			{Kind: KindServiceEntry, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial,
				Cite: "§4.1 + §2.1, unchanged in 1.30"},
			{Kind: KindEndpoints, Full: false, Sidecar: []Type{EDS}, Gateway: []Type{EDS}, EDS: EDSPartial, KeyKind: KindServiceEntry,
				Cite:  "§4.2, unchanged in 1.30 (merged into a full push the key acts as a Service update, see 1.28)",
				Proof: "additional-subsets"},
		},
		Changes:   changes128,
		Endpoints: endpoints128,
	},
	"1.31": {
		Version: "1.31", DebounceMillis: 100, NoFullSplit: true, DelegateRootKeys: true,
		Verified: Verification{Release: "1.31.0", Commit: "eed52ebb66ad", Scenarios: 11},
		Cite:     "§11 1.31 (#59808): PushRequest.Full removed; endpoint-only updates are ConfigsUpdated={Endpoints}",
		Kinds: []KindRow{
			{Kind: KindVirtualService, Full: true, Sidecar: []Type{CDS, LDS, RDS}, Gateway: []Type{CDS, LDS, RDS}, EDS: EDSNone, BlocksPartialEDS: true, AllGateways: true,
				Cite:  "§11 1.31 + conformance: a VS key sends CDS to routers too; it is not delta-aware for EDS, so it blocks partial EDS for the proxies it concerns",
				Proof: "host-level"},
			{Kind: KindDestinationRule, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial, AllGateways: true,
				Cite: "§11: DR delta-aware EDS since 1.30"},
			{Kind: KindServiceEntry, Full: true, Sidecar: sidecarFull, Gateway: sidecarFull, EDS: EDSPartial,
				Cite: "§11 1.31: EDSUpdate uses kind.ServiceEntry for a FullPush-equivalent config push"},
			{Kind: KindEndpoints, Full: false, Sidecar: []Type{EDS}, Gateway: []Type{EDS}, EDS: EDSPartial, KeepsGatewayEDS: true,
				Cite: "§11 1.31: incremental EDS is ConfigsUpdated={Endpoints}; computeProxyState skipped. proxyDependentOnConfig filters only " +
					"ServiceEntry keys by host visibility for routers (pilot/pkg/xds/proxy_dependencies.go), so an Endpoints key stays for every gateway, " +
					"also one that cannot see the host: alone it sends such a gateway nothing, merged with a VirtualService key (partial EDS blocked) every CLA it watches",
				Proof: "header-mirror"},
		},
		Changes:   changes128,
		Endpoints: endpoints131,
	},
}
