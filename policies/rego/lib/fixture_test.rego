# Test fixture shared by the built-in policies' tests: a small bundle in the
# shape of the real input (see policies/input.go), with an Application whose
# spec each test chooses.
package rolloutlint.fixture_test

ro := {"kind": "Rollout", "namespace": "shop", "name": "checkout", "index": 0}

stable := {"kind": "Service", "namespace": "shop", "name": "checkout-stable", "index": 1}

canary := {"kind": "Service", "namespace": "shop", "name": "checkout-canary", "index": 2}

vs := {"kind": "VirtualService", "namespace": "shop", "name": "checkout", "index": 3}

hpa := {"kind": "HorizontalPodAutoscaler", "namespace": "shop", "name": "checkout", "index": 4}

app := {"kind": "Application", "namespace": "argocd", "name": "checkout", "index": 5}

items(app_spec) := [
	{"ref": ro, "apiVersion": "argoproj.io/v1alpha1", "object": {"spec": {"replicas": 4}}},
	{"ref": stable, "apiVersion": "v1", "object": {"spec": {"selector": {"app": "checkout"}}}},
	{"ref": canary, "apiVersion": "v1", "object": {"spec": {"selector": {"app": "checkout"}}}},
	{"ref": vs, "apiVersion": "networking.istio.io/v1", "object": {"spec": {"http": [{"name": "primary"}]}}},
	{"ref": hpa, "apiVersion": "autoscaling/v2", "object": {"spec": {
		"scaleTargetRef": {"kind": "Rollout", "name": "checkout"},
		"minReplicas": 2, "maxReplicas": 10,
	}}},
	{"ref": app, "apiVersion": "argoproj.io/v1alpha1", "object": {"spec": app_spec}},
]

# bundle returns the input with the Application's spec; app_spec null leaves
# the Application out (it is last, so the other indexes stay valid).
bundle(app_spec, argocd) := {
	"resources": kept,
	"kinds": {k: [i | some i in kept; i.ref.kind == k] | some k in {i.ref.kind | some i in kept}},
	"objects": {k: {ns: {i.ref.name: i | some i in kept; i.ref.kind == k; i.ref.namespace == ns} | some ns in {i.ref.namespace | some i in kept; i.ref.kind == k}} | some k in {i.ref.kind | some i in kept}},
	"rollouts": [{
		"rollout": ro,
		"strategy": "canary",
		"services": [
			{"role": "stableService", "name": "checkout-stable", "path": "spec.strategy.canary.stableService", "target": stable},
			{"role": "canaryService", "name": "checkout-canary", "path": "spec.strategy.canary.canaryService", "target": canary},
		],
		"virtualServices": [{"target": vs, "name": "checkout", "namespace": "shop", "routes": [{
			"kind": "http", "index": 0, "vsPath": "spec.http[0]", "path": "spec.strategy.canary.trafficRouting.istio.virtualService.routes[0]",
			"destinations": [
				{"index": 0, "path": "spec.http[0].route[0]", "host": "checkout-stable", "subset": "", "weight": 100, "role": "stable"},
				{"index": 1, "path": "spec.http[0].route[1]", "host": "checkout-canary", "subset": "", "weight": 0, "role": "canary"},
			],
		}]}],
		"templates": [],
	}],
	"globals": {"argocd": argocd, "istioVersion": "1.28", "mode": "cli"},
} if {
	kept := [i | some i in items(app_spec); not excluded(i, app_spec)]
}

excluded(i, app_spec) if {
	app_spec == null
	i.ref.kind == "Application"
}

# self_heal is an automated, self-healing Application spec with extra fields.
self_heal(extra) := object.union({"syncPolicy": {"automated": {"selfHeal": true}}}, extra)

weights_ignored := {"ignoreDifferences": [{
	"group": "networking.istio.io", "kind": "VirtualService",
	"jqPathExpressions": [".spec.http[].route[].weight"],
}]}

respect := {"syncPolicy": {"automated": {"selfHeal": true}, "syncOptions": ["RespectIgnoreDifferences=true"]}}
