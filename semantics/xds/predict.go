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
	Async bool     `json:"async"`
	Cites []string `json:"cites"`
}

// StatePushes are the pushes that lead into one plan state.
type StatePushes struct {
	Pushes []Push `json:"pushes"`
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
	for i := range p.States {
		sp := m.StatePushes(sc, p.States[i].Writes)
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
	for i := range p.Abort {
		pr.Abort = append(pr.Abort, m.StatePushes(sc, p.Abort[i].Writes))
	}
	return pr
}

// windowEvent is one config update placed in a debounce window.
type windowEvent struct {
	write int
	ev    Event
	key   string
	hosts []string
	obj   *plan.Write // in the state's writes: a copy per event would cost ~170 bytes each
}

// StatePushes groups the writes of one state into debounce windows and
// merges each window into one push. Writes of one batch (one reconcile) are
// API calls made back to back and share a window; updates that come from
// EndpointSlice churn arrive after the batch (pods turn ready seconds later)
// and share a later window (reference §9 "Debounce prediction").
func (m *Model) StatePushes(sc *Scoper, writes []plan.Write) StatePushes {
	type slot struct {
		batch int
		async bool
	}
	windows := map[slot][]windowEvent{}
	for i, w := range writes {
		ch := m.change(w)
		if ch == nil {
			continue
		}
		for _, ev := range ch.Events {
			we := windowEvent{write: i, ev: ev, obj: &writes[i]}
			switch ev.Kind {
			case KindVirtualService, KindDestinationRule:
				we.key = fmt.Sprintf("%s/%s/%s", ev.Kind, w.Object.Namespace, w.Object.Name)
			default:
				we.hosts = w.Hosts
				for _, h := range w.Hosts {
					we.key += fmt.Sprintf("%s/%s ", ev.Kind, h)
				}
			}
			if len(we.hosts) == 0 && (ev.Kind == KindServiceEntry || ev.Kind == KindEndpoints) {
				continue // no Service selects these pods: no endpoints anywhere change
			}
			windows[slot{w.Batch, ev.Async}] = append(windows[slot{w.Batch, ev.Async}], we)
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
		return !slots[i].async && slots[j].async
	})
	var out StatePushes
	for n, s := range slots {
		x := m.merge(sc, windows[s])
		x.Window, x.Async = n+1, s.async
		out.Pushes = append(out.Pushes, x)
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
		for _, k := range splitKeys(we.key) {
			keys[k] = true
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
		if ch := m.change(*we.obj); ch != nil {
			cites[shortCite(ch.Cite)] = true
		}
		s := sc.For(we.ev.Kind, *we.obj, kr.AllGateways)
		if scope == nil {
			scope = &s
		} else {
			u := scope.Union(s)
			scope = &u
		}
	}
	x.EDS = EDSNone
	if anyEDS {
		x.EDS = EDSPartial
		if full && blocks {
			x.EDS = EDSAll
		}
	}
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

// shortCite keeps the section part of a table citation ("§9 row 1"); the
// explanation after the colon stays in the table.
func shortCite(c string) string {
	if i := strings.Index(c, ":"); i > 0 {
		return c[:i]
	}
	return c
}

func splitKeys(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
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
