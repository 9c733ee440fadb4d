// Package kinds is the table of Kubernetes kinds rolloutlint understands: which
// Go type each decodes into and how its fields are checked strictly.
package kinds

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"google.golang.org/protobuf/proto"
	networkingv1 "istio.io/api/networking/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Well-known kind names, used by rules and the graph.
const (
	Rollout                 = "Rollout"
	AnalysisTemplate        = "AnalysisTemplate"
	ClusterAnalysisTemplate = "ClusterAnalysisTemplate"
	Experiment              = "Experiment"
	AnalysisRun             = "AnalysisRun"
	Application             = "Application"
	Service                 = "Service"
	VirtualService          = "VirtualService"
	DestinationRule         = "DestinationRule"
	Gateway                 = "Gateway"
	ServiceEntry            = "ServiceEntry"
	Sidecar                 = "Sidecar"
	HorizontalPodAutoscaler = "HorizontalPodAutoscaler"
	// Workloads whose pod templates rules read untyped (a Rollout's
	// workloadRef, the pods behind a Service).
	Deployment  = "Deployment"
	StatefulSet = "StatefulSet"
	DaemonSet   = "DaemonSet"
	ReplicaSet  = "ReplicaSet"
	PodTemplate = "PodTemplate"
	// ConfigMap is read untyped for Istio's mesh configuration (the "istio"
	// ConfigMap of the root namespace, key "mesh").
	ConfigMap = "ConfigMap"
)

// names are the kind names above: every kind rules and policies may declare
// they read.
var names = map[string]bool{
	Rollout: true, AnalysisTemplate: true, ClusterAnalysisTemplate: true, Experiment: true, Application: true,
	Service: true, VirtualService: true, DestinationRule: true, Gateway: true, ServiceEntry: true, Sidecar: true,
	HorizontalPodAutoscaler: true, Deployment: true, StatefulSet: true, DaemonSet: true, ReplicaSet: true,
	AnalysisRun: true, PodTemplate: true, ConfigMap: true,
}

// IsName reports whether kind is one of the kind names rolloutlint knows.
func IsName(kind string) bool { return names[kind] }

// API groups.
const (
	GroupArgo   = "argoproj.io"
	GroupIstio  = "networking.istio.io"
	GroupCore   = ""
	GroupScaler = "autoscaling"
	GroupApps   = "apps"
	// GroupGatewayAPI is the Kubernetes Gateway API group. Its Gateway kind
	// shares the name "Gateway" with Istio's: tell them apart by Group.
	GroupGatewayAPI = "gateway.networking.k8s.io"
)

// Kind describes one known kind.
type Kind struct {
	Group      string
	Kind       string
	Versions   []string // accepted apiVersion versions
	Namespaced bool
	// New returns a pointer to a zero typed object, or nil when the kind is known
	// but kept untyped (for example Argo CD Applications, whose Go types live in a
	// module we do not depend on).
	New func() any
	// Spec returns the protobuf message the object's spec decodes into, for kinds
	// whose spec is an Istio proto; strict checking then walks its descriptor.
	Spec func(obj any) proto.Message
}

// IstioObject is the shape of every Istio networking object: Kubernetes type and
// object metadata around an Istio API message.
type IstioObject[T any] struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              T              `json:"spec"`
	Status            map[string]any `json:"status,omitempty"`
}

// Istio object types.
type (
	// VirtualServiceObject is a networking.istio.io VirtualService.
	VirtualServiceObject = IstioObject[networkingv1.VirtualService]
	// DestinationRuleObject is a networking.istio.io DestinationRule.
	DestinationRuleObject = IstioObject[networkingv1.DestinationRule]
	// GatewayObject is a networking.istio.io Gateway.
	GatewayObject = IstioObject[networkingv1.Gateway]
	// ServiceEntryObject is a networking.istio.io ServiceEntry.
	ServiceEntryObject = IstioObject[networkingv1.ServiceEntry]
	// SidecarObject is a networking.istio.io Sidecar.
	SidecarObject = IstioObject[networkingv1.Sidecar]
)

var istioVersions = []string{"v1", "v1beta1", "v1alpha3"}

var table = []*Kind{
	{Group: GroupArgo, Kind: Rollout, Versions: []string{"v1alpha1"}, Namespaced: true, New: func() any { return &v1alpha1.Rollout{} }},
	{Group: GroupArgo, Kind: AnalysisTemplate, Versions: []string{"v1alpha1"}, Namespaced: true, New: func() any { return &v1alpha1.AnalysisTemplate{} }},
	{Group: GroupArgo, Kind: ClusterAnalysisTemplate, Versions: []string{"v1alpha1"}, Namespaced: false, New: func() any { return &v1alpha1.ClusterAnalysisTemplate{} }},
	{Group: GroupArgo, Kind: Experiment, Versions: []string{"v1alpha1"}, Namespaced: true, New: func() any { return &v1alpha1.Experiment{} }},
	{Group: GroupArgo, Kind: AnalysisRun, Versions: []string{"v1alpha1"}, Namespaced: true, New: func() any { return &v1alpha1.AnalysisRun{} }},
	{Group: GroupArgo, Kind: Application, Versions: []string{"v1alpha1"}, Namespaced: true},
	{Group: GroupCore, Kind: Service, Versions: []string{"v1"}, Namespaced: true, New: func() any { return &corev1.Service{} }},
	{Group: GroupScaler, Kind: HorizontalPodAutoscaler, Versions: []string{"v2"}, Namespaced: true, New: func() any { return &autoscalingv2.HorizontalPodAutoscaler{} }},
	{Group: GroupIstio, Kind: VirtualService, Versions: istioVersions, Namespaced: true,
		New:  func() any { return &VirtualServiceObject{} },
		Spec: func(o any) proto.Message { return &o.(*VirtualServiceObject).Spec }},
	{Group: GroupIstio, Kind: DestinationRule, Versions: istioVersions, Namespaced: true,
		New:  func() any { return &DestinationRuleObject{} },
		Spec: func(o any) proto.Message { return &o.(*DestinationRuleObject).Spec }},
	{Group: GroupIstio, Kind: Gateway, Versions: istioVersions, Namespaced: true,
		New:  func() any { return &GatewayObject{} },
		Spec: func(o any) proto.Message { return &o.(*GatewayObject).Spec }},
	{Group: GroupIstio, Kind: ServiceEntry, Versions: istioVersions, Namespaced: true,
		New:  func() any { return &ServiceEntryObject{} },
		Spec: func(o any) proto.Message { return &o.(*ServiceEntryObject).Spec }},
	{Group: GroupIstio, Kind: Sidecar, Versions: istioVersions, Namespaced: true,
		New:  func() any { return &SidecarObject{} },
		Spec: func(o any) proto.Message { return &o.(*SidecarObject).Spec }},
}

type groupKind struct{ group, kind string }

var byGroupKind = func() map[groupKind]*Kind {
	m := make(map[groupKind]*Kind, len(table))
	for _, k := range table {
		m[groupKind{k.Group, k.Kind}] = k
	}
	return m
}()

// Lookup returns the known kind for a group and kind, or nil.
func Lookup(group, kind string) *Kind {
	return byGroupKind[groupKind{group, kind}]
}

// SupportsVersion reports whether v is one of the kind's served versions.
func (k *Kind) SupportsVersion(v string) bool {
	for _, s := range k.Versions {
		if s == v {
			return true
		}
	}
	return false
}

// IsNamespaced reports whether objects of group/kind live in a namespace. Unknown
// kinds are assumed namespaced, as most custom resources are.
func IsNamespaced(group, kind string) bool {
	if k := Lookup(group, kind); k != nil {
		return k.Namespaced
	}
	switch kind {
	case "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
		"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "PersistentVolume",
		"StorageClass", "PriorityClass", "Node":
		return false
	}
	return true
}
