package clusterview

import (
	"sort"
	"strings"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// Key identifies one object of the cluster view. Namespace is "" for
// cluster-scoped kinds.
type Key struct {
	Kind      string
	Namespace string
	Name      string
}

// String renders the key as Kind ns/name (or Kind name when cluster-scoped).
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Kind + " " + k.Name
	}
	return k.Kind + " " + k.Namespace + "/" + k.Name
}

// File is the name the object is loaded under (graph.LiveFile):
// cluster:Kind/namespace/name.
func (k Key) File() string { return graph.LiveFile(k.Kind, k.Namespace, k.Name) }

// Kinds the view reads: the webhook watches the first seven (WebhookKinds),
// a one-shot lint lists those its rules read (Kinds).
const (
	KindRollout                 = kinds.Rollout
	KindService                 = kinds.Service
	KindVirtualService          = kinds.VirtualService
	KindDestinationRule         = kinds.DestinationRule
	KindAnalysisTemplate        = kinds.AnalysisTemplate
	KindClusterAnalysisTemplate = kinds.ClusterAnalysisTemplate
	KindApplication             = kinds.Application
	KindGateway                 = kinds.Gateway
	KindServiceEntry            = kinds.ServiceEntry
	KindSidecar                 = kinds.Sidecar
	KindExperiment              = kinds.Experiment
	KindHorizontalPodAutoscaler = kinds.HorizontalPodAutoscaler
	KindDeployment              = kinds.Deployment
	KindStatefulSet             = kinds.StatefulSet
	KindDaemonSet               = kinds.DaemonSet
	KindReplicaSet              = kinds.ReplicaSet
)

// References lists the objects an object of the given kind and namespace
// points at by name (see references); a one-shot lint reads the namespaces
// they are in.
func References(kind, ns string, obj map[string]any) []Key { return references(kind, ns, obj) }

// references lists the objects an object points at by name, the edges the
// view follows to assemble what one admission request is linted with. They
// mirror what model/graph resolves (Rollout → Services, VirtualServices,
// DestinationRule, templates; VirtualService and DestinationRule → the
// Services of their hosts; any object → its Argo CD Application), but work on
// the generic object so that an index entry costs no typed decode.
func references(kind, ns string, obj map[string]any) []Key {
	var out []Key
	add := func(k Key) {
		if k.Name != "" {
			out = append(out, k)
		}
	}
	switch kind {
	case KindRollout:
		canary := mapAt(obj, "spec", "strategy", "canary")
		for _, f := range []string{"stableService", "canaryService"} {
			add(Key{KindService, ns, str(canary, f)})
		}
		pp := mapAt(canary, "pingPong")
		add(Key{KindService, ns, str(pp, "pingService")})
		add(Key{KindService, ns, str(pp, "pongService")})
		bg := mapAt(obj, "spec", "strategy", "blueGreen")
		add(Key{KindService, ns, str(bg, "activeService")})
		add(Key{KindService, ns, str(bg, "previewService")})
		istio := mapAt(canary, "trafficRouting", "istio")
		vsRef := func(m map[string]any) {
			if name := str(m, "name"); name != "" {
				n, vns := graph.SplitNamespacedName(name, ns)
				add(Key{KindVirtualService, vns, n})
			}
		}
		vsRef(mapAt(istio, "virtualService"))
		for _, v := range list(istio, "virtualServices") {
			if m, ok := v.(map[string]any); ok {
				vsRef(m)
			}
		}
		if name := str(mapAt(istio, "destinationRule"), "name"); name != "" {
			// Argo Rollouts looks the DestinationRule up as written in the
			// Rollout's namespace (no name.namespace form).
			add(Key{KindDestinationRule, ns, name})
		}
		walkTemplates(mapAt(obj, "spec", "strategy"), func(name string, cluster bool) {
			if cluster {
				add(Key{KindClusterAnalysisTemplate, "", name})
			} else {
				add(Key{KindAnalysisTemplate, ns, name})
			}
		})
	case KindVirtualService:
		spec := mapAt(obj, "spec")
		for _, g := range list(spec, "gateways") {
			if name, _ := g.(string); name != "" && name != "mesh" {
				gns, gname, ok := strings.Cut(name, "/")
				if !ok {
					gns, gname = ns, name
				}
				add(Key{KindGateway, gns, gname})
			}
		}
		for _, section := range []string{"http", "tls", "tcp"} {
			for _, r := range list(spec, section) {
				rm, _ := r.(map[string]any)
				for _, d := range list(rm, "route") {
					dm, _ := d.(map[string]any)
					if k, ok := serviceForHost(str(mapAt(dm, "destination"), "host"), ns); ok {
						add(k)
					}
				}
			}
		}
	case KindDestinationRule:
		if k, ok := serviceForHost(str(mapAt(obj, "spec"), "host"), ns); ok {
			add(k)
		}
	}
	if app := applicationName(obj); app != "" {
		add(Key{KindApplication, "", app})
	}
	return dedupeKeys(out)
}

// serviceForHost maps an Istio destination host to the Service it names in
// the cluster, when it is a cluster-local name.
func serviceForHost(host, ns string) (Key, bool) {
	fq := graph.FQDN(host, ns)
	suffix := ".svc." + graph.ClusterDomain
	if !strings.HasSuffix(fq, suffix) {
		return Key{}, false
	}
	parts := strings.Split(strings.TrimSuffix(fq, suffix), ".")
	if len(parts) != 2 {
		return Key{}, false
	}
	return Key{KindService, parts[1], parts[0]}, true
}

// applicationName returns the Argo CD Application that tracks the object,
// from the tracking-id annotation (app:group/kind:ns/name) or, failing that,
// the instance label Argo CD sets by default. Applications are looked up by
// name in any namespace, since they usually live in argocd's own.
func applicationName(obj map[string]any) string {
	md := mapAt(obj, "metadata")
	if id := str(mapAt(md, "annotations"), "argocd.argoproj.io/tracking-id"); id != "" {
		if i := strings.IndexByte(id, ':'); i > 0 {
			return id[:i]
		}
	}
	return str(mapAt(md, "labels"), "app.kubernetes.io/instance")
}

// walkTemplates calls fn for every templateName under v (steps, background
// analysis, blue-green pre/post promotion, experiments), with clusterScope, in
// order of name. Map keys are not sorted on the way down: on a Rollout of
// thousands of steps that sorting was a tenth of a review.
func walkTemplates(v any, fn func(name string, cluster bool)) {
	type use struct {
		name    string
		cluster bool
	}
	var found []use
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if name, ok := t["templateName"].(string); ok && name != "" {
				cluster, _ := t["clusterScope"].(bool)
				found = append(found, use{name, cluster})
			}
			for _, e := range t {
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	sort.Slice(found, func(i, j int) bool {
		if found[i].name != found[j].name {
			return found[i].name < found[j].name
		}
		return !found[i].cluster && found[j].cluster
	})
	for i, u := range found {
		if i == 0 || u != found[i-1] {
			fn(u.name, u.cluster)
		}
	}
}

func dedupeKeys(ks []Key) []Key {
	seen := make(map[Key]bool, len(ks))
	out := ks[:0]
	for _, k := range ks {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func mapAt(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		if m == nil {
			return nil
		}
		m, _ = m[p].(map[string]any)
	}
	return m
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func list(m map[string]any, key string) []any {
	l, _ := m[key].([]any)
	return l
}
