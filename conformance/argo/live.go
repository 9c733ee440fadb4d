package argoconformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

// LivePlan is `rolloutlint plan --cluster` run while the controller rested
// at a pause: the plan from the live state, with the real hashes and the
// run's namespaces put back to the symbolic hashes and the bundle's
// namespaces, so that it compares with the recorded views.
type LivePlan struct {
	// Step is the pause step the Rollout rested at.
	Step int
	// Abort is set when the run aborted right after (its abort path is
	// compared).
	Abort bool
	Plan  *PlanRollout
}

// planFromLive runs `rolloutlint plan --cluster` on the namespace of the
// Rollout name, without PATH (every live Rollout of the namespace).
func (e *Env) planFromLive(ctx context.Context, namespace, name, stableHash, canaryHash string, nsBack map[string]string) (*PlanRollout, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, e.Rolloutlint, "plan", "--config", "/dev/null", "--cluster", "--kubeconfig", e.Kubeconfig,
		"--cluster-namespace", namespace, "--format", "json")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("rolloutlint plan --cluster: %w: %s", err, errb.String())
	}
	// Symbolic hashes (JSON escapes < and >) and the bundle's namespaces,
	// longest live namespace first.
	pairs := []string{stableHash, `\u003cstable-hash\u003e`, canaryHash, `\u003ccanary-hash\u003e`}
	lives := make([]string, 0, len(nsBack))
	for l := range nsBack {
		lives = append(lives, l)
	}
	sort.Slice(lives, func(i, j int) bool { return len(lives[i]) > len(lives[j]) })
	for _, l := range lives {
		pairs = append(pairs, l, nsBack[l])
	}
	var doc PlanDoc
	if err := json.Unmarshal([]byte(strings.NewReplacer(pairs...).Replace(out.String())), &doc); err != nil {
		return nil, fmt.Errorf("rolloutlint plan --cluster: decode: %w", err)
	}
	for i := range doc.Rollouts {
		if doc.Rollouts[i].Rollout.Name == name {
			return &doc.Rollouts[i], nil
		}
	}
	return nil, fmt.Errorf("rolloutlint plan --cluster: no plan of Rollout %s/%s", namespace, name)
}

// CompareFromLive lines up a plan from the live state with the observed
// run: the live state and the pause it rests at are the observed state of
// that step (without the writes that led into it), and the states after it
// the observed ones; for an abort run, the abort path the observed one.
func CompareFromLive(lp LivePlan, obs *Observation) []Row {
	views := make([]View, 0, len(lp.Plan.States))
	for _, s := range lp.Plan.States {
		views = append(views, PlanView(s))
	}
	k := -1
	for i, o := range obs.States {
		if o.Phase == "step" && o.Step == lp.Step {
			k = i
		}
	}
	if k < 0 || len(views) < 2 || views[0].Phase != "live" {
		return []Row{{State: fmt.Sprintf("live at step %d", lp.Step), Field: "state", Plan: fmt.Sprintf("%d states", len(views)), Controller: fmt.Sprintf("observed step %d at %d", lp.Step, k)}}
	}
	if lp.Abort {
		abort := make([]View, 0, len(lp.Plan.Abort))
		for _, s := range lp.Plan.Abort {
			abort = append(abort, PlanView(s))
		}
		return Compare(abort, obs.Abort)
	}
	rest := obs.States[k]
	rest.Writes = nil
	rows := Compare(views[1:2], []View{rest})
	return append(rows, Compare(views[2:], obs.States[k+1:])...)
}
