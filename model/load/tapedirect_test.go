package load_test

import (
	"testing"

	"github.com/rolloutlint/rolloutlint/model/fastyaml"
)

// TestDecodeTapeStoresAsTheGenericRoute covers the values DecodeTape stores
// without protoreflect or reflect.Value boxing (Istio strings, string lists,
// string maps and message lists; integers and IntOrStrings; slices made in
// place) and their edge cases, which must take the generic steps or give
// the same object: checkChunk compares DecodeTape with the generic route.
func TestDecodeTapeStoresAsTheGenericRoute(t *testing.T) {
	const vs = "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: a, namespace: n}\nspec:\n"
	const dr = "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: a}\nspec:\n"
	const ro = "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: a}\nspec:\n"
	const svc = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n"
	cases := map[string]string{
		"vs strings":             vs + "  hosts: [a, b]\n  gateways: []\n  exportTo: ['.']\n  http:\n  - name: p\n    route:\n    - destination: {host: a, subset: s}\n      weight: 100\n",
		"vs null in list":        vs + "  hosts: [a, null, b]\n",
		"vs number in list":      vs + "  hosts: [a, 5]\n",
		"vs list not a list":     vs + "  hosts: a\n",
		"vs empty messages":      vs + "  http: []\n  tcp: [{}]\n",
		"vs null message item":   vs + "  http:\n  - name: a\n  -\n",
		"vs scalar message item": vs + "  http: [a]\n",
		"vs string not a string": vs + "  http:\n  - name: 5\n  - name: true\n",
		"vs empty string":        vs + "  http:\n  - name: ''\n    route:\n    - destination: {host: ''}\n",
		"vs proto names":         vs + "  export_to: [a]\n  exportTo: [b]\n",
		"vs unknown key":         vs + "  hosts: [a]\n  bogus: [x]\n",
		"dr labels":              dr + "  host: a\n  subsets:\n  - name: s\n    labels: {version: v1, app: a}\n  - name: t\n    labels: {}\n",
		"dr label not a string":  dr + "  host: a\n  subsets:\n  - name: s\n    labels: {version: 1}\n",
		"dr null label":          dr + "  host: a\n  subsets:\n  - name: s\n    labels: {version: null}\n",
		"dr labels not a map":    dr + "  host: a\n  subsets:\n  - name: s\n    labels: [a]\n",
		"ro numbers":             ro + "  replicas: 3\n  revisionHistoryLimit: 300\n  progressDeadlineSeconds: -7\n  strategy:\n    canary:\n      maxSurge: 3\n      maxUnavailable: '25%'\n      steps:\n      - setWeight: 1000\n      - pause: {duration: 3000000000}\n      - pause: {duration: 5m}\n      - pause: {duration: -2147483648}\n",
		"ro empty lists":         ro + "  strategy:\n    canary:\n      steps: []\n  template:\n    spec:\n      containers: []\n",
		"ro float into int":      ro + "  replicas: 3.0\n",
		"svc ports":              svc + "  ports:\n  - {port: 80, targetPort: 8080, nodePort: 30000}\n  - {port: 443, targetPort: https}\n  - {port: 70000, targetPort: 2147483648}\n  externalIPs: [a, null]\n",
		"svc int into string":    svc + "  type: 5\n  clusterIP: 10\n",
	}
	for name, doc := range cases {
		checkChunk(t, name, []byte(doc), fastyaml.DefaultMaxNodes)
	}
}
