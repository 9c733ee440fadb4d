package appsetconformance

import (
	"os"
	"path/filepath"
	"testing"
)

const root = "../.."

// TestObservations compares rolloutlint's expansion with what Argo CD's
// own ApplicationSet code generated from the same trees: the recorded
// observations (testdata/conformance/appset/*.json, part of make test), or
// the fresh ones of make conformance-appset (APPSET_OBSERVATIONS=DIR).
// Every mismatch is a bug in model/units unless it is a documented
// limitation (docs/repositories.md), which rolloutlint reports as an info.
func TestObservations(t *testing.T) {
	dir := os.Getenv("APPSET_OBSERVATIONS")
	if dir == "" {
		dir = filepath.Join(root, "testdata", "conformance", "appset")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no observations in %s: %v", dir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			obs, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if obs.ArgoCD == "" || obs.Repo == "" || len(obs.Sets) == 0 {
				t.Fatalf("observation names no Argo CD version, repository or set: %+v", obs)
			}
			p, err := Predict(filepath.Join(root, filepath.FromSlash(obs.Repo)))
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]int{}
			for _, r := range Compare(obs, p) {
				counts[r.Verdict]++
				line := r.File + " " + r.Set + ": " + r.Verdict + " " + r.Detail
				if r.Verdict == "mismatch" {
					t.Error(line)
				} else {
					t.Log(line)
				}
			}
			t.Logf("Argo CD %s, %s: %d match, %d mismatch, %d limitation, %d skipped", obs.ArgoCD, obs.Repo,
				counts["match"], counts["mismatch"], counts["limitation"], counts["skipped"])
		})
	}
}
