// Package argoconformance checks `rolloutlint plan` against the real Argo
// Rollouts controller: it runs the controller on a real kube-apiserver and
// etcd, plays the pods a cluster would add, walks every step of each
// scenario bundle, records what the controller wrote, and compares that with
// the plan state by state; at each pause it promotes or aborts at, with
// `plan --cluster` from the live state too (live.go).
//
// The package is its own Go module so that rolloutlint's go.mod never gains
// the controller's dependencies; it reads the plan only through its JSON
// contract (docs/plan.md, docs/plan.schema.json).
package argoconformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
)

// The parts of `rolloutlint plan --format json` (schema version 1) the
// comparison reads. Unknown fields are ignored: the schema may grow.

// PlanDoc is the whole JSON document.
type PlanDoc struct {
	SchemaVersion int           `json:"schemaVersion"`
	Rollouts      []PlanRollout `json:"rollouts"`
}

// PlanRollout is one Rollout's plan.
type PlanRollout struct {
	Rollout   Object      `json:"rollout"`
	Strategy  string      `json:"strategy"`
	Split     string      `json:"split"`
	Replicas  int32       `json:"replicas"`
	States    []PlanState `json:"states"`
	AbortFrom int         `json:"abortFrom"`
	Abort     []PlanState `json:"abort"`
}

// Object names a Kubernetes object.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String renders Kind/namespace/name, as the plan does.
func (o Object) String() string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

// PlanState is one state of a plan.
type PlanState struct {
	Phase          string         `json:"phase"`
	Step           int            `json:"step"`
	Action         string         `json:"action"`
	Routes         []PlanRoute    `json:"routes"`
	Managed        []ManagedRoute `json:"managedRoutes"`
	StableReplicas int32          `json:"stableReplicas"`
	CanaryReplicas int32          `json:"canaryReplicas"`
	Labels         []Label        `json:"labels"`
	Writes         []Write        `json:"writes"`
}

// PlanRoute is a managed route with its weighted destinations.
type PlanRoute struct {
	VS    Object     `json:"virtualService"`
	Kind  string     `json:"kind"`
	Index int        `json:"index"`
	Name  string     `json:"name"`
	Dests []PlanDest `json:"destinations"`
}

// PlanDest is one weighted destination.
type PlanDest struct {
	Host   string `json:"host"`
	Subset string `json:"subset"`
	Weight int32  `json:"weight"`
}

// ManagedRoute is a header or mirror route Argo adds.
type ManagedRoute struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Percentage int32  `json:"percentage"`
}

// Label is a selector or subset label and the revision it selects.
type Label struct {
	Object Object `json:"object"`
	Field  string `json:"field"`
	Hash   string `json:"hash"`
}

// Write is one API write.
type Write struct {
	Kind   string `json:"kind"`
	Object Object `json:"object"`
	Field  string `json:"field"`
	Old    string `json:"old"`
	New    string `json:"new"`
}

// RunPlan runs `rolloutlint plan --format json` on a bundle.
func RunPlan(rolloutlint, bundle string) (*PlanDoc, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(rolloutlint, "plan", "--config", "/dev/null", "--format", "json", bundle)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("rolloutlint plan %s: %w: %s", bundle, err, errb.String())
	}
	var doc PlanDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		return nil, fmt.Errorf("rolloutlint plan %s: decode: %w", bundle, err)
	}
	if doc.SchemaVersion != 1 {
		return nil, fmt.Errorf("rolloutlint plan %s: schemaVersion %d, this harness reads 1", bundle, doc.SchemaVersion)
	}
	return &doc, nil
}
