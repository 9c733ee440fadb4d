package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"istio.io/istio/pilot/pkg/config/kube/crd"
	"istio.io/istio/pkg/config"
)

// bundle is what the harness reads from a scenario's manifests: the
// Kubernetes Services, the Istio configs and each Rollout's pod template.
type bundle struct {
	services []*corev1.Service
	configs  []config.Config
	rollouts map[string]*rolloutSpec // ns/name
	// proxies are extra proxies a scenario asks for in a
	// "# conformance: proxies=..." line (see docs/xds-conformance.md).
	proxies []proxySpec
}

// rolloutSpec is the part of a Rollout the Kubernetes side needs.
type rolloutSpec struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Template struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				ServiceAccountName string `json:"serviceAccountName"`
				Containers         []struct {
					Ports []struct {
						Name          string `json:"name"`
						ContainerPort int32  `json:"containerPort"`
					} `json:"ports"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
		Strategy struct {
			Canary *struct {
				Steps []struct {
					SetHeaderRoute *struct {
						Name  string `json:"name"`
						Match []struct {
							HeaderName  string `json:"headerName"`
							HeaderValue struct {
								Exact  string `json:"exact"`
								Prefix string `json:"prefix"`
								Regex  string `json:"regex"`
							} `json:"headerValue"`
						} `json:"match"`
					} `json:"setHeaderRoute"`
					SetMirrorRoute *struct {
						Name string `json:"name"`
					} `json:"setMirrorRoute"`
				} `json:"steps"`
			} `json:"canary"`
		} `json:"strategy"`
	} `json:"spec"`
}

var proxiesLine = regexp.MustCompile(`(?m)^#\s*conformance:\s*proxies=(\S+)`)

func loadBundle(path string) (*bundle, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b := &bundle{rollouts: map[string]*rolloutSpec{}}
	if m := proxiesLine.FindSubmatch(raw); m != nil {
		for _, p := range strings.Split(string(m[1]), ",") {
			ps, err := parseProxySpec(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			b.proxies = append(b.proxies, ps)
		}
	}
	for i, doc := range splitDocs(string(raw)) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		switch {
		case head.Kind == "":
			continue
		case head.APIVersion == "v1" && head.Kind == "Service":
			svc := &corev1.Service{}
			if err := yaml.UnmarshalStrict([]byte(doc), svc); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
			}
			if svc.Namespace == "" {
				svc.Namespace = "default"
			}
			defaultService(svc)
			b.services = append(b.services, svc)
		case head.Kind == "Rollout":
			r := &rolloutSpec{}
			if err := yaml.Unmarshal([]byte(doc), r); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
			}
			if r.Metadata.Namespace == "" {
				r.Metadata.Namespace = "default"
			}
			b.rollouts[r.Metadata.Namespace+"/"+r.Metadata.Name] = r
		case strings.Contains(head.APIVersion, "istio.io"):
			cfgs, unknown, err := crd.ParseInputs(doc)
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
			}
			if len(unknown) > 0 {
				return nil, fmt.Errorf("%s: document %d: unknown Istio kind %v", path, i+1, unknown)
			}
			for _, c := range cfgs {
				if c.Namespace == "" {
					c.Namespace = "default"
				}
				// The CRD client sets the domain; without it short hosts
				// resolve to name.namespace (reference pitfall 1).
				c.Domain = "cluster.local"
				b.configs = append(b.configs, c)
			}
		}
	}
	return b, nil
}

// defaultService fills in what the API server defaults and the fake
// clientset does not: a port's protocol (TCP) and its targetPort (the port).
func defaultService(svc *corev1.Service) {
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort.Type == intstr.Int && p.TargetPort.IntVal == 0 {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
}

func splitDocs(s string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimRight(line, " \t\r") == "---" {
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	return append(out, cur.String())
}
