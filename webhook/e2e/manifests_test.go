package e2e

const badRollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: bad, namespace: shop}
spec:
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec: {containers: [{name: app, image: nginx}]}
  strategy:
    canary:
      steps:
      - setWeight: 20
      - setWeight: 150
`

// goodBundle is applied in this order: routing objects before the Services
// and the Rollout they name.
var goodBundle = []string{`
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: checkout, namespace: shop}
spec:
  hosts: [checkout]
  http:
  - name: primary
    route:
    - destination: {host: checkout-stable}
      weight: 100
    - destination: {host: checkout-canary}
      weight: 0
`, `
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: checkout, namespace: shop}
spec:
  host: checkout-stable
`, `
apiVersion: v1
kind: Service
metadata: {name: checkout-stable, namespace: shop}
spec:
  selector: {app: checkout}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, `
apiVersion: v1
kind: Service
metadata: {name: checkout-canary, namespace: shop}
spec:
  selector: {app: checkout}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, `
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: success-rate, namespace: shop}
spec:
  metrics:
  - name: success-rate
    interval: 1m
    count: 5
    successCondition: len(result) > 0 && result[0] >= 0.95
    provider:
      prometheus:
        address: http://prometheus.monitoring:9090
        query: sum(rate(http_requests_total{code!~"5.."}[1m])) / sum(rate(http_requests_total[1m]))
`, `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: checkout, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: app, image: nginx, ports: [{containerPort: 8080}]}]}
  strategy:
    canary:
      stableService: checkout-stable
      canaryService: checkout-canary
      trafficRouting:
        istio:
          virtualService: {name: checkout, routes: [primary]}
      steps:
      - setWeight: 20
      - analysis: {templates: [{templateName: success-rate}]}
      - setWeight: 50
      - pause: {duration: 1m}
`}

const typoVirtualService = `
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: typo, namespace: shop}
spec:
  hosts: [typo]
  http:
  - rout:
    - destination: {host: checkout-stable}
`

// warnRollout is clean but for a suppression that gives no reason and
// suppresses nothing: warning-level findings only.
const warnRollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: warned
  namespace: shop
  annotations: {rolloutlint.io/ignore: RL1001}
spec:
  selector: {matchLabels: {app: warned}}
  template:
    metadata: {labels: {app: warned}}
    spec: {containers: [{name: app, image: nginx}]}
  strategy: {canary: {steps: [{setWeight: 20}, {pause: {}}]}}
`

const sharedRolloutA = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: shared-a, namespace: shop}
spec:
  selector: {matchLabels: {app: shared-a}}
  template:
    metadata: {labels: {app: shared-a}}
    spec: {containers: [{name: app, image: nginx}]}
  strategy:
    canary:
      stableService: shared-a-stable
      canaryService: shared-a-canary
      trafficRouting: {istio: {virtualService: {name: shared, routes: [primary]}}}
      steps: [{setWeight: 10}]
`

const sharedRolloutB = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: shared-b, namespace: shop}
spec:
  selector: {matchLabels: {app: shared-b}}
  template:
    metadata: {labels: {app: shared-b}}
    spec: {containers: [{name: app, image: nginx}]}
  strategy:
    canary:
      stableService: shared-b-stable
      canaryService: shared-b-canary
      trafficRouting: {istio: {virtualService: {name: shared, routes: [primary]}}}
      steps: [{setWeight: 10}]
`

const sharedVirtualService = `
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: shared, namespace: shop}
spec:
  hosts: [shared]
  http:
  - name: primary
    route:
    - destination: {host: shared-a-stable}
      weight: 100
    - destination: {host: shared-a-canary}
      weight: 0
`
