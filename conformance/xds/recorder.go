package main

import (
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	"istio.io/istio/pilot/pkg/model"
)

// recorder collects, between two settle points, what istiod decided per
// proxy (ProxyNeedsPush) and what each proxy received.
type recorder struct {
	mu    sync.Mutex
	last  time.Time
	byIP  map[string]string // proxy IP → proxy name
	order []int64           // push ids (PushRequest.Start) in order of appearance
	push  map[int64]*PushObs
	// current is, per proxy, the push whose responses it is receiving.
	current map[string]int64
	clients map[string]*client
	// stray collects responses that no push explains.
	stray []response
}

func newRecorder() *recorder {
	return &recorder{byIP: map[string]string{}, clients: map[string]*client{}}
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.order, r.push, r.current, r.stray = nil, map[int64]*PushObs{}, map[string]int64{}, nil
}

func (r *recorder) touch() { r.last = time.Now() }

// quietFor reports how long nothing was recorded.
func (r *recorder) quietFor() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.last)
}

// keyString renders a ConfigKey the way the plan names it.
func keyString(k model.ConfigKey) string {
	switch name := k.Kind.String(); name {
	case "ServiceEntry", "Endpoints": // kind.Endpoints exists from 1.31 only
		return name + "/" + k.Name
	default:
		return name + "/" + k.Namespace + "/" + k.Name
	}
}

// fullFlag reads PushRequest.Full where the field exists (up to 1.30).
func fullFlag(req *model.PushRequest) *bool {
	f := reflect.ValueOf(req).Elem().FieldByName("Full")
	if !f.IsValid() || f.Kind() != reflect.Bool {
		return nil
	}
	b := f.Bool()
	return &b
}

// needsPush records ProxyNeedsPush's answer for one proxy and push.
func (r *recorder) needsPush(proxy *model.Proxy, req *model.PushRequest, pushed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touch()
	if r.push == nil {
		return
	}
	name := ""
	if len(proxy.IPAddresses) > 0 {
		name = r.byIP[proxy.IPAddresses[0]]
	}
	if name == "" {
		return
	}
	id := req.Start.UnixNano()
	po := r.push[id]
	if po == nil {
		po = &PushObs{Reasons: map[string]int{}, Proxies: map[string]ProxyObs{}, Full: fullFlag(req)}
		keys := map[string]bool{}
		for k := range req.ConfigsUpdated {
			keys[keyString(k)] = true
		}
		for k := range keys {
			po.Keys = append(po.Keys, k)
		}
		sort.Strings(po.Keys)
		for reason, n := range req.Reason {
			po.Reasons[string(reason)] = n
		}
		r.push[id] = po
		r.order = append(r.order, id)
	}
	pxo := po.Proxies[name]
	pxo.Pushed = pxo.Pushed || pushed
	if c := r.clients[name]; c != nil {
		pxo.EDSWatched, pxo.RDSWatched = c.watchedCounts()
	}
	po.Proxies[name] = pxo
	if pushed {
		r.current[name] = id
	}
}

// response attributes one received response to the proxy's current push.
func (r *recorder) response(x response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.touch()
	if r.push == nil {
		return
	}
	id, ok := r.current[x.proxy]
	if !ok {
		r.stray = append(r.stray, x)
		return
	}
	po := r.push[id]
	pxo := po.Proxies[x.proxy]
	if x.requested {
		pxo.Requested = addType(pxo.Requested, x.typ)
	} else {
		pxo.Sent = addType(pxo.Sent, x.typ)
		if x.typ == "EDS" {
			pxo.EDSSent += x.count
		}
	}
	if x.changed {
		pxo.Changed = addType(pxo.Changed, x.typ)
	}
	po.Proxies[x.proxy] = pxo
}

func addType(ts []string, t string) []string {
	for _, x := range ts {
		if x == t {
			return ts
		}
	}
	return sortTypes(append(ts, t))
}

// take returns the pushes recorded since the last reset, labelled.
func (r *recorder) take(stage string, batch int) ([]PushObs, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []PushObs
	for _, id := range r.order {
		po := *r.push[id]
		po.Stage, po.Batch = stage, batch
		for n, p := range po.Proxies {
			if p.Sent == nil {
				p.Sent = []string{}
			}
			if p.Changed == nil {
				p.Changed = []string{}
			}
			po.Proxies[n] = p
		}
		out = append(out, po)
	}
	var err error
	if len(r.stray) > 0 {
		err = fmt.Errorf("%d responses that no push explains (first: %s %s)", len(r.stray), r.stray[0].proxy, r.stray[0].typ)
	}
	r.order, r.push, r.current, r.stray = nil, map[int64]*PushObs{}, map[string]int64{}, nil
	return out, err
}
