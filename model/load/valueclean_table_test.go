package load_test

import (
	"strings"
	"testing"
)

// Each row is one problem class the node walks know. slow says whether
// CheckGo/CheckProto report it; fast is what GoClean/ProtoClean must answer
// (equal to !slow except where the value cannot tell).
var valueCleanCases = []struct {
	name       string
	doc        string
	slow, fast bool // slow: the node walk reports; fast: the value walk says clean
}{
	// Go types (Service, Rollout, HPA) through their JSON tags.
	{"go clean", svcDoc("ports: [{port: 80, targetPort: http}]"), false, true},
	{"go unknown field", svcDoc("ports: [{port: 80, prot: 1}]"), true, false},
	{"go unknown top-level field", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspek: {}\n", true, false},
	{"go string for int", svcDoc(`ports: [{port: "80"}]`), true, false},
	{"go integral float for int", svcDoc("ports: [{port: 80.0}]"), false, true},
	{"go exponent for int", svcDoc("ports: [{port: 8e1}]"), false, true},
	{"go fraction for int", svcDoc("ports: [{port: 80.5}]"), true, false},
	{"go hex int", svcDoc("ports: [{port: 0x50}]"), false, true},
	{"go number for string", svcDoc("type: 5"), true, false},
	{"go bool for string", svcDoc("type: true"), true, false},
	{"go timestamp for string", svcDoc("type: 2001-12-14"), false, true},
	{"go .inf for string", svcDoc("type: .inf"), true, false},
	{"go quoted .inf for string (value cannot tell)", svcDoc(`type: ".inf"`), false, false},
	{"go yes is a boolean to kubectl (YAML 1.1)", rolloutDoc("paused: yes"), false, true},
	{"go quoted yes is a string", rolloutDoc(`paused: "yes"`), true, false},
	{"go on for string is a boolean to kubectl", svcDoc("type: on"), true, false},
	{"go bool", rolloutDoc("paused: true"), false, true},
	{"go map where list expected", svcDoc("ports: {a: 1}"), true, false},
	{"go list where object expected", svcDoc("selector: [a]"), true, false},
	{"go list where map expected", rolloutDoc("selector: {matchLabels: [a]}"), true, false},
	{"go object where scalar expected", svcDoc("type: {a: b}"), true, false},
	{"go null anywhere", svcDoc("ports: [{port: ~, name: null}]\n  selector: ~"), false, true},
	{"go IntOrString number or name", svcDoc("ports: [{port: 80, targetPort: 8080}, {port: 81, targetPort: web}]"), false, true},
	{"go IntOrString takes anything", svcDoc("ports: [{port: 80, targetPort: {a: 1}}]"), false, true},
	{"go time must be text", "apiVersion: v1\nkind: Service\nmetadata: {name: a, creationTimestamp: {a: 1}}\n", true, false},
	{"go quantity", hpaDoc("{type: Resource, resource: {name: cpu, target: {type: AverageValue, averageValue: 500m}}}"), false, true},
	{"go int64 as text", rolloutDoc(`progressDeadlineSeconds: "600"`), true, false},
	{"go free-form interface", "apiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: a}\nspec:\n  metrics:\n  - name: m\n    provider: {web: {url: x, jsonBody: {any: [thing, 1, {deep: true}]}}}\n", false, true},
	{"go quoted merge-looking key is skipped", svcDoc(`"<<": 1`), false, true},
	{"go labels values must be strings", "apiVersion: v1\nkind: Service\nmetadata: {name: a, labels: {tier: 1}}\n", true, false},

	// Istio specs through their proto descriptors.
	{"proto clean", vsDoc("route: [{destination: {host: a, port: {number: 80}}, weight: 100}]"), false, true},
	{"proto unknown field", vsDoc("rout: []"), true, false},
	{"proto snake_case name", vsDoc("cors_policy: {}"), true, false},
	{"proto string weight (a string to the CRD schema, though protojson takes it)", vsDoc(`route: [{destination: {host: a}, weight: "50"}]`), true, false},
	{"proto text weight", vsDoc(`route: [{destination: {host: a}, weight: "fifty"}]`), true, false},
	{"proto integral float weight", vsDoc("route: [{destination: {host: a}, weight: 50.0}]"), false, true},
	{"proto fraction weight", vsDoc("route: [{destination: {host: a}, weight: 50.5}]"), true, false},
	{"proto negative unsigned", vsDoc("route: [{destination: {host: a, port: {number: -80}}}]"), true, false},
	{"proto minus zero unsigned", vsDoc("route: [{destination: {host: a, port: {number: -0}}}]"), false, true},
	{"proto bool for int", vsDoc("route: [{destination: {host: a}, weight: true}]"), true, false},
	{"proto map where list expected", vsDoc("route: {destination: {host: a}}"), true, false},
	{"proto scalar where message expected", vsDoc("route: [{destination: a}]"), true, false},
	{"proto list of lists for strings", "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a}\nspec: {hosts: [[a]]}\n", true, false},
	{"proto bool", gwDoc("{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*'], tls: {httpsRedirect: true}}"), false, true},
	{"proto text for bool", gwDoc("{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*'], tls: {httpsRedirect: 'yes'}}"), true, false},
	{"proto enum name", drDoc("tls: {mode: ISTIO_MUTUAL}"), false, true},
	{"proto bad enum name", drDoc("tls: {mode: MUTUALX}"), true, false},
	{"proto enum as number (the CRD schema takes names only)", drDoc("tls: {mode: 1}"), true, false},
	{"proto enum as float", drDoc("tls: {mode: 1.0}"), true, false},
	{"proto duration", drDoc("outlierDetection: {interval: 30s, baseEjectionTime: 100ms}"), false, true},
	{"proto duration in minutes", drDoc("outlierDetection: {interval: 5m}"), false, true},
	{"proto duration without unit", drDoc("outlierDetection: {interval: 30}"), true, false},
	{"proto duration text", drDoc("outlierDetection: {interval: soon}"), true, false},
	{"proto duration object", drDoc("outlierDetection: {interval: {seconds: 30}}"), true, false},
	{"proto uint wrapper", drDoc("outlierDetection: {consecutive5xxErrors: 5}"), false, true},
	{"proto uint wrapper zero", drDoc("outlierDetection: {consecutive5xxErrors: 0}"), false, true},
	{"proto uint wrapper quoted", drDoc(`outlierDetection: {consecutive5xxErrors: "5"}`), false, true},
	{"proto uint wrapper negative", drDoc("outlierDetection: {consecutive5xxErrors: -1}"), true, false},
	{"proto uint wrapper quoted negative", drDoc(`outlierDetection: {consecutive5xxErrors: "-1"}`), true, false},
	{"proto uint wrapper text", drDoc("outlierDetection: {consecutive5xxErrors: five}"), true, false},
	{"proto uint wrapper .inf", drDoc("outlierDetection: {consecutive5xxErrors: .inf}"), true, false},
	{"proto bool wrapper", vsDoc("retries: {attempts: 3, retryRemoteLocalities: true}"), false, true},
	{"proto bool wrapper text", vsDoc("retries: {attempts: 3, retryRemoteLocalities: sure}"), true, false},
	{"proto map of strings", drSubsetDoc("labels: {version: v1}"), false, true},
	{"proto map value object", drSubsetDoc("labels: {version: {a: b}}"), true, false},
	{"proto null anywhere", vsDoc("route: ~\n    timeout: null"), false, true},
	{"proto quoted merge-looking key is skipped", vsDoc(`"<<": 1`), false, true},
}

func svcDoc(spec string) string {
	return "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n  " + spec + "\n"
}

func rolloutDoc(spec string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: a}\nspec:\n  " + spec + "\n"
}

func hpaDoc(metric string) string {
	return "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\nspec:\n  maxReplicas: 3\n  metrics:\n  - " + metric + "\n"
}

func vsDoc(route string) string {
	return "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a}\nspec:\n  hosts: [a]\n  http:\n  - name: r\n    " + route + "\n"
}

func drDoc(policy string) string {
	return "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: a}\nspec:\n  host: a\n  trafficPolicy:\n    " + policy + "\n"
}

func drSubsetDoc(subset string) string {
	return "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: a}\nspec:\n  host: a\n  subsets:\n  - name: s\n    " + subset + "\n"
}

func gwDoc(server string) string {
	return "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: a}\nspec:\n  servers:\n  - " + server + "\n"
}

func TestValueCleanProblemClasses(t *testing.T) {
	for _, c := range valueCleanCases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			docs := docsOf("case", []byte(c.doc))
			if len(docs) != 1 {
				t.Fatalf("%d known documents in\n%s", len(docs), c.doc)
			}
			d := docs[0]
			if r := outsideContract(d.node); r != "" {
				t.Fatalf("case is outside the value contract: %s", r)
			}
			problems := d.slow()
			if (len(problems) > 0) != c.slow {
				t.Errorf("node walk reports %q, want problems=%v", problems, c.slow)
			}
			if got := d.fast(); got != c.fast {
				t.Errorf("value walk says clean=%v, want %v (node walk: %q)", got, c.fast, problems)
			}
		})
	}
}

// TestOutsideContract pins the node details the value walks cannot see, so
// the differential tests skip exactly those documents.
func TestOutsideContract(t *testing.T) {
	for doc, want := range map[string]string{
		svcDoc("type: !custom ClusterIP"):                         "explicit tag",
		svcDoc("type: !!int abc"):                                 "explicit tag",
		svcDoc("type: ClusterIP\n  type: NodePort"):               "duplicate key",
		"base: &b {port: 80}\n" + svcDoc("ports: [{<<: *b}]"):     "merge key",
		"k: &k port\n" + svcDoc("ports: [{*k : 80}]"):             "alias as a key",
		svcDoc("type: !!str ClusterIP\n  clusterIP: !!null None"): "",
	} {
		var got string
		for _, d := range docsOf("case", []byte(doc)) {
			got = outsideContract(d.node)
		}
		if !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("outsideContract = %q, want %q for\n%s", got, want, doc)
		}
	}
}
