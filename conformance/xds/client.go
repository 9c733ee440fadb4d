package main

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"istio.io/istio/pilot/test/xdstest"
	"istio.io/istio/pkg/cluster"
	pm "istio.io/istio/pkg/model"
)

// Short names of the four xDS types the model predicts.
var typeNames = map[string]string{
	pm.ClusterType:  "CDS",
	pm.EndpointType: "EDS",
	pm.ListenerType: "LDS",
	pm.RouteType:    "RDS",
}

var typeOrder = map[string]int{"CDS": 0, "EDS": 1, "LDS": 2, "RDS": 3}

// proxySpec is a proxy the harness connects.
type proxySpec struct {
	Kind      string // sidecar | gateway
	Namespace string
	Labels    map[string]string
	IP        string
}

// Name is the proxy's name in observations: sidecar/<ns> or gateway/<ns>[/<istio label>].
func (p proxySpec) Name() string {
	n := p.Kind + "/" + p.Namespace
	if p.Kind == "gateway" && p.Labels["istio"] != "ingressgateway" {
		n += "/" + p.Labels["istio"]
	}
	return n
}

// PodName is the name of the proxy's pod, which its node ID names as an
// injected sidecar's does (<type>~<ip>~<pod>.<ns>~<ns>.svc.cluster.local):
// istiod finds the pod by that name when the proxy connects. A proxy whose
// pod it cannot find falls back to its metadata, and before Istio 1.31 that
// fallback computes the proxy's service targets before its labels
// (computeProxyState; swapped in 1.31 by istio#60568): the inbound clusters are
// missing at connect and appear with the first Service push of its namespace.
func (p proxySpec) PodName() string { return strings.ReplaceAll(p.Name(), "/", "-") }

// parseProxySpec reads "sidecar:<ns>" or "gateway:<ns>:<istio label value>".
func parseProxySpec(s string) (proxySpec, error) {
	parts := strings.Split(s, ":")
	switch {
	case len(parts) == 2 && parts[0] == "sidecar":
		return proxySpec{Kind: "sidecar", Namespace: parts[1], Labels: map[string]string{"app": "tester"}}, nil
	case len(parts) == 3 && parts[0] == "gateway":
		return proxySpec{Kind: "gateway", Namespace: parts[1], Labels: map[string]string{"istio": parts[2]}}, nil
	}
	return proxySpec{}, fmt.Errorf("proxy %q: want sidecar:<ns> or gateway:<ns>:<istio label>", s)
}

// response is one delta response a proxy received.
type response struct {
	proxy     string
	typ       string
	changed   bool
	count     int // resources in the response
	removed   int
	requested bool // answer to the proxy's own subscription change
}

// client is a delta xDS client that subscribes and ACKs the way Envoy does:
// CDS and LDS as wildcard, EDS for the EDS clusters CDS returned, RDS for the
// route names the listeners' HTTP connection managers name.
type client struct {
	spec   proxySpec
	stream discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	conn   *grpc.ClientConn
	onResp func(response)

	mu sync.Mutex
	// held are the resources last received, by type and name.
	held map[string]map[string]*anypb.Any
	// watched are the names subscribed per non-wildcard type.
	watched map[string]map[string]bool
	// pending marks types whose subscription changed and whose answer is due.
	pending map[string]bool
	cancel  context.CancelFunc
	done    chan struct{}
}

func (c *client) node() *core.Node {
	typ := "sidecar"
	if c.spec.Kind == "gateway" {
		typ = "router"
	}
	meta := pm.NodeMetadata{
		Namespace:      c.spec.Namespace,
		ClusterID:      cluster.ID("Kubernetes"),
		Labels:         c.spec.Labels,
		IstioVersion:   "1.31.0",
		ServiceAccount: "default",
		InstanceIPs:    []string{c.spec.IP},
	}
	return &core.Node{
		Id:       fmt.Sprintf("%s~%s~%s.%s~%s.svc.cluster.local", typ, c.spec.IP, c.spec.PodName(), c.spec.Namespace, c.spec.Namespace),
		Metadata: meta.ToStruct(),
	}
}

func dial(dialer func() (net.Conn, error)) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///bufconn",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return dialer() }))
}

func connect(spec proxySpec, dialer func() (net.Conn, error), onResp func(response)) (*client, error) {
	conn, err := dial(dialer)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		cancel()
		conn.Close()
		return nil, fmt.Errorf("proxy %s: %w", spec.Name(), err)
	}
	c := &client{
		spec: spec, stream: stream, conn: conn, onResp: onResp, cancel: cancel, done: make(chan struct{}),
		held:    map[string]map[string]*anypb.Any{},
		watched: map[string]map[string]bool{pm.EndpointType: {}, pm.RouteType: {}},
		pending: map[string]bool{},
	}
	first := true
	for _, t := range []string{pm.ClusterType, pm.ListenerType} {
		req := &discovery.DeltaDiscoveryRequest{TypeUrl: t}
		if first {
			req.Node = c.node()
			first = false
		}
		if err := stream.Send(req); err != nil {
			c.close()
			return nil, fmt.Errorf("proxy %s: subscribe: %w", spec.Name(), err)
		}
	}
	go c.recv()
	return c, nil
}

func (c *client) close() {
	c.cancel()
	c.conn.Close()
}

// watchedCounts are the numbers of ClusterLoadAssignments and route
// configurations subscribed.
func (c *client) watchedCounts() (eds, rds int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.watched[pm.EndpointType]), len(c.watched[pm.RouteType])
}

func (c *client) recv() {
	defer close(c.done)
	for {
		resp, err := c.stream.Recv()
		if err != nil {
			return
		}
		c.handle(resp)
	}
}

func (c *client) handle(resp *discovery.DeltaDiscoveryResponse) {
	t := resp.TypeUrl
	c.mu.Lock()
	held := c.held[t]
	if held == nil {
		held = map[string]*anypb.Any{}
		c.held[t] = held
	}
	changed := false
	for _, r := range resp.Resources {
		old, ok := held[r.Name]
		if !ok || !proto.Equal(old, r.Resource) {
			changed = true
		}
		held[r.Name] = r.Resource
	}
	removed := 0
	for _, n := range resp.RemovedResources {
		if _, ok := held[n]; ok {
			delete(held, n)
			changed = true
			removed++
		}
	}
	requested := c.pending[t]
	delete(c.pending, t)
	// Follow-up subscriptions, computed from the whole held set.
	var follow []*discovery.DeltaDiscoveryRequest
	switch t {
	case pm.ClusterType:
		want := map[string]bool{}
		for _, a := range held {
			cl := &clusterv3.Cluster{}
			if a.UnmarshalTo(cl) != nil || cl.GetType() != clusterv3.Cluster_EDS {
				continue
			}
			name := cl.GetEdsClusterConfig().GetServiceName()
			if name == "" {
				name = cl.Name
			}
			want[name] = true
		}
		if r := c.resubscribe(pm.EndpointType, want); r != nil {
			follow = append(follow, r)
		}
	case pm.ListenerType:
		var ls []*listener.Listener
		for _, a := range held {
			l := &listener.Listener{}
			if a.UnmarshalTo(l) == nil {
				ls = append(ls, l)
			}
		}
		want := map[string]bool{}
		for _, n := range xdstest.ExtractRoutesFromListeners(ls) {
			want[n] = true
		}
		if r := c.resubscribe(pm.RouteType, want); r != nil {
			follow = append(follow, r)
		}
	}
	c.mu.Unlock()
	if name, ok := typeNames[t]; ok && c.onResp != nil {
		c.onResp(response{proxy: c.spec.Name(), typ: name, changed: changed, count: len(resp.Resources), removed: removed, requested: requested})
	}
	// ACK first, as Envoy does, then change subscriptions.
	_ = c.stream.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: t, ResponseNonce: resp.Nonce})
	for _, r := range follow {
		_ = c.stream.Send(r)
	}
}

// resubscribe returns the request that moves the subscription of type t to
// want, or nil when it is unchanged. The caller holds c.mu.
func (c *client) resubscribe(t string, want map[string]bool) *discovery.DeltaDiscoveryRequest {
	cur := c.watched[t]
	req := &discovery.DeltaDiscoveryRequest{TypeUrl: t}
	for n := range want {
		if !cur[n] {
			req.ResourceNamesSubscribe = append(req.ResourceNamesSubscribe, n)
		}
	}
	for n := range cur {
		if !want[n] {
			req.ResourceNamesUnsubscribe = append(req.ResourceNamesUnsubscribe, n)
			delete(c.held[t], n)
		}
	}
	if len(req.ResourceNamesSubscribe) == 0 && len(req.ResourceNamesUnsubscribe) == 0 {
		return nil
	}
	sort.Strings(req.ResourceNamesSubscribe)
	sort.Strings(req.ResourceNamesUnsubscribe)
	c.watched[t] = want
	if len(req.ResourceNamesSubscribe) > 0 {
		c.pending[t] = true
	}
	return req
}

func sortTypes(ts []string) []string {
	sort.Slice(ts, func(i, j int) bool { return typeOrder[ts[i]] < typeOrder[ts[j]] })
	return ts
}
