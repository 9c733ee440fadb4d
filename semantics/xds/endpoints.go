package xds

import (
	"strconv"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
)

// endpointsSim follows, write by write, which revision's pods each host's
// endpoints hold, so that an endpoint change can be classified the way
// istiod's EndpointIndex does (reference §4.2: a host that lost every
// endpoint has no shard; the next endpoints create one).
type endpointsSim struct {
	// sel is the revision hash a managed Service selects, by host FQDN.
	// Hosts not in sel (a DestinationRule's Service, a ServiceEntry) select
	// every revision.
	sel  map[string]string
	pods map[string]int32 // revision hash → pods
}

// endpointEvent is one endpoint change on one host.
type endpointEvent struct {
	host   string
	change EndpointChange
	stage  Stage
}

func newEndpointsSim(s plan.State) *endpointsSim {
	e := &endpointsSim{sel: map[string]string{}, pods: map[string]int32{plan.OldHash: s.StableReplicas, plan.NewHash: s.CanaryReplicas}}
	for _, l := range s.Labels {
		if l.Object.Kind == "Service" {
			e.sel[graph.ServiceFQDN(l.Object.Name, l.Object.Namespace)] = l.Hash
		}
	}
	return e
}

func (e *endpointsSim) clone() *endpointsSim {
	if e == nil {
		return nil
	}
	c := &endpointsSim{sel: map[string]string{}, pods: map[string]int32{}}
	for k, v := range e.sel {
		c.sel[k] = v
	}
	for k, v := range e.pods {
		c.pods[k] = v
	}
	return c
}

// count is the number of endpoints a host holds.
func (e *endpointsSim) count(host string) int32 {
	h, ok := e.sel[host]
	if !ok {
		var n int32
		for _, c := range e.pods {
			n += c
		}
		return n
	}
	return e.pods[h]
}

// apply advances the simulation past one write and returns the endpoint
// changes it causes. A nil simulation (a state predicted on its own) takes
// every host to have endpoints.
func (e *endpointsSim) apply(w plan.Write) []endpointEvent {
	switch w.Kind {
	case plan.WriteServiceSelector:
		var out []endpointEvent
		for _, h := range w.Hosts {
			before, after := int32(1), int32(1)
			if e != nil {
				before = e.count(h)
				e.sel[h] = w.New
				after = e.count(h)
			}
			switch {
			case before == 0 && after == 0:
			case after == 0:
				out = append(out, endpointEvent{h, Emptied, StageSlice})
			case before == 0:
				out = append(out, endpointEvent{h, Filled, StageSlice})
			case before != after:
				out = append(out, endpointEvent{h, Resized, StageSlice})
			default:
				out = append(out, endpointEvent{h, Reselected, StageSlice})
			}
		}
		return out
	case plan.WriteScale:
		old, err1 := strconv.Atoi(w.Old)
		nw, err2 := strconv.Atoi(w.New)
		if err1 != nil || err2 != nil || old == nw {
			return nil
		}
		hash := plan.NewHash
		if strings.HasSuffix(w.Object.Name, "-"+plan.OldHash) {
			hash = plan.OldHash
		}
		var out []endpointEvent
		for _, h := range w.Hosts {
			switch {
			case nw > old && e != nil && e.count(h) == 0:
				out = append(out, endpointEvent{h, NotReadyToEmpty, StageWrite}, endpointEvent{h, TurnedReady, StageReady})
			case nw > old:
				out = append(out, endpointEvent{h, NotReadyAdded, StageWrite}, endpointEvent{h, TurnedReady, StageReady})
			default:
				out = append(out, endpointEvent{h, Terminating, StageWrite}, endpointEvent{h, Deleted, StageDeleted})
			}
		}
		if e != nil {
			e.pods[hash] = int32(nw)
		}
		return out
	}
	return nil
}
