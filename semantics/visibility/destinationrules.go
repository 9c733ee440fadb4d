package visibility

import (
	"slices"

	"github.com/rolloutlint/rolloutlint/model/graph"
)

// destRule is one DestinationRule as istiod indexes it.
type destRule struct {
	res      *graph.Resource
	host     string   // resolved as istiod resolves it
	exportTo []string // as written
	selector bool     // has a workloadSelector
	subsets  []string
	// alone back the Effective slices of this rule merged alone (the usual
	// case), shared by every lookup so that it allocates nothing; their
	// capacity is their length, so an append by a reader copies.
	alone struct {
		rules [1]*graph.Resource
		defs  [1]*destRule
	}
}

// newDestRule indexes a DestinationRule; the model is read-only once built.
func newDestRule(res *graph.Resource, host string, exportTo []string, selector bool) *destRule {
	d := &destRule{res: res, host: host, exportTo: exportTo, selector: selector}
	d.alone.rules[0], d.alone.defs[0] = res, d
	return d
}

// Level says where the DestinationRule that applies to a client was found.
type Level string

// Levels, in the order istiod looks (push_context.go destinationRule).
const (
	LevelNone    Level = ""
	LevelClient  Level = "client namespace"
	LevelService Level = "service namespace"
	LevelRoot    Level = "root namespace"
)

// Effective is the DestinationRule configuration a client namespace gets for
// a host: the rules of the first level that has one, merged.
type Effective struct {
	Level Level
	// Host is the DestinationRule host that matched (the host itself or the
	// most specific wildcard).
	Host string
	// Rules are the DestinationRules merged at that level, in load order.
	Rules []*graph.Resource
	// defs are the merged rules, in the order of Rules: Subset scans their
	// subset names (a handful) instead of a map built for every lookup.
	defs []*destRule
}

// Found reports whether any DestinationRule applies.
func (e Effective) Found() bool { return len(e.Rules) > 0 }

// Subset returns the DestinationRule that defines the subset for this
// client, or nil.
func (e Effective) Subset(name string) *graph.Resource {
	for _, d := range e.defs {
		if slices.Contains(d.subsets, name) {
			return d.res
		}
	}
	return nil
}

// Has reports whether r is one of the applying rules.
func (e Effective) Has(r *graph.Resource) bool { return slices.Contains(e.Rules, r) }

// privateOnly reports whether istiod keeps a rule out of its namespace's
// exported index: a workloadSelector, exportTo only "." (or its own
// namespace), or no exportTo under a mesh default holding ".".
func (m *Model) privateOnly(d *destRule) bool {
	if d.selector {
		return true
	}
	switch len(d.exportTo) {
	case 0:
		return slices.Contains(m.Mesh.DefaultDestinationRuleExportTo, ".")
	case 1:
		return d.exportTo[0] == "." || d.exportTo[0] == d.res.Namespace
	}
	return false
}

// local reports whether a rule is in its namespace's local index, the one a
// proxy of that namespace looks in first.
func local(d *destRule) bool {
	if d.selector || len(d.exportTo) == 0 {
		return true
	}
	for _, e := range d.exportTo {
		if e == "*" || e == "." || e == d.res.Namespace {
			return true
		}
	}
	return false
}

// exportedTo reports whether an exported rule reaches a client namespace.
func exportedTo(d *destRule, client string) bool {
	if len(d.exportTo) == 0 {
		return true
	}
	for _, e := range d.exportTo {
		if e == "*" || e == client && client != Other {
			return true
		}
	}
	return false
}

// DestinationRule is the DestinationRule configuration a proxy in namespace
// client gets for host (fully qualified), whose service lives in namespace
// serviceNS ("" when unknown): istiod looks in the client's namespace (root
// namespace clients: its private rules), then among the rules the service's
// namespace exports to the client, then among those the root namespace
// exports; at each level the most specific host wins and the rules of one
// host are merged. Rules with a workloadSelector apply to the pods they
// select only and are left out.
func (m *Model) DestinationRule(host, client, serviceNS string) Effective {
	root := m.Mesh.RootNamespace
	if client != root {
		if e := m.pick(host, client, local, nil); e.Found() {
			e.Level = LevelClient
			return e
		}
	} else if e := m.pick(host, root, m.privateOnly, nil); e.Found() {
		e.Level = LevelClient
		return e
	}
	exported := func(d *destRule) bool { return !m.privateOnly(d) }
	// Among exported rules the most specific host is picked first, then the
	// rules of that host not exported to the client are dropped; an empty
	// result sends the lookup to the next level.
	to := func(d *destRule) bool { return exportedTo(d, client) }
	if serviceNS != "" {
		if e := m.pick(host, serviceNS, exported, to); e.Found() {
			e.Level = LevelService
			return e
		}
	}
	if e := m.pick(host, root, exported, to); e.Found() {
		e.Level = LevelRoot
		return e
	}
	return Effective{}
}

// nsRules are one namespace's DestinationRules (no workloadSelector) by
// resolved host, exact hosts and wildcards apart.
type nsRules struct {
	exact map[string][]*destRule
	wild  []*destRule
}

// pick finds the most specific host among a namespace's rules for which in
// holds (exact first, else the longest wildcard covering it), and merges
// the rules of that host that also pass keep (nil: all).
func (m *Model) pick(host string, ns string, in, keep func(*destRule) bool) Effective {
	idx := m.drIndex[ns]
	if idx == nil {
		return Effective{}
	}
	match := ""
	if anyIn(idx.exact[host], in) {
		match = host
	} else {
		for _, d := range idx.wild {
			if in(d) && SubsetOf(host, d.host) && (len(d.host) > len(match) || len(d.host) == len(match) && d.host < match) {
				match = d.host
			}
		}
	}
	if match == "" {
		return Effective{}
	}
	list := idx.exact[match]
	if wildcarded(match) {
		list = nil
		for _, d := range idx.wild {
			if d.host == match {
				list = append(list, d)
			}
		}
	}
	e := Effective{Host: match}
	for _, d := range list {
		if in(d) && (keep == nil || keep(d)) {
			e.add(d)
		}
	}
	return e
}

func anyIn(ds []*destRule, in func(*destRule) bool) bool {
	for _, d := range ds {
		if in(d) {
			return true
		}
	}
	return false
}

func (e *Effective) add(d *destRule) {
	if len(e.defs) == 0 {
		e.Rules, e.defs = d.alone.rules[:], d.alone.defs[:]
		return
	}
	e.Rules = append(e.Rules, d.res)
	e.defs = append(e.defs, d)
}

// DestinationRuleExport is where a DestinationRule can apply: its exportTo,
// or, when it has none, its own namespace under a mesh default holding "."
// and every namespace otherwise (istiod reads nothing else of the default).
func (m *Model) DestinationRuleExport(r *graph.Resource) Set {
	o := r.DestinationRule()
	if o == nil {
		return Set{}
	}
	if o.Spec.GetWorkloadSelector() != nil {
		return Only(r.Namespace)
	}
	return destinationRuleExportSet(o.Spec.GetExportTo(), r.Namespace, m.Mesh.DefaultDestinationRuleExportTo)
}

// ServiceNamespace is the namespace of the service behind a host as a
// client in namespace client resolves it ("" when the bundle has none and
// the host is no cluster-local Service name).
func (m *Model) ServiceNamespace(host, client string) string {
	if s := m.VisibleService(host, client); s != nil {
		return s.Namespace
	}
	if ns, ok := clusterLocalNamespace(host); ok {
		return ns
	}
	return ""
}

// clusterLocalNamespace reads the namespace of name.ns.svc.cluster.local.
func clusterLocalNamespace(host string) (string, bool) {
	rest, ok := cutSuffix(host, ".svc."+graph.ClusterDomain)
	if !ok {
		return "", false
	}
	for i := len(rest) - 1; i >= 0; i-- {
		if rest[i] == '.' {
			if i == 0 || i == len(rest)-1 {
				return "", false
			}
			return rest[i+1:], true
		}
	}
	return "", false
}

func cutSuffix(s, suffix string) (string, bool) {
	if len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}

// SubsetDefiners returns the DestinationRules of the bundle, in load order,
// whose host covers host and that define the subset, wherever they apply.
func (m *Model) SubsetDefiners(host, subset string) []*graph.Resource {
	var out []*graph.Resource
	for _, d := range m.rulesFor(host) {
		if d.selector || !slices.Contains(d.subsets, subset) {
			continue
		}
		out = append(out, d.res)
	}
	slices.SortStableFunc(out, func(a, b *graph.Resource) int { return a.Index() - b.Index() })
	return out
}
