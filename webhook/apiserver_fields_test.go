package webhook

import (
	"testing"
)

// Objects as the API server sends them carry server-set metadata and
// defaulted fields; none of that may produce a finding.
func TestServerPopulatedFieldsAreClean(t *testing.T) {
	meta := `
  uid: 5f0c7c1e-8a53-4a4e-9d0c-4c7a3b1d2e11
  resourceVersion: "12345"
  generation: 3
  creationTimestamp: "2026-11-29T08:00:00Z"
  managedFields:
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: v1
    time: "2026-11-29T08:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {f:metadata: {f:annotations: {}}}
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1"}'
`
	objs := []string{`
apiVersion: v1
kind: Service
metadata:
  name: checkout-stable
  namespace: shop` + meta + `spec:
  clusterIP: 10.96.0.12
  clusterIPs: [10.96.0.12]
  internalTrafficPolicy: Cluster
  ipFamilies: [IPv4]
  ipFamilyPolicy: SingleStack
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]
  selector: {app: checkout}
  sessionAffinity: None
  type: ClusterIP
status: {loadBalancer: {}}
`, `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: checkout
  namespace: shop` + meta + `spec:
  selector: {matchLabels: {app: checkout}}
  template: {metadata: {labels: {app: checkout}}, spec: {containers: [{name: app, image: nginx}]}}
  strategy: {canary: {steps: [{setWeight: 20}, {pause: {}}]}}
`, `
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: checkout
  namespace: shop` + meta + `spec:
  hosts: [checkout]
  http: [{name: primary, route: [{destination: {host: checkout-stable}, weight: 100}]}]
`}
	h := newTestHandler(Options{})
	for _, o := range objs {
		_, resp := post(t, h, reviewJSON(t, "s", "UPDATE", o, false))
		if resp == nil || !resp.Allowed || len(resp.Warnings) > 0 {
			t.Errorf("server-populated object flagged: %+v\n%s", resp, o)
		}
	}
}
