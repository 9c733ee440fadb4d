package rollout

import (
	"sort"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// Paths of the canary fields several rules point at.
const (
	canaryPath  = "spec.strategy.canary"
	routingPath = canaryPath + ".trafficRouting"
)

// canaryOf returns the canary strategy, or nil.
func canaryOf(ro *v1alpha1.Rollout) *v1alpha1.CanaryStrategy {
	return ro.Spec.Strategy.Canary
}

// routingOf returns the canary's traffic routing, or nil.
func routingOf(ro *v1alpha1.Rollout) *v1alpha1.RolloutTrafficRouting {
	if c := canaryOf(ro); c != nil {
		return c.TrafficRouting
	}
	return nil
}

// routers lists the traffic routers a trafficRouting block configures, sorted,
// with plugins as "plugins".
func routers(tr *v1alpha1.RolloutTrafficRouting) []string {
	if tr == nil {
		return nil
	}
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(tr.Istio != nil, "istio")
	add(tr.Nginx != nil, "nginx")
	add(tr.ALB != nil, "alb")
	add(tr.SMI != nil, "smi")
	add(tr.Ambassador != nil, "ambassador")
	add(tr.AppMesh != nil, "appMesh")
	add(tr.Traefik != nil, "traefik")
	add(tr.Apisix != nil, "apisix")
	add(len(tr.Plugins) > 0, "plugins")
	sort.Strings(out)
	return out
}

// anyRouter reports whether the routing block configures one of the routers.
func anyRouter(tr *v1alpha1.RolloutTrafficRouting, names ...string) bool {
	for _, have := range routers(tr) {
		for _, n := range names {
			if have == n {
				return true
			}
		}
	}
	return false
}

// routerList renders the configured routers for a message.
func routerList(tr *v1alpha1.RolloutTrafficRouting) string {
	rs := routers(tr)
	if len(rs) == 0 {
		return "no router"
	}
	return strings.Join(rs, ", ")
}

// orList renders names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// itoa formats an int for messages.
func itoa(i int) string { return strconv.Itoa(i) }
