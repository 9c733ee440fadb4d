package graph

import (
	"fmt"

	networkingv1 "istio.io/api/networking/v1"
)

// Destination is one weighted destination of a VirtualService route.
type Destination struct {
	Host   string
	Subset string
	Port   uint32 // destination.port.number, 0 when unset
	Weight int32

	// The route's kind and index and the destination's index locate it; the
	// field path is built only when a rule reports, which keeps the
	// per-route cost of rules that find nothing allocation-free.
	kind       RouteKind
	route, idx int
}

// Path is the field path of the destination entry in the VirtualService, e.g.
// spec.http[0].route[1].
func (d Destination) Path() string {
	return fmt.Sprintf("spec.%s[%d].route[%d]", d.kind, d.route, d.idx)
}

// HostPath is the field path of the destination's host.
func (d Destination) HostPath() string { return d.Path() + ".destination.host" }

// SubsetPath is the field path of the destination's subset.
func (d Destination) SubsetPath() string { return d.Path() + ".destination.subset" }

// WeightPath is the field path of the destination's weight.
func (d Destination) WeightPath() string { return d.Path() + ".weight" }

// RouteCount returns how many routes of a kind a VirtualService has.
func RouteCount(vs *networkingv1.VirtualService, kind RouteKind) int {
	switch kind {
	case HTTP:
		return len(vs.GetHttp())
	case TLS:
		return len(vs.GetTls())
	case TCP:
		return len(vs.GetTcp())
	}
	return 0
}

// RouteDestinations returns the weighted destinations of route index of a
// kind, in order, or nil when the route does not exist.
func RouteDestinations(vs *networkingv1.VirtualService, kind RouteKind, index int) []Destination {
	if vs == nil || index < 0 || index >= RouteCount(vs, kind) {
		return nil
	}
	var out []Destination
	add := func(i int, d *networkingv1.Destination, w int32) {
		out = append(out, Destination{Host: d.GetHost(), Subset: d.GetSubset(), Port: d.GetPort().GetNumber(), Weight: w, kind: kind, route: index, idx: i})
	}
	switch kind {
	case HTTP:
		rs := vs.GetHttp()[index].GetRoute()
		out = make([]Destination, 0, len(rs)) // one allocation, not one per doubling
		for i, d := range rs {
			add(i, d.GetDestination(), d.GetWeight())
		}
	case TLS:
		rs := vs.GetTls()[index].GetRoute()
		out = make([]Destination, 0, len(rs))
		for i, d := range rs {
			add(i, d.GetDestination(), d.GetWeight())
		}
	case TCP:
		rs := vs.GetTcp()[index].GetRoute()
		out = make([]Destination, 0, len(rs))
		for i, d := range rs {
			add(i, d.GetDestination(), d.GetWeight())
		}
	}
	if len(out) == 0 {
		return nil // as before: a route without destinations has none
	}
	return out
}

// SubsetUse is a place where a VirtualService sends traffic (or mirrors it)
// to a named subset.
type SubsetUse struct {
	Host   string
	Subset string
	// Path is the field path of the subset value.
	Path string
}

// SubsetUses returns every destination and mirror of a VirtualService that
// names a subset, in document order.
func SubsetUses(vs *networkingv1.VirtualService) []SubsetUse {
	refs := SubsetRefs(vs)
	if len(refs) == 0 {
		return nil
	}
	out := make([]SubsetUse, len(refs))
	for i, u := range refs {
		out[i] = SubsetUse{Host: u.Host, Subset: u.Subset, Path: u.Path()}
	}
	return out
}

// SubsetRef is a SubsetUse whose field path is built only when asked for:
// rules that find nothing never need it.
type SubsetRef struct {
	Host   string
	Subset string

	pos DestinationPos
}

// Path is the field path of the subset value, as in SubsetUse.
func (u SubsetRef) Path() string { return u.pos.Path() + ".subset" }

// DestinationPos locates a destination in a VirtualService (the route list,
// the route, and the entry of the route that holds it), so that its field
// path is built only when a rule reports.
type DestinationPos struct {
	Kind  RouteKind
	Route int              // index in the route list
	Field DestinationField // which entry of the route
	Entry int              // index in route or mirrors
}

// DestinationField is the list or field of a route that holds a destination.
type DestinationField uint8

// The fields of a route that hold a destination.
const (
	InRoute   DestinationField = iota // route[Entry].destination
	InMirror                          // mirror
	InMirrors                         // mirrors[Entry].destination
)

// Path is the field path of the destination object, e.g.
// spec.http[0].route[1].destination or spec.http[0].mirror.
func (p DestinationPos) Path() string {
	base := Index("spec."+string(p.Kind), p.Route)
	switch p.Field {
	case InMirror:
		return base + ".mirror"
	case InMirrors:
		return Index(base+".mirrors", p.Entry) + ".destination"
	}
	return Index(base+".route", p.Entry) + ".destination"
}

// SubsetRefs returns the uses SubsetUses returns, in the same order, with
// their paths left to SubsetRef.Path. It allocates once, nothing when the
// VirtualService names no subset.
func SubsetRefs(vs *networkingv1.VirtualService) []SubsetRef {
	n := 0
	eachSubsetRef(vs, func(SubsetRef) { n++ })
	if n == 0 {
		return nil
	}
	out := make([]SubsetRef, 0, n)
	eachSubsetRef(vs, func(u SubsetRef) { out = append(out, u) })
	return out
}

// eachSubsetRef calls fn for each destination and mirror naming a subset,
// in document order.
func eachSubsetRef(vs *networkingv1.VirtualService, fn func(SubsetRef)) {
	add := func(d *networkingv1.Destination, kind RouteKind, route, entry int, field DestinationField) {
		if d.GetSubset() != "" {
			fn(SubsetRef{Host: d.GetHost(), Subset: d.GetSubset(), pos: DestinationPos{Kind: kind, Route: route, Field: field, Entry: entry}})
		}
	}
	for i, r := range vs.GetHttp() {
		for j, d := range r.GetRoute() {
			add(d.GetDestination(), HTTP, i, j, InRoute)
		}
		if r.GetMirror() != nil {
			add(r.GetMirror(), HTTP, i, 0, InMirror)
		}
		for j, m := range r.GetMirrors() {
			add(m.GetDestination(), HTTP, i, j, InMirrors)
		}
	}
	for i, r := range vs.GetTls() {
		for j, d := range r.GetRoute() {
			add(d.GetDestination(), TLS, i, j, InRoute)
		}
	}
	for i, r := range vs.GetTcp() {
		for j, d := range r.GetRoute() {
			add(d.GetDestination(), TCP, i, j, InRoute)
		}
	}
}

// WeightsSet records which entries of each VirtualService route's `route`
// list set weight, by route kind and index: the typed object cannot tell a
// weight left out from a weight of 0, and the Rego input says which it was.
// The loader records it from the generic object it decodes anyway, so the
// document need not be read again for it.
type WeightsSet struct {
	HTTP, TLS, TCP [][]bool
}

// WeightsSetOf reads a WeightsSet from a VirtualService's generic object.
func WeightsSetOf(obj map[string]any) *WeightsSet {
	spec, _ := obj["spec"].(map[string]any)
	of := func(kind RouteKind) [][]bool {
		routes, _ := spec[string(kind)].([]any)
		if len(routes) == 0 {
			return nil
		}
		out := make([][]bool, len(routes))
		for i, r := range routes {
			route, _ := r.(map[string]any)
			entries, _ := route["route"].([]any)
			set := make([]bool, len(entries))
			for j, e := range entries {
				m, _ := e.(map[string]any)
				_, set[j] = m["weight"]
			}
			out[i] = set
		}
		return out
	}
	return &WeightsSet{HTTP: of(HTTP), TLS: of(TLS), TCP: of(TCP)}
}

// Route returns, for route index of a kind, whether each entry of its
// `route` list sets weight; nil when there is no such route.
func (w *WeightsSet) Route(kind RouteKind, index int) []bool {
	var routes [][]bool
	switch kind {
	case HTTP:
		routes = w.HTTP
	case TLS:
		routes = w.TLS
	case TCP:
		routes = w.TCP
	}
	if index < 0 || index >= len(routes) {
		return nil
	}
	return routes[index]
}
