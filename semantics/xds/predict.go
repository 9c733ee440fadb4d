package xds

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"

	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// Push is one debounced push istiod makes: the config updates of one window
// merged (reference §5: Full wins, ConfigsUpdated are unioned).
type Push struct {
	// Window orders the pushes of a state.
	Window int `json:"window"`
	// Writes are the indexes (in the state's writes) of the writes feeding this push.
	Writes []int `json:"writes"`
	// Keys are the ConfigsUpdated keys, sorted.
	Keys  []string `json:"keys"`
	Class Class    `json:"class"`
	EDS   EDSMode  `json:"eds"`
	// SidecarTypes and GatewayTypes are the xDS types generated for an in-scope proxy.
	SidecarTypes []Type `json:"sidecarTypes"`
	GatewayTypes []Type `json:"gatewayTypes"`
	// Effective are the types whose content changes.
	Effective []Type `json:"effective"`
	Scope     Scope  `json:"scope"`
	// Merged is true when debounce folds more than one config key into this push.
	Merged bool `json:"merged"`
	// Async is true when the push comes from EndpointSlice churn after the writes.
	Async bool `json:"async"`
	// Stage is when the push's updates come (Stage: write, slice, ready, deleted).
	Stage string   `json:"stage"`
	Cites []string `json:"cites"`

	// parts are the window's updates with their scopes: istiod narrows
	// ConfigsUpdated to what each proxy depends on before the generators
	// run (reference §3 filterRelevantUpdates), so types and EDS are per
	// proxy (ForProxy).
	parts []part
}

// part is one update of a push and the proxies it concerns.
type part struct {
	row   *KindRow
	scope Scope
	// asFull is the row of the update's key kind when it differs (up to
	// 1.30 an EndpointSlice update is keyed ServiceEntry/<host>): merged
	// into a full push, the key is a Service update's to the generators.
	asFull *KindRow
}

// rowFor is the row a part's update acts as in a push that is full or not.
func (pt part) rowFor(pushFull bool) *KindRow {
	if pushFull && pt.asFull != nil {
		return pt.asFull
	}
	return pt.row
}

// ProxyKind is the kind of a proxy: sidecar or gateway (router).
type ProxyKind string

// Proxy kinds the model predicts for.
const (
	Sidecar ProxyKind = "sidecar"
	Gateway ProxyKind = "gateway"
)

// ForProxy is what one proxy in namespace ns gets from the push: whether it
// is pushed, the types generated, and its EDS, from the updates it depends
// on. full tells the generators the push is full (CDS, LDS and RDS run).
func (p *Push) ForProxy(kind ProxyKind, ns string) (reached bool, types []Type, eds EDSMode) {
	set := map[Type]bool{}
	pushFull := false
	for _, pt := range p.parts {
		pushFull = pushFull || pt.row.Full
	}
	full, anyEDS, blocks, kept := false, false, false, false
	for _, pt := range p.parts {
		row := pt.rowFor(pushFull)
		if !pt.scope.Reaches(kind, ns) {
			kept = kept || kind == Gateway && row.KeepsGatewayEDS
			continue
		}
		reached = true
		ts := row.Sidecar
		if kind == Gateway {
			ts = row.Gateway
		}
		for _, t := range ts {
			set[t] = true
		}
		full = full || row.Full
		if row.EDS != EDSNone {
			anyEDS = true
		}
		if row.EDS == EDSAll || row.BlocksPartialEDS {
			blocks = true
		}
	}
	if !reached {
		return false, typeLists[0], EDSNone
	}
	if !full {
		set = map[Type]bool{EDS: true}
	}
	if kept && full && blocks {
		// An Endpoints key of a host it cannot see: every watched CLA.
		anyEDS, set[EDS] = true, true
	}
	eds = EDSNone
	switch {
	case anyEDS && full && blocks:
		eds = EDSAll
	case anyEDS:
		eds = EDSPartial
	}
	if !anyEDS {
		delete(set, EDS)
	}
	return true, typeList(set), eds
}

// Reaches reports whether the scope holds a proxy of a kind in a namespace.
func (s Scope) Reaches(kind ProxyKind, ns string) bool {
	if kind == Gateway {
		return s.AllGateways || slices.Contains(s.GatewayNamespaces, ns)
	}
	if len(s.SidecarNamespaces) == 1 && s.SidecarNamespaces[0] == "*" {
		return !slices.Contains(s.SidecarExcept, ns)
	}
	return slices.Contains(s.SidecarNamespaces, ns)
}

// StatePushes are the pushes that lead into one plan state.
type StatePushes struct {
	Pushes []Push `json:"pushes"`
	// IfLate are the pushes when an EndpointSlice that follows a Service
	// selector write lands after the debounce window instead of inside it
	// (nil when the timing makes no difference).
	IfLate []Push `json:"pushesIfLate,omitempty"`
}

// Summary counts the pushes of a plan's forward path.
type Summary struct {
	// FullPushes rebuild the PushContext (full, partial-full EDS, or 1.31 config).
	FullPushes int `json:"fullPushes"`
	// EndpointPushes are incremental EDS (or 1.31 endpoints-only) pushes.
	EndpointPushes int `json:"endpointPushes"`
	// AllGatewayPushes are full pushes that reach every gateway proxy.
	AllGatewayPushes int `json:"allGatewayPushes"`
	// MergedPushes fold several config keys into one push.
	MergedPushes int `json:"mergedPushes"`
}

// Prediction is the xDS reaction to a plan, state by state.
type Prediction struct {
	IstioVersion string        `json:"istioVersion"`
	States       []StatePushes `json:"states"`
	Abort        []StatePushes `json:"abort,omitempty"`
	Summary      Summary       `json:"summary"`
}

// Predict maps every write of a plan to pushes.
func Predict(m *Model, sc *Scoper, p *plan.Plan) *Prediction {
	pr := &Prediction{IstioVersion: m.Version}
	var sim *endpointsSim
	if len(p.States) > 0 {
		sim = newEndpointsSim(p.States[0])
	}
	for i := range p.States {
		sp := m.statePushes(sc, sim, p.States[i].Writes)
		pr.States = append(pr.States, sp)
		for _, x := range sp.Pushes {
			switch {
			case x.Class.IsFull():
				pr.Summary.FullPushes++
			case x.Class != ClassNone:
				pr.Summary.EndpointPushes++
			}
			if x.Class.IsFull() && x.Scope.AllGateways {
				pr.Summary.AllGatewayPushes++
			}
			if x.Merged {
				pr.Summary.MergedPushes++
			}
		}
	}
	if len(p.Abort) > 0 && p.AbortFrom < len(p.States) {
		sim = newEndpointsSim(p.States[p.AbortFrom])
		for i := range p.Abort {
			pr.Abort = append(pr.Abort, m.statePushes(sc, sim, p.Abort[i].Writes))
		}
	}
	return pr
}

// StatePushes predicts the pushes of one state's writes on their own, with
// the cluster as the writes' first state leaves it unknown: every host is
// taken to have endpoints. Predict follows the endpoints through the plan.
func (m *Model) StatePushes(sc *Scoper, writes []plan.Write) StatePushes {
	return m.statePushes(sc, nil, writes)
}

// statePushes predicts one state's pushes and advances sim past its
// writes. When a selector write's EndpointSlice update would land in a
// window of its own if it came late, IfLate holds that prediction.
func (m *Model) statePushes(sc *Scoper, sim *endpointsSim, writes []plan.Write) StatePushes {
	late := sim.clone()
	sp := StatePushes{Pushes: m.windows(sc, sim, writes, false)}
	for _, w := range writes {
		if w.Kind == plan.WriteServiceSelector {
			alt := m.windows(sc, late, writes, true)
			if !samePushes(alt, sp.Pushes) {
				sp.IfLate = alt
			}
			break
		}
	}
	return sp
}

func samePushes(a, b []Push) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Class != b[i].Class || !slices.Equal(a[i].Keys, b[i].Keys) || !slices.Equal(a[i].Effective, b[i].Effective) {
			return false
		}
	}
	return true
}

// slotHost is a host in one batch.
type slotHost struct {
	batch int
	host  string
}

// windowEvent is one config update placed in a debounce window.
type windowEvent struct {
	write int
	ev    Event
	cite  string
	hosts []string
	obj   *plan.Write // in the state's writes: a copy per event would cost ~170 bytes each
}

// windows groups the writes of one state into debounce windows and merges
// each window into one push. Writes of one batch (one reconcile) are API
// calls made back to back and share a window; the EndpointSlice update that
// follows a selector write joins it (or, late, has a window of its own);
// pods turning ready and terminated pods being deleted come seconds later,
// each in a window of its own (reference §9 "Debounce prediction").
func (m *Model) windows(sc *Scoper, sim *endpointsSim, writes []plan.Write, late bool) []Push {
	type slot struct {
		batch int
		stage Stage
	}
	windows := map[slot][]windowEvent{}
	add := func(b int, we windowEvent) {
		st := we.ev.Stage
		if st == StageSlice && !late {
			st = StageWrite
		}
		windows[slot{b, st}] = append(windows[slot{b, st}], we)
	}
	// Hosts whose selector a batch writes: with a late slice, their pod
	// changes of that batch are late as well.
	lateHost := map[slotHost]bool{}
	for _, w := range writes {
		if late && w.Kind == plan.WriteServiceSelector {
			for _, h := range w.Hosts {
				lateHost[slotHost{w.Batch, h}] = true
			}
		}
	}
	for i, w := range writes {
		ch := m.change(w)
		if ch == nil {
			continue
		}
		for _, ev := range ch.Events {
			we := windowEvent{write: i, ev: ev, cite: ch.Cite, obj: &writes[i]}
			if ev.Kind == KindServiceEntry || ev.Kind == KindEndpoints {
				we.hosts = w.Hosts
				if len(we.hosts) == 0 {
					continue // no Service selects these pods: no endpoints anywhere change
				}
			}
			add(w.Batch, we)
		}
		for _, e := range sim.apply(w) {
			row := m.endpoint(e.change, sc.WorkloadEntryHost(e.host))
			if row == nil || row.None {
				continue
			}
			if late && e.stage == StageWrite && lateHost[slotHost{w.Batch, e.host}] {
				// The host's one EndpointSlice carries the pod change too: it
				// lands with the selector's late slice (conformance: pingpong).
				e.stage = StageSlice
			}
			add(w.Batch, windowEvent{write: i, ev: Event{Kind: row.Kind, Stage: e.stage, Effective: row.Effective}, cite: row.Cite, hosts: []string{e.host}, obj: &writes[i]})
		}
	}
	slots := make([]slot, 0, len(windows))
	for s := range windows {
		slots = append(slots, s)
	}
	sort.Slice(slots, func(i, j int) bool {
		if slots[i].batch != slots[j].batch {
			return slots[i].batch < slots[j].batch
		}
		return slots[i].stage < slots[j].stage
	})
	var out []Push
	for n, s := range slots {
		x := m.merge(sc, windows[s])
		x.Window, x.Async, x.Stage = n+1, s.stage != StageWrite, s.stage.String()
		out = append(out, x)
	}
	return out
}

// merge folds one window's updates into a push (reference §5 PushRequest.Merge).
func (m *Model) merge(sc *Scoper, evs []windowEvent) Push {
	var (
		x                    Push
		full, anyEDS, blocks bool
		keys                 = map[string]bool{}
		writes               = map[int]bool{}
		side, gw, eff        = map[Type]bool{}, map[Type]bool{}, map[Type]bool{}
		cites                = map[string]bool{}
	)
	var scope *Scope
	for _, we := range evs {
		kr := m.kind(we.ev.Kind)
		if kr == nil {
			continue
		}
		writes[we.write] = true
		keyKind := kr.Kind
		if kr.KeyKind != "" {
			keyKind = kr.KeyKind
		}
		switch we.ev.Kind {
		case KindVirtualService, KindDestinationRule:
			keys[fmt.Sprintf("%s/%s/%s", keyKind, we.obj.Object.Namespace, we.obj.Object.Name)] = true
			if we.ev.Kind == KindVirtualService && m.DelegateRootKeys {
				for _, p := range sc.Parents(we.obj.Resource) {
					keys[fmt.Sprintf("%s/%s/%s", keyKind, p.Namespace, p.Name)] = true
				}
			}
		default:
			for _, h := range we.hosts {
				keys[FQDNKey(keyKind, h)] = true
			}
		}
		full = full || kr.Full
		if kr.EDS != EDSNone {
			anyEDS = true
		}
		if kr.EDS == EDSAll || kr.BlocksPartialEDS {
			blocks = true
		}
		for _, t := range kr.Sidecar {
			side[t] = true
		}
		for _, t := range kr.Gateway {
			gw[t] = true
		}
		for _, t := range we.ev.Effective {
			eff[t] = true
		}
		cites[shortCite(kr.Cite)] = true
		if we.cite != "" {
			cites[shortCite(we.cite)] = true
		}
		var s Scope
		switch we.ev.Kind {
		case KindVirtualService, KindDestinationRule:
			s = sc.For(we.ev.Kind, *we.obj, kr.AllGateways)
		default:
			s = sc.For(we.ev.Kind, plan.Write{Hosts: we.hosts}, kr.AllGateways)
		}
		pt := part{row: kr, scope: s}
		if kr.KeyKind != "" {
			pt.asFull = m.kind(kr.KeyKind)
		}
		x.parts = append(x.parts, pt)
		if scope == nil {
			scope = &s
		} else {
			u := scope.Union(s)
			scope = &u
		}
	}
	_ = blocks
	if full {
		for _, pt := range x.parts {
			if pt.asFull != nil {
				for _, t := range pt.asFull.Sidecar {
					side[t] = true
				}
				for _, t := range pt.asFull.Gateway {
					gw[t] = true
				}
			}
		}
	}
	// EDS is decided per proxy from the updates it depends on: partial
	// when some proxy gets only the updated hosts' CLAs.
	x.EDS = x.probeEDS()
	if !anyEDS {
		delete(side, EDS)
		delete(gw, EDS)
	}
	switch {
	case len(keys) == 0:
		x.Class = ClassNone
	case m.NoFullSplit && full:
		x.Class = ClassConfig
	case m.NoFullSplit:
		x.Class = ClassEndpointsOnly
	case full && x.EDS == EDSPartial:
		x.Class = ClassPartialFullEDS
	case full:
		x.Class = ClassFull
	default:
		x.Class = ClassIncrementalEDS
	}
	if !full {
		// Incremental pushes never regenerate CDS, LDS or RDS (reference §2.2-2.4: !req.Full → false).
		side, gw = map[Type]bool{EDS: true}, map[Type]bool{EDS: true}
	}
	x.Keys = sortedKeys(keys)
	x.Merged = len(x.Keys) > 1
	for w := range writes {
		x.Writes = append(x.Writes, w)
	}
	sort.Ints(x.Writes)
	x.SidecarTypes, x.GatewayTypes, x.Effective = typeList(side), typeList(gw), typeList(eff)
	if scope != nil {
		x.Scope = *scope
	}
	if x.Scope.SidecarNamespaces == nil {
		x.Scope.SidecarNamespaces = []string{} // JSON: always a list
	}
	for c := range cites {
		x.Cites = append(x.Cites, c)
	}
	sort.Strings(x.Cites)
	return x
}

// probeEDS is the push's EDS over the proxies its scopes name: partial when
// one gets only the updated hosts, all when one gets every watched cluster.
func (p *Push) probeEDS() EDSMode {
	const other = "\x00other" // a namespace no scope names
	gwNS, scNS := map[string]bool{other: true, RootNamespace: true}, map[string]bool{other: true}
	for _, pt := range p.parts {
		for _, n := range pt.scope.GatewayNamespaces {
			gwNS[n] = true
		}
		for _, n := range pt.scope.SidecarNamespaces {
			scNS[n] = true
		}
		for _, n := range pt.scope.SidecarExcept {
			scNS[n] = true
		}
	}
	best := EDSNone
	probe := func(k ProxyKind, ns string) {
		if _, _, e := p.ForProxy(k, ns); e == EDSPartial || e == EDSAll && best == EDSNone {
			best = e
		}
	}
	for n := range gwNS {
		probe(Gateway, n)
	}
	for n := range scNS {
		if n != "*" {
			probe(Sidecar, n)
		}
	}
	return best
}

// shortCite keeps the section part of a table citation ("§9 row 1"); the
// explanation after the colon stays in the table.
func shortCite(c string) string {
	if i := strings.Index(c, ":"); i > 0 {
		return c[:i]
	}
	return c
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// typeList returns the types of m in push order. A prediction keeps three
// such lists per push for as long as the RL6xxx rules run, and there are only
// sixteen different ones, so pushes share them (typeLists): callers must not
// modify a returned list.
func typeList(m map[Type]bool) []Type {
	mask := 0
	for t := range m {
		i, known := typeOrder[t]
		if !known || 1<<i >= len(typeLists) { // a type the table does not hold: a list of its own
			out := make([]Type, 0, len(m))
			for t := range m {
				out = append(out, t)
			}
			return sortTypes(out)
		}
		mask |= 1 << i
	}
	return typeLists[mask]
}

// typeLists holds every list of the four xDS types in push order, by the
// bitmask of their typeOrder positions. The empty list is not nil: pushes
// list no types as [] in JSON.
var typeLists = func() (out [1 << 4][]Type) {
	all := sortTypes([]Type{CDS, EDS, LDS, RDS})
	for mask := range out {
		out[mask] = []Type{}
		for _, t := range all {
			if mask&(1<<typeOrder[t]) != 0 {
				out[mask] = append(out[mask], t)
			}
		}
		out[mask] = slices.Clip(out[mask])
	}
	return out
}()

// FQDNKey formats a host key the way the prediction names it.
func FQDNKey(kind ConfigKind, host string) string { return string(kind) + "/" + host }

// Predicted is a plan with its prediction under one model.
type Predicted struct {
	Plan       *plan.Plan
	Prediction *Prediction
}

// Memos of ScoperFor and ForGraph (one prediction per Istio version).
var (
	scopers     = graph.NewMemo[*Scoper]("xds.ScoperFor")
	predictions = graph.NewKeyedMemo[string, []Predicted]("xds.ForGraph")
)

// ScoperFor returns the graph's Scoper, built once per graph.
func ScoperFor(g *graph.Graph) *Scoper {
	return scopers.Get(g, func() *Scoper { return NewScoper(g) })
}

// ForGraph returns every Rollout's plan with its prediction under a model,
// computed once per graph and version and shared by the RL6xxx rules.
func ForGraph(g *graph.Graph, m *Model) []Predicted {
	return predictions.Get(g, m.Version, func() []Predicted {
		sc := ScoperFor(g)
		var out []Predicted
		for _, p := range plan.ForGraph(g) {
			out = append(out, Predicted{Plan: p, Prediction: Predict(m, sc, p)})
		}
		return out
	})
}
