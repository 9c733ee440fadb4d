package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutlint/rolloutlint/internal/proccpu"
	"github.com/rolloutlint/rolloutlint/live/clusterview"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
)

// bigShapes are the ways a legal Rollout grows towards etcd's 1.5 MB object
// limit: many canary steps, many analysis steps sharing one template (whose
// findings then carry one related location per step), experiments, a large
// pod template, and a large annotation (kubectl's last-applied copy).
var bigShapes = []string{"steps", "analysis", "experiment", "env", "annotation"}

// bigRollout returns a Rollout of the shape, grown with n repetitions.
func bigRollout(shape string, n int) map[string]any {
	canary := map[string]any{"stableService": "big-stable", "canaryService": "big-canary",
		"trafficRouting": map[string]any{"istio": map[string]any{
			"virtualService":  map[string]any{"name": "big", "routes": []any{"primary"}},
			"destinationRule": map[string]any{"name": "big", "stableSubsetName": "stable", "canarySubsetName": "canary"}}}}
	container := map[string]any{"name": "app", "image": "nginx:1.25"}
	md := map[string]any{"name": "big", "namespace": "shop"}
	steps := []any{map[string]any{"setWeight": 10}, map[string]any{"pause": map[string]any{}}}
	switch shape {
	case "steps":
		steps = nil
		for i := 0; i < n; i++ {
			steps = append(steps, map[string]any{"setWeight": i%99 + 1}, map[string]any{"pause": map[string]any{"duration": "10s"}})
		}
	case "analysis":
		steps = nil
		for i := 0; i < n; i++ {
			steps = append(steps, map[string]any{"setWeight": i%99 + 1}, map[string]any{"analysis": map[string]any{
				"templates": []any{map[string]any{"templateName": "success-rate"}},
				"args":      []any{map[string]any{"name": "svc", "value": "big"}}}})
		}
	case "experiment":
		steps = nil
		for i := 0; i < n; i++ {
			steps = append(steps, map[string]any{"setWeight": i%99 + 1}, map[string]any{"experiment": map[string]any{
				"duration":  "1m",
				"templates": []any{map[string]any{"name": "c", "specRef": "canary", "weight": 5}},
				"analyses": []any{map[string]any{"name": "a", "templateName": "success-rate",
					"args": []any{map[string]any{"name": "svc", "value": "big"}}}}}})
		}
	case "env":
		env := make([]any, 0, n)
		for i := 0; i < n; i++ {
			env = append(env, map[string]any{"name": fmt.Sprintf("VAR_%d", i), "value": fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", 30))})
		}
		container["env"] = env
	case "annotation":
		md["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 50*n)}
	default:
		panic("unknown shape " + shape)
	}
	canary["steps"] = steps
	return map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": md,
		"spec": map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": map[string]any{"app": "big"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "big"}},
				"spec": map[string]any{"containers": []any{container}}},
			"strategy": map[string]any{"canary": canary}}}
}

// bigRolloutJSON returns the shape grown to about size bytes of JSON (within 10 %).
func bigRolloutJSON(t testing.TB, shape string, size int) []byte {
	t.Helper()
	n := 1
	for {
		raw, err := json.Marshal(bigRollout(shape, n))
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) >= size*9/10 {
			return raw
		}
		n = max(n+1, int(float64(n)*float64(size)/float64(len(raw))))
	}
}

// bigNeighbours are the cluster objects a big Rollout is linted with: its
// Services, VirtualService, DestinationRule and AnalysisTemplate. The
// template's successCondition draws a warning, so every review carries a
// finding with one related location per analysis step.
const bigNeighbours = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"big-stable","namespace":"shop"},"spec":{"selector":{"app":"big"},"ports":[{"port":80}]}}
{"apiVersion":"v1","kind":"Service","metadata":{"name":"big-canary","namespace":"shop"},"spec":{"selector":{"app":"big"},"ports":[{"port":80}]}}
{"apiVersion":"networking.istio.io/v1","kind":"VirtualService","metadata":{"name":"big","namespace":"shop"},"spec":{"hosts":["big"],"http":[{"name":"primary","route":[{"destination":{"host":"big-stable","subset":"stable"},"weight":100},{"destination":{"host":"big-stable","subset":"canary"},"weight":0}]}]}}
{"apiVersion":"networking.istio.io/v1","kind":"DestinationRule","metadata":{"name":"big","namespace":"shop"},"spec":{"host":"big-stable","subsets":[{"name":"stable","labels":{"app":"big"}},{"name":"canary","labels":{"app":"big"}}]}}
{"apiVersion":"argoproj.io/v1alpha1","kind":"AnalysisTemplate","metadata":{"name":"success-rate","namespace":"shop"},"spec":{"args":[{"name":"svc"}],"metrics":[{"name":"sr","interval":"1m","count":3,"successCondition":"result[0] >= 0.95","provider":{"prometheus":{"address":"http://prom:9090","query":"sum(rate(http_requests_total{service=\"{{args.svc}}\"}[5m]))"}}}]}}`

func bigView(t testing.TB) *clusterview.View {
	t.Helper()
	v := clusterview.New()
	dec := json.NewDecoder(strings.NewReader(bigNeighbours))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if err := v.Set(&unstructured.Unstructured{Object: m}); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// BenchmarkReviewSize lints one Rollout of 10 KB to 1.5 MB, of each shape,
// with its neighbours, and reports the cost per byte of the object (wall time
// and process CPU time), which must stay flat as the object grows: it doubled
// from 100 KB to 1.4 MB of analysis steps while merging related locations was
// quadratic.
func BenchmarkReviewSize(b *testing.B) {
	l := &Linter{Rules: all.Rules(), View: bigView(b), Globals: rules.Globals{IstioVersion: "1.28"}}
	for _, shape := range bigShapes {
		for _, size := range []int{10 << 10, 100 << 10, 500 << 10, 1500 << 10} {
			raw := bigRolloutJSON(b, shape, size)
			b.Run(fmt.Sprintf("%s/%dKB", shape, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				cpu := proccpu.Self()
				for b.Loop() {
					var obj map[string]any
					if err := json.Unmarshal(raw, &obj); err != nil {
						b.Fatal(err)
					}
					if _, err := l.Lint(context.Background(), clusterview.Key{Kind: clusterview.KindRollout, Namespace: "shop", Name: "big"}, "shop", raw, obj); err != nil {
						b.Fatal(err)
					}
				}
				perByte := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / float64(len(raw)) }
				b.ReportMetric(perByte(b.Elapsed()), "ns/byte")
				if c := proccpu.Self() - cpu; c > 0 {
					b.ReportMetric(perByte(c), "cpu-ns/byte")
				}
			})
		}
	}
}
