package webhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// deployObjects decodes every document of deploy/*.yaml strictly into its
// API type, so a typo in a manifest fails here rather than at install time.
func deployObjects(t *testing.T) map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "deploy", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no deploy manifests: %v", err)
	}
	out := map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj any
			switch tm.Kind {
			case "Deployment":
				obj = &appsv1.Deployment{}
			case "PodDisruptionBudget":
				obj = &policyv1.PodDisruptionBudget{}
			case "Service":
				obj = &corev1.Service{}
			case "ServiceAccount":
				obj = &corev1.ServiceAccount{}
			case "ConfigMap":
				obj = &corev1.ConfigMap{}
			case "Namespace":
				obj = &corev1.Namespace{}
			case "ClusterRole":
				obj = &rbacv1.ClusterRole{}
			case "ClusterRoleBinding":
				obj = &rbacv1.ClusterRoleBinding{}
			case "ValidatingWebhookConfiguration":
				obj = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			default:
				continue // kustomization, cert-manager objects
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s: %s: %v", f, tm.Kind, err)
			}
			out[tm.Kind] = obj
		}
	}
	return out
}

func TestDeployManifests(t *testing.T) {
	objs := deployObjects(t)
	d := objs["Deployment"].(*appsv1.Deployment)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Error("Deployment: want 2 replicas")
	}
	pod := d.Spec.Template.Spec
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Error("Deployment: pods must run as non-root")
	}
	c := pod.Containers[0]
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("Deployment: root filesystem must be read-only")
	}
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"webhook", "--cert-file=", "--key-file=", "--config="} {
		if !strings.Contains(args, want) {
			t.Errorf("Deployment args lack %q: %s", want, args)
		}
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("Deployment: readiness must use /readyz")
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Error("Deployment: liveness must use /healthz")
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["metrics"] != 9090 || !strings.Contains(args, "--metrics-addr=:9090") {
		t.Errorf("Deployment: want a metrics port 9090 served by --metrics-addr: ports %v, args %s", ports, args)
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p.HTTPGet.Port.String() != "metrics" {
			t.Errorf("Deployment: probe %s on port %s; the plain metrics port keeps TLS out of the kubelet's probes", p.HTTPGet.Path, p.HTTPGet.Port.String())
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().Cmp(resource.MustParse("512Mi")) != 0 {
		t.Errorf("Deployment: want CPU and memory requests and the 512Mi memory limit: %+v", c.Resources)
	}
	memLimit := ""
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			memLimit = e.Value
		}
	}
	if memLimit == "" {
		t.Error("Deployment: GOMEMLIMIT unset; the Go heap would grow to the container limit before collecting hard")
	}
	if !strings.Contains(args, "--max-concurrent-reviews=") {
		t.Error("Deployment: the lint concurrency must be bounded explicitly (memory)")
	}
	for _, u := range DefaultTrustedUsers {
		if !strings.Contains(args, "--trusted-user="+u) {
			t.Errorf("Deployment: --trusted-user=%s not spelled out", u)
		}
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 15 {
		t.Error("Deployment: terminationGracePeriodSeconds must cover --shutdown-delay and the reviews in flight")
	}
	if a := pod.Affinity; a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Error("Deployment: replicas must spread over nodes (pod anti-affinity)")
	}
	if pdb := objs["PodDisruptionBudget"].(*policyv1.PodDisruptionBudget); pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 {
		t.Error("PodDisruptionBudget: want minAvailable >= 1")
	}
	for _, r := range objs["ClusterRole"].(*rbacv1.ClusterRole).Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" && v != "watch" {
				t.Errorf("ClusterRole grants %q", v)
			}
		}
	}
	vwc := objs["ValidatingWebhookConfiguration"].(*admissionregistrationv1.ValidatingWebhookConfiguration)
	for _, w := range vwc.Webhooks {
		if w.SideEffects == nil || *w.SideEffects != admissionregistrationv1.SideEffectClassNone {
			t.Errorf("%s: sideEffects must be None", w.Name)
		}
		if w.TimeoutSeconds == nil || *w.TimeoutSeconds != 5 {
			t.Errorf("%s: timeoutSeconds must be 5", w.Name)
		}
		if DefaultTimeout.Seconds() >= float64(*w.TimeoutSeconds) {
			t.Errorf("%s: the webhook's own timeout %s is not below timeoutSeconds", w.Name, DefaultTimeout)
		}
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore {
			t.Errorf("%s: failurePolicy must default to Ignore", w.Name)
		}
		excluded := map[string]bool{}
		for _, e := range w.NamespaceSelector.MatchExpressions {
			if e.Key == "kubernetes.io/metadata.name" && e.Operator == metav1.LabelSelectorOpNotIn {
				for _, v := range e.Values {
					excluded[v] = true
				}
			}
		}
		for _, ns := range []string{d.Namespace, "kube-system"} {
			if !excluded[ns] {
				t.Errorf("%s: namespace %q is not excluded", w.Name, ns)
			}
		}
		var resources []string
		for _, r := range w.Rules {
			resources = append(resources, r.Resources...)
		}
		got := strings.Join(resources, ",")
		if got != "rollouts,analysistemplates,clusteranalysistemplates,virtualservices,destinationrules,services" {
			t.Errorf("%s: rules cover %s", w.Name, got)
		}
	}
}
