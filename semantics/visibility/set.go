package visibility

import (
	"sort"
	"strings"
)

// Set is a set of namespaces: either every namespace except some (All), or
// exactly the listed ones. The zero Set is empty.
type Set struct {
	all bool
	ns  map[string]bool // the members, or with all the exceptions
}

// Everywhere is the set of every namespace.
func Everywhere() Set { return Set{all: true} }

// Only is the set of the listed namespaces.
func Only(namespaces ...string) Set {
	s := Set{ns: map[string]bool{}}
	for _, n := range namespaces {
		s.ns[n] = true
	}
	return s
}

// Has reports whether ns is in the set. The placeholder Other stands for a
// namespace the bundle does not name: it is in every All set and in no list.
func (s Set) Has(ns string) bool {
	if s.all {
		return !s.ns[ns]
	}
	return ns != Other && s.ns[ns]
}

// IsAll reports whether the set holds every namespace but a few (Except).
func (s Set) IsAll() bool { return s.all }

// IsEmpty reports whether the set holds no namespace.
func (s Set) IsEmpty() bool { return !s.all && len(s.ns) == 0 }

// Members lists the namespaces of a listed set, sorted (nil for an All set).
func (s Set) Members() []string {
	if s.all {
		return nil
	}
	return sortedKeys(s.ns)
}

// Except lists the namespaces an All set leaves out, sorted.
func (s Set) Except() []string {
	if !s.all {
		return nil
	}
	return sortedKeys(s.ns)
}

// Intersect is the namespaces in both sets.
func (s Set) Intersect(o Set) Set {
	switch {
	case s.all && o.all:
		out := Set{all: true, ns: map[string]bool{}}
		for k := range s.ns {
			out.ns[k] = true
		}
		for k := range o.ns {
			out.ns[k] = true
		}
		return out
	case s.all:
		s, o = o, s
	}
	out := Set{ns: map[string]bool{}}
	for k := range s.ns {
		if o.Has(k) {
			out.ns[k] = true
		}
	}
	return out
}

// Without is the set less one namespace.
func (s Set) Without(ns string) Set {
	out := Set{all: s.all, ns: map[string]bool{}}
	for k := range s.ns {
		out.ns[k] = true
	}
	if s.all {
		out.ns[ns] = true
	} else {
		delete(out.ns, ns)
	}
	return out
}

// String renders the set for messages: "every namespace", "every namespace
// except a, b", "a, b" or "no namespace".
func (s Set) String() string {
	switch {
	case s.all && len(s.ns) == 0:
		return "every namespace"
	case s.all:
		return "every namespace except " + strings.Join(sortedKeys(s.ns), ", ")
	case len(s.ns) == 0:
		return "no namespace"
	}
	return strings.Join(sortedKeys(s.ns), ", ")
}

// exportSet reads the exportTo of a Service, ServiceEntry or VirtualService
// written in namespace own (initServiceRegistry, IsServiceVisible,
// initVirtualServices): "*" anywhere in it is every namespace, else "~"
// anywhere is none, else "." is the object's own namespace and any other
// entry that namespace (own only when listed). An empty list takes the mesh
// default def: from 1.30 read the same way, before as "." (own namespace
// only) if it holds it, else "*" if it holds it, else none. An unset default
// is "*".
func (m *Model) exportSet(exportTo []string, own string, def []string) Set {
	if len(exportTo) == 0 {
		if len(def) == 0 {
			return Everywhere()
		}
		if !m.b.listDefaults {
			switch {
			case containsEntry(def, "."):
				return Only(own)
			case containsEntry(def, "*"):
				return Everywhere()
			}
			return Set{}
		}
		exportTo = def
	}
	if containsEntry(exportTo, "*") {
		return Everywhere()
	}
	if containsEntry(exportTo, "~") {
		return Set{}
	}
	return listedSet(exportTo, own)
}

// destinationRuleExportSet reads a DestinationRule's exportTo written in
// namespace own (setDestinationRules): "*" is every namespace, "." its own,
// any other entry that namespace ("~" names none); an empty list takes the
// mesh default def only when it holds "." (own namespace only), and is every
// namespace otherwise.
func destinationRuleExportSet(exportTo []string, own string, def []string) Set {
	if len(exportTo) == 0 {
		if containsEntry(def, ".") {
			return Only(own)
		}
		return Everywhere()
	}
	if containsEntry(exportTo, "*") {
		return Everywhere()
	}
	return listedSet(exportTo, own)
}

// listedSet is the namespaces an exportTo list without "*" names: "." is
// own, "~" and empty entries none.
func listedSet(exportTo []string, own string) Set {
	s := Set{ns: map[string]bool{}}
	for _, e := range exportTo {
		switch e = strings.TrimSpace(e); e {
		case ".":
			s.ns[own] = true
		case "~", "":
		default:
			s.ns[e] = true
		}
	}
	return s
}

func containsEntry(list []string, entry string) bool {
	for _, e := range list {
		if strings.TrimSpace(e) == entry {
			return true
		}
	}
	return false
}

// sortedKeys lists the keys of m, sorted, with room for one more (callers
// often append Other).
func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return []string{} // empty, as before, and allocation-free
	}
	out := make([]string, 0, len(m)+1)
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Overlaps reports whether two sets share a namespace (two All sets always
// do: some namespace is in neither exception list).
func (s Set) Overlaps(o Set) bool {
	switch {
	case s.all && o.all:
		return true
	case s.all:
		s, o = o, s
	}
	for k := range s.ns {
		if o.Has(k) {
			return true
		}
	}
	return false
}

// Common returns a namespace in both sets, for messages: the first listed
// one in sorted order, or Other when only unnamed namespaces are shared.
func (s Set) Common(o Set) (string, bool) {
	in := s.Intersect(o)
	if in.all {
		return Other, true
	}
	if m := in.Members(); len(m) > 0 {
		return m[0], true
	}
	return "", false
}
