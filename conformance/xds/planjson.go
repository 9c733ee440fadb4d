package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
)

// The subset of `rolloutlint plan --format json` (docs/plan.schema.json) the
// harness plays: states, their labels, replicas, routes and writes.

type planDoc struct {
	SchemaVersion int           `json:"schemaVersion"`
	IstioVersion  string        `json:"istioVersion"`
	Rollouts      []planRollout `json:"rollouts"`
}

type planObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (o planObject) String() string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

type planRollout struct {
	Rollout   planObject  `json:"rollout"`
	Strategy  string      `json:"strategy"`
	Split     string      `json:"split"`
	Replicas  int         `json:"replicas"`
	States    []planState `json:"states"`
	AbortFrom int         `json:"abortFrom"`
	Abort     []planState `json:"abort"`
}

type planState struct {
	Phase          string        `json:"phase"`
	Step           int           `json:"step"`
	Routes         []planRoute   `json:"routes"`
	Managed        []planManaged `json:"managedRoutes"`
	StableReplicas int           `json:"stableReplicas"`
	CanaryReplicas int           `json:"canaryReplicas"`
	Labels         []planLabel   `json:"labels"`
	Writes         []planWrite   `json:"writes"`
}

type planRoute struct {
	VS    planObject `json:"virtualService"`
	Kind  string     `json:"kind"`
	Index int        `json:"index"`
	Name  string     `json:"name"`
	Dests []planDest `json:"destinations"`
}

type planDest struct {
	Host   string `json:"host"`
	Subset string `json:"subset"`
	Role   string `json:"role"`
	Weight int32  `json:"weight"`
}

type planManaged struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Percentage int32  `json:"percentage"`
}

type planLabel struct {
	Object planObject `json:"object"`
	Field  string     `json:"field"`
	Hash   string     `json:"hash"`
}

type planWrite struct {
	Kind      string     `json:"kind"`
	Object    planObject `json:"object"`
	Field     string     `json:"field"`
	Old       string     `json:"old"`
	New       string     `json:"new"`
	RouteKind string     `json:"routeKind"`
	Hosts     []string   `json:"hosts"`
	Batch     int        `json:"batch"`
}

// runPlan runs `rolloutlint plan --format json` on a bundle.
func runPlan(rolloutlint, bundle, model string) (*planDoc, []byte, error) {
	cmd := exec.Command(rolloutlint, "plan", "--config", os.DevNull, "--format", "json", "--istio-version", model, bundle)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("%s plan %s: %w", rolloutlint, bundle, err)
	}
	var p planDoc
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, nil, fmt.Errorf("plan of %s: %w", bundle, err)
	}
	if p.SchemaVersion != 1 {
		return nil, nil, fmt.Errorf("plan of %s: schema version %d, want 1", bundle, p.SchemaVersion)
	}
	return &p, out, nil
}
