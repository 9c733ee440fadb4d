package xds

import (
	"slices"
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
	var set typeSet
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
		set.addAll(ts)
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
		set = typeSet{mask: edsBit}
	}
	if kept && full && blocks {
		// An Endpoints key of a host it cannot see: every watched CLA.
		anyEDS = true
		set.mask |= edsBit
	}
	eds = EDSNone
	switch {
	case anyEDS && full && blocks:
		eds = EDSAll
	case anyEDS:
		eds = EDSPartial
	}
	if !anyEDS {
		set.mask &^= edsBit
	}
	return true, set.list(), eds
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
	var s scratch
	return m.predict(sc, p, &s)
}

// Predictor predicts plan after plan in the same memory: the Prediction
// its Predict returns, and every slice in it, is valid until its next call.
// `plan` formats each Rollout's prediction and drops it, and the pushes of
// a large bundle's Rollouts, allocated anew, were a third of what it
// allocated. A Predictor is not safe for concurrent use.
type Predictor struct {
	s scratch
}

// Predict is Predict, in the Predictor's memory: see Predictor.
func (pd *Predictor) Predict(m *Model, sc *Scoper, p *plan.Plan) *Prediction {
	s := &pd.s
	if !s.reuse {
		s.reuse = true
		s.pushes.reuse, s.parts.reuse, s.strs.reuse, s.ints.reuse = true, true, true, true
	}
	s.pushes.reset()
	s.parts.reset()
	s.strs.reset()
	s.ints.reset()
	return m.predict(sc, p, s)
}

// scratch is the memory of one prediction: the windows' updates, and,
// when reuse is set (a Predictor's), the pushes' arrays, reused by the
// next prediction.
type scratch struct {
	evs   []windowEvent // the windows' updates, shared by every state
	reuse bool
	// The arrays of the pushes, their parts, keys and cites, and writes.
	pushes arena[Push]
	parts  arena[part]
	strs   arena[string]
	ints   arena[int]
	// pr, states and abort are the last prediction's (reuse).
	pr            Prediction
	states, abort []StatePushes
	// lateHost and created are windows' sets, emptied for each call.
	lateHost, created map[slotHost]bool
}

// arena hands out slices of a few large arrays, all reused after reset,
// when reuse is set; without reuse, each slice is allocated on its own.
type arena[T any] struct {
	reuse bool
	buf   []T
}

// make returns a slice of n elements, not zeroed when reused. Its capacity
// is n: appending past it copies, never writing over the next slice.
func (a *arena[T]) make(n int) []T {
	if !a.reuse || n == 0 {
		return make([]T, n)
	}
	if n > cap(a.buf)-len(a.buf) {
		a.buf = make([]T, 0, max(n, 2*cap(a.buf), 256))
	}
	lo := len(a.buf)
	a.buf = a.buf[:lo+n]
	return a.buf[lo : lo+n : lo+n]
}

// reset makes the arrays free for reuse; the largest is kept.
func (a *arena[T]) reset() { a.buf = a.buf[:0] }

func (m *Model) predict(sc *Scoper, p *plan.Plan, s *scratch) *Prediction {
	pr := &Prediction{}
	if s.reuse {
		pr = &s.pr
		*pr = Prediction{States: s.states[:0], Abort: s.abort[:0]}
	}
	pr.IstioVersion = m.Version
	var sim *endpointsSim
	if len(p.States) > 0 {
		sim = newEndpointsSim(p.States[0])
	}
	for i := range p.States {
		sp := m.statePushes(sc, sim, p.States[i].Writes, s)
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
			pr.Abort = append(pr.Abort, m.statePushes(sc, sim, p.Abort[i].Writes, s))
		}
	}
	if s.reuse {
		s.states, s.abort = pr.States, pr.Abort
		if len(pr.States) == 0 {
			pr.States = nil // as Predict leaves them
		}
		if len(pr.Abort) == 0 {
			pr.Abort = nil
		}
	}
	return pr
}

// StatePushes predicts the pushes of one state's writes on their own, with
// the cluster as the writes' first state leaves it unknown: every host is
// taken to have endpoints. Predict follows the endpoints through the plan.
func (m *Model) StatePushes(sc *Scoper, writes []plan.Write) StatePushes {
	var s scratch
	return m.statePushes(sc, nil, writes, &s)
}

// statePushes predicts one state's pushes and advances sim past its
// writes. When a selector write's EndpointSlice update would land in a
// window of its own if it came late, IfLate holds that prediction. s is
// the prediction's memory.
func (m *Model) statePushes(sc *Scoper, sim *endpointsSim, writes []plan.Write, s *scratch) StatePushes {
	selector := false
	for i := range writes {
		if writes[i].Kind == plan.WriteServiceSelector {
			selector = true
			break
		}
	}
	var late *endpointsSim
	if selector {
		late = sim.clone() // only the late prediction replays the writes
	}
	sp := StatePushes{Pushes: m.windows(sc, sim, writes, false, s)}
	if selector {
		alt := m.windows(sc, late, writes, true, s)
		if !samePushes(alt, sp.Pushes) {
			sp.IfLate = alt
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
	slot  slot // the window
	write int
	ev    Event
	cite  string
	hosts []string
	obj   *plan.Write // in the state's writes: a copy per event would cost ~170 bytes each
}

// slot is one debounce window of a state: a batch and a stage.
type slot struct {
	batch int
	stage Stage
}

// windows groups the writes of one state into debounce windows and merges
// each window into one push. Writes of one batch (one reconcile) are API
// calls made back to back and share a window; the EndpointSlice update that
// follows a selector write joins it (or, late, has a window of its own);
// pods turning ready and terminated pods being deleted come seconds later,
// each in a window of its own (reference §9 "Debounce prediction").
// The updates are collected in s.evs, which windows leaves empty with its
// array grown for the next call: no update outlives the call.
func (m *Model) windows(sc *Scoper, sim *endpointsSim, writes []plan.Write, late bool, s *scratch) []Push {
	updates := s.evs[:0]
	add := func(b int, we windowEvent) {
		st := we.ev.Stage
		if st == StageSlice && !late {
			st = StageWrite
		}
		we.slot = slot{b, st}
		updates = append(updates, we)
	}
	// Hosts whose selector a batch writes: with a late slice, their pod
	// changes of that batch are late as well.
	var lateHost map[slotHost]bool
	// Hosts a batch creates: their first EndpointSlice creates the host's
	// endpoint shard, keyed as the Service's creation (conformance:
	// experiment), so not-ready pods joining it add no update of their own.
	var created map[slotHost]bool
	for i := range writes {
		w := &writes[i]
		if late && w.Kind == plan.WriteServiceSelector {
			for _, h := range w.Hosts {
				if lateHost == nil {
					lateHost = s.set(&s.lateHost)
				}
				lateHost[slotHost{w.Batch, h}] = true
			}
		}
		if w.Kind == plan.WriteServiceCreate {
			for _, h := range w.Hosts {
				if created == nil {
					created = s.set(&s.created)
				}
				created[slotHost{w.Batch, h}] = true
			}
		}
	}
	for i := range writes {
		w := &writes[i]
		ch := m.change(*w)
		if ch == nil {
			continue
		}
		for _, ev := range ch.Events {
			we := windowEvent{write: i, ev: ev, cite: ch.Cite, obj: w}
			if ev.Kind == KindServiceEntry || ev.Kind == KindEndpoints || ev.Kind == KindServiceCreated {
				we.hosts = w.Hosts
				if len(we.hosts) == 0 {
					continue // no Service selects these pods: no endpoints anywhere change
				}
			}
			add(w.Batch, we)
		}
		evs := sim.apply(*w)
		if len(evs) == 0 {
			continue
		}
		hosts := s.strs.make(len(evs)) // one backing array for the events' one-host lists
		for j, e := range evs {
			row := m.endpoint(e.change, sc.WorkloadEntryHost(e.host))
			if row == nil || row.None {
				continue
			}
			if created[slotHost{w.Batch, e.host}] && e.stage == StageWrite && (e.change == NotReadyAdded || e.change == NotReadyToEmpty) {
				continue
			}
			if late && e.stage == StageWrite && lateHost[slotHost{w.Batch, e.host}] {
				// The host's one EndpointSlice carries the pod change too: it
				// lands with the selector's late slice (conformance: pingpong).
				e.stage = StageSlice
			}
			hosts[j] = e.host
			add(w.Batch, windowEvent{write: i, ev: Event{Kind: row.Kind, Stage: e.stage, Effective: row.Effective}, cite: row.Cite, hosts: hosts[j : j+1 : j+1], obj: w})
		}
	}
	// Windows run in batch then stage order; a stable sort keeps each
	// window's updates in the order they were added.
	slices.SortStableFunc(updates, func(a, b windowEvent) int {
		if a.slot.batch != b.slot.batch {
			return a.slot.batch - b.slot.batch
		}
		return int(a.slot.stage) - int(b.slot.stage)
	})
	s.evs = updates[:0]
	if len(updates) == 0 {
		return nil
	}
	n := 1
	for i := 1; i < len(updates); i++ {
		if updates[i].slot != updates[i-1].slot {
			n++
		}
	}
	out := s.pushes.make(n)[:0]
	for len(updates) > 0 {
		j := 1
		for j < len(updates) && updates[j].slot == updates[0].slot {
			j++
		}
		st := updates[0].slot.stage
		x := m.merge(sc, updates[:j], s)
		x.Window, x.Async, x.Stage = len(out)+1, st != StageWrite, st.String()
		out = append(out, x)
		updates = updates[j:]
	}
	return out
}

// merge folds one window's updates into a push (reference §5 PushRequest.Merge).
func (m *Model) merge(sc *Scoper, evs []windowEvent, s *scratch) Push {
	var (
		x             Push
		full, anyEDS  bool
		side, gw, eff typeSet
	)
	// Keys, writes and cites are collected with repeats, then sorted and
	// compacted: a window has a few updates, so this beats sets.
	// Keys and cites share one array (each clipped to its part, so that
	// growing one does not write over the other).
	strs := s.strs.make(3 * len(evs))
	keys := strs[:0:len(evs)]
	cites := strs[len(evs):len(evs)]
	writes := s.ints.make(len(evs))[:0]
	x.parts = s.parts.make(len(evs))[:0]
	var scope Scope
	for _, we := range evs {
		kr := m.kind(we.ev.Kind)
		if kr == nil {
			continue
		}
		writes = append(writes, we.write)
		keyKind := kr.Kind
		if kr.KeyKind != "" {
			keyKind = kr.KeyKind
		}
		switch we.ev.Kind {
		case KindVirtualService, KindDestinationRule:
			keys = append(keys, string(keyKind)+"/"+we.obj.Object.Namespace+"/"+we.obj.Object.Name)
			if we.ev.Kind == KindVirtualService && m.DelegateRootKeys {
				for _, p := range sc.Parents(we.obj.Resource) {
					keys = append(keys, string(keyKind)+"/"+p.Namespace+"/"+p.Name)
				}
			}
		default:
			for _, h := range we.hosts {
				keys = append(keys, FQDNKey(keyKind, h))
			}
		}
		full = full || kr.Full
		if kr.EDS != EDSNone {
			anyEDS = true
		}
		side.addAll(kr.Sidecar)
		gw.addAll(kr.Gateway)
		eff.addAll(we.ev.Effective)
		cites = append(cites, shortCite(kr.Cite))
		if we.cite != "" {
			cites = append(cites, shortCite(we.cite))
		}
		var ws Scope
		switch we.ev.Kind {
		case KindVirtualService:
			ws = sc.virtualService(we.obj.Resource, kr.AllGateways)
		case KindDestinationRule:
			ws = sc.destinationRule(we.obj.Resource, kr.AllGateways)
		default:
			ws = sc.hosts(we.hosts)
		}
		pt := part{row: kr, scope: ws}
		if kr.KeyKind != "" && !kr.KeyOnly {
			pt.asFull = m.kind(kr.KeyKind)
		}
		if len(x.parts) == 0 {
			scope = ws
		} else {
			scope = scope.Union(ws)
		}
		x.parts = append(x.parts, pt)
	}
	if full {
		for _, pt := range x.parts {
			if pt.asFull != nil {
				side.addAll(pt.asFull.Sidecar)
				gw.addAll(pt.asFull.Gateway)
			}
		}
	}
	// EDS is decided per proxy from the updates it depends on: partial
	// when some proxy gets only the updated hosts' CLAs.
	x.EDS = x.probeEDS()
	if !anyEDS {
		side.mask &^= edsBit
		gw.mask &^= edsBit
	}
	x.Keys = sortedUnique(keys)
	switch {
	case len(x.Keys) == 0:
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
		side, gw = typeSet{mask: edsBit}, typeSet{mask: edsBit}
	}
	x.Merged = len(x.Keys) > 1
	if len(writes) > 0 {
		slices.Sort(writes)
		x.Writes = slices.Clip(slices.Compact(writes))
	}
	x.SidecarTypes, x.GatewayTypes, x.Effective = side.list(), gw.list(), eff.list()
	x.Scope = scope
	if x.Scope.SidecarNamespaces == nil {
		x.Scope.SidecarNamespaces = []string{} // JSON: always a list
	}
	if len(cites) > 0 {
		x.Cites = sortedUnique(cites)
	}
	return x
}

// set returns *m emptied, made the first time.
func (s *scratch) set(m *map[slotHost]bool) map[slotHost]bool {
	if *m == nil || !s.reuse {
		*m = map[slotHost]bool{}
	} else {
		clear(*m)
	}
	return *m
}

// sortedUnique sorts l and drops repeats, in place.
func sortedUnique(l []string) []string {
	slices.Sort(l)
	return slices.Clip(slices.Compact(l))
}

// probeEDS is the push's EDS over the proxies its scopes name: partial when
// one gets only the updated hosts, all when one gets every watched cluster.
// The verdict does not depend on the order of the probes, and probing a
// namespace twice changes nothing, so it stops at the first partial one.
func (p *Push) probeEDS() EDSMode {
	const other = "\x00other" // a namespace no scope names
	best := EDSNone
	probe := func(k ProxyKind, ns string) bool {
		if _, _, e := p.ForProxy(k, ns); e == EDSPartial || e == EDSAll && best == EDSNone {
			best = e
		}
		return best == EDSPartial
	}
	if probe(Gateway, other) || probe(Gateway, RootNamespace) {
		return best
	}
	for _, pt := range p.parts {
		for _, n := range pt.scope.GatewayNamespaces {
			if probe(Gateway, n) {
				return best
			}
		}
	}
	if probe(Sidecar, other) {
		return best
	}
	for _, pt := range p.parts {
		for _, n := range pt.scope.SidecarNamespaces {
			if n != "*" && probe(Sidecar, n) {
				return best
			}
		}
		for _, n := range pt.scope.SidecarExcept {
			if n != "*" && probe(Sidecar, n) {
				return best
			}
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

// typeSet is a set of xDS types: the four known ones as a bitmask of their
// typeOrder positions, any other in a map of its own.
type typeSet struct {
	mask  uint8
	other map[Type]bool
}

// edsBit is EDS in a typeSet's mask.
const edsBit = 1 << 1

// typeBit is a known type's bit in a typeSet's mask (typeOrder), 0 for
// another type.
func typeBit(t Type) uint8 {
	switch t {
	case CDS:
		return 1 << 0
	case EDS:
		return edsBit
	case LDS:
		return 1 << 2
	case RDS:
		return 1 << 3
	}
	return 0
}

func (s *typeSet) addAll(ts []Type) {
	for _, t := range ts {
		if b := typeBit(t); b != 0 {
			s.mask |= b
			continue
		}
		if s.other == nil {
			s.other = map[Type]bool{}
		}
		s.other[t] = true
	}
}

// list is typeList of the set: a shared list unless a type is unknown.
func (s typeSet) list() []Type {
	if len(s.other) == 0 {
		return typeLists[s.mask]
	}
	m := map[Type]bool{}
	for t := range s.other {
		m[t] = true
	}
	for _, t := range typeLists[s.mask] {
		m[t] = true
	}
	return typeList(m)
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
	scopers     = graph.NewKeyedMemo[string, *Scoper]("xds.ScoperFor")
	predictions = graph.NewKeyedMemo[string, []Predicted]("xds.ForGraph")
)

// ScoperFor returns the graph's Scoper under an Istio version ("" is the
// default), built once per graph and version.
func ScoperFor(g *graph.Graph, version string) *Scoper {
	if version == "" {
		version = DefaultVersion
	}
	return scopers.Get(g, version, func() *Scoper { return NewScoperFor(g, version) })
}

// ForGraph returns every Rollout's plan with its prediction under a model,
// computed once per graph and version and shared by the RL6xxx rules.
func ForGraph(g *graph.Graph, m *Model) []Predicted {
	return predictions.Get(g, m.Version, func() []Predicted {
		sc := ScoperFor(g, m.Version)
		var out []Predicted
		for _, p := range plan.ForGraph(g) {
			out = append(out, Predicted{Plan: p, Prediction: Predict(m, sc, p)})
		}
		return out
	})
}
