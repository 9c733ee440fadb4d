package graph

import (
	"strings"

	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// ClusterDomain is the Kubernetes cluster DNS suffix assumed for Service FQDNs.
const ClusterDomain = "cluster.local"

// hostIndex maps fully qualified host names to the objects that define or
// configure them.
type hostIndex struct {
	services       map[string]*Resource   // name.ns.svc.cluster.local → Service
	serviceEntries map[string][]*Resource // host → ServiceEntries declaring it
	destRules      map[string][]*Resource // FQDN → DestinationRules for it
	virtualSvcs    map[string][]*Resource // FQDN → VirtualServices listing it in hosts
}

func buildHostIndex(g *Graph) *hostIndex {
	// Sized for one host per object, so that a large bundle's maps do not
	// grow step by step.
	h := &hostIndex{
		services:       make(map[string]*Resource, len(g.OfKind(kinds.Service))),
		serviceEntries: make(map[string][]*Resource, len(g.OfKind(kinds.ServiceEntry))),
		destRules:      make(map[string][]*Resource, len(g.OfKind(kinds.DestinationRule))),
		virtualSvcs:    make(map[string][]*Resource, len(g.OfKind(kinds.VirtualService))),
	}
	for _, r := range g.OfKind(kinds.Service) {
		fqdn := ServiceFQDN(r.Name, r.Namespace)
		if _, dup := h.services[fqdn]; !dup {
			h.services[fqdn] = r
		}
	}
	resLists := newLists[*Resource](len(g.OfKind(kinds.DestinationRule)) + len(g.OfKind(kinds.VirtualService)))
	for _, r := range g.OfKind(kinds.ServiceEntry) {
		hosts, _ := r.specList("hosts")
		for _, host := range hosts {
			if s, ok := host.(string); ok {
				addTo(resLists, h.serviceEntries, s, r)
			}
		}
	}
	for _, r := range g.OfKind(kinds.DestinationRule) {
		if dr := r.DestinationRule(); dr != nil && dr.Spec.GetHost() != "" {
			fqdn := FQDN(dr.Spec.GetHost(), r.Namespace)
			addTo(resLists, h.destRules, fqdn, r)
		}
	}
	for _, r := range g.OfKind(kinds.VirtualService) {
		if vs := r.VirtualService(); vs != nil {
			for _, host := range vs.Spec.GetHosts() {
				fqdn := FQDN(host, r.Namespace)
				addTo(resLists, h.virtualSvcs, fqdn, r)
			}
		}
	}
	return h
}

func (r *Resource) specList(key string) ([]any, bool) {
	spec, _ := r.Object()["spec"].(map[string]any)
	l, ok := spec[key].([]any)
	return l, ok
}

// ServiceFQDN is the cluster DNS name of a Service.
func ServiceFQDN(name, namespace string) string {
	return name + "." + namespace + ".svc." + ClusterDomain
}

// FQDN normalises a host written in an Istio object of namespace ns to a fully
// qualified name: a short name gets the namespace and cluster domain, `name.ns`
// and `name.ns.svc` get the cluster domain; anything else is returned as is.
// (Istio itself only expands bare short names; rolloutlint also accepts the
// `name.ns` forms users write, and flags them separately where it matters.)
func FQDN(host, ns string) string {
	host = strings.TrimSuffix(host, ".")
	switch strings.Count(host, ".") {
	case 0:
		if host == "*" || host == "" {
			return host
		}
		return ServiceFQDN(host, ns)
	case 1:
		name, namespace, _ := strings.Cut(host, ".")
		return ServiceFQDN(name, namespace)
	case 2:
		if strings.HasSuffix(host, ".svc") {
			return host + "." + ClusterDomain
		}
	}
	return host
}

// appendFQDN appends FQDN(host, ns) to dst: the host indexes look names up
// with it in a buffer on the caller's stack, which a map index reads without
// making a string.
func appendFQDN(dst []byte, host, ns string) []byte {
	host = strings.TrimSuffix(host, ".")
	switch strings.Count(host, ".") {
	case 0:
		if host == "*" || host == "" {
			return append(dst, host...)
		}
		return appendServiceFQDN(dst, host, ns)
	case 1:
		name, namespace, _ := strings.Cut(host, ".")
		return appendServiceFQDN(dst, name, namespace)
	case 2:
		if strings.HasSuffix(host, ".svc") {
			return append(append(append(dst, host...), '.'), ClusterDomain...)
		}
	}
	return append(dst, host...)
}

// AppendFQDN appends FQDN(host, ns) to dst, for callers that compare host
// names in buffers on their stack rather than make strings of them.
func AppendFQDN(dst []byte, host, ns string) []byte { return appendFQDN(dst, host, ns) }

// AppendServiceFQDN appends ServiceFQDN(name, namespace) to dst.
func AppendServiceFQDN(dst []byte, name, namespace string) []byte {
	return appendServiceFQDN(dst, name, namespace)
}

func appendServiceFQDN(dst []byte, name, namespace string) []byte {
	dst = append(append(dst, name...), '.')
	dst = append(append(dst, namespace...), ".svc."...)
	return append(dst, ClusterDomain...)
}

// ShortHost cuts a host at its first dot, the way Argo Rollouts compares a
// route destination with the stable and canary Service names.
func ShortHost(host string) string {
	if i := strings.IndexByte(host, '.'); i >= 0 {
		return host[:i]
	}
	return host
}

// ServiceForHost resolves a destination host written in namespace ns to a
// Service of the bundle, or nil.
func (g *Graph) ServiceForHost(host, ns string) *Resource {
	var buf [128]byte
	return g.hostIdx.services[string(appendFQDN(buf[:0], host, ns))]
}

// ServiceEntriesForHost returns the ServiceEntries that declare host.
func (g *Graph) ServiceEntriesForHost(host string) []*Resource {
	return g.hostIdx.serviceEntries[host]
}

// DestinationRulesForHost returns the DestinationRules whose host is the same
// service as host written in namespace ns.
func (g *Graph) DestinationRulesForHost(host, ns string) []*Resource {
	var buf [128]byte
	return g.hostIdx.destRules[string(appendFQDN(buf[:0], host, ns))]
}

// VirtualServicesForHost returns the VirtualServices listing host (written in
// namespace ns) in spec.hosts.
func (g *Graph) VirtualServicesForHost(host, ns string) []*Resource {
	var buf [128]byte
	return g.hostIdx.virtualSvcs[string(appendFQDN(buf[:0], host, ns))]
}
