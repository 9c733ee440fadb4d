package istio_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
)

// istioVersion is the istio.io/istio module version the parity tests build
// istioctl from (the master of late August 2026, Istio 1.30 development).
const istioVersion = "v0.0.0-20260827124520-eed52ebb66ad"

// istioctlBuild says how to get the binary when it is missing.
const istioctlBuild = "set ROLLOUTLINT_BUILD_ISTIOCTL=1 (and -timeout 60m) to build istioctl " + istioVersion +
	" into the user cache (rolloutlint-build/istioctl), or put istioctl on PATH, or set ISTIOCTL"

// findIstioctl returns a real istioctl: $ISTIOCTL, the PATH, or the shared
// build cache, which it fills when ROLLOUTLINT_BUILD_ISTIOCTL=1 (building
// istioctl takes many minutes, so it is never done unasked).
func findIstioctl(t *testing.T) (string, error) {
	if p := os.Getenv("ISTIOCTL"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("istioctl"); err == nil {
		return p, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("istioctl not found and no cache directory: %w", err)
	}
	p := filepath.Join(dir, "rolloutlint-build", "istioctl")
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p, nil
	}
	if os.Getenv("ROLLOUTLINT_BUILD_ISTIOCTL") != "1" {
		return "", errors.New("istioctl not found")
	}
	if err := buildIstioctl(t, p); err != nil {
		return "", fmt.Errorf("building istioctl: %w", err)
	}
	return p, nil
}

// buildIstioctl builds istioctl from the pinned istio.io/istio module into
// dest, in a throw-away module so that the project's go.mod is untouched.
func buildIstioctl(t *testing.T, dest string) error {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module istioctlbuild\n\ngo 1.26.10\n"), 0o644); err != nil {
		return err
	}
	run := func(args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	const pkg = "istio.io/istio/istioctl/cmd/istioctl"
	if err := run("get", pkg+"@"+istioVersion); err != nil {
		return err
	}
	if err := run("build", "-o", dest+".tmp", pkg); err != nil {
		return err
	}
	return os.Rename(dest+".tmp", dest)
}

// TestParityWithIstioctl runs the real `istioctl analyze --use-kube=false`
// over bundles and checks that the RL3xxx rules with an offline istioctl
// counterpart flag exactly the objects istioctl flags: RL3005 ↔ IST0109,
// RL3004 ↔ IST0101 (gateway), RL3012 ↔ IST0132 (for Gateways that exist:
// istioctl also reports IST0132 against a missing Gateway, which is RL3004's).
func TestParityWithIstioctl(t *testing.T) {
	bin, err := findIstioctl(t)
	if err != nil {
		t.Skipf("skipping: no istioctl binary (%v); %s", err, istioctlBuild)
	}
	// The RL3004 testdata is left out on purpose: it uses the legacy
	// `name.namespace` gateway form, which istiod resolves and istioctl's
	// analyzer does not.
	bundles := []string{"testdata/istioctl-parity.yaml", "../../testdata/rules/RL3005", "../../testdata/rules/RL3012"}
	var rs []*rules.Rule
	for _, r := range hygieneRules(t) {
		if r.ID == "RL3004" || r.ID == "RL3005" || r.ID == "RL3012" {
			rs = append(rs, r)
		}
	}
	seen := map[string]bool{}
	for _, bundle := range bundles {
		want := istioctlFindings(t, bin, bundle)
		g, err := load.Paths([]string{bundle}, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{}
		for _, d := range runRules(t, g, rs) {
			got[d.RuleID] = append(got[d.RuleID], d.Object.Kind+" "+d.Object.Namespace+"/"+d.Object.Name)
			if d.RuleID == "RL3005" {
				// istioctl reports a duplicate host on each VirtualService;
				// RL3005 once, with the others related.
				for _, r := range d.Related {
					got[d.RuleID] = append(got[d.RuleID], r.Object.Kind+" "+r.Object.Namespace+"/"+r.Object.Name)
				}
			}
		}
		for _, id := range []string{"RL3004", "RL3005", "RL3012"} {
			w, gt := sortedUnique(want[id]), sortedUnique(got[id])
			seen[id] = seen[id] || len(w) > 0
			if strings.Join(w, ";") != strings.Join(gt, ";") {
				t.Errorf("%s: %s flags %v, istioctl flags %v", bundle, id, gt, w)
			}
		}
	}
	for _, id := range []string{"RL3004", "RL3005", "RL3012"} {
		if !seen[id] {
			t.Errorf("%s: istioctl reported its counterpart nowhere; the bundles no longer exercise it", id)
		}
	}
}

// gatewayNotFound extracts the gateway of an IST0101 gateway message.
var gatewayNotFound = regexp.MustCompile(`Referenced gateway not found: "([^"]+)"`)

// istioctlFindings runs istioctl analyze over a bundle and maps its messages
// to the rolloutlint rules they correspond to, as "Kind namespace/name".
func istioctlFindings(t *testing.T, bin, bundle string) map[string][]string {
	t.Helper()
	msgs := istioctlMessages(t, bin, bundle)
	missing := map[string][]string{} // origin → gateways not found, as written
	for _, m := range msgs {
		if sm := gatewayNotFound.FindStringSubmatch(m.Message); m.Code == "IST0101" && sm != nil {
			missing[m.Origin] = append(missing[m.Origin], sm[1])
		}
	}
	found := map[string][]string{}
	for _, m := range msgs {
		switch {
		case m.Code == "IST0109":
			found["RL3005"] = append(found["RL3005"], m.Origin)
		case m.Code == "IST0101" && gatewayNotFound.MatchString(m.Message):
			found["RL3004"] = append(found["RL3004"], m.Origin)
		case m.Code == "IST0132":
			if !missingGateway(missing, m.Origin, m.Message) {
				found["RL3012"] = append(found["RL3012"], m.Origin)
			}
		}
	}
	return found
}

// missingGateway reports whether an IST0132 message is about a Gateway that
// istioctl also reported as not found for the same VirtualService. IST0132
// names it `namespace/name.`; IST0101 as written (`name` or `namespace/name`).
func missingGateway(missing map[string][]string, origin, message string) bool {
	for _, gw := range missing[origin] {
		if strings.HasSuffix(message, " "+gw+".") || strings.HasSuffix(message, "/"+gw+".") {
			return true
		}
	}
	return false
}

func sortedUnique(ss []string) []string {
	sort.Strings(ss)
	var out []string
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// istioctlMessages runs istioctl analyze over one path and returns its
// messages.
func istioctlMessages(t *testing.T, bin, path string) []istioctlMessage {
	t.Helper()
	out, err := exec.Command(bin, "analyze", "--use-kube=false", "--all-namespaces", "--output", "json", "--output-threshold", "Info", path).Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v", bin, err)
	}
	var msgs []istioctlMessage
	if err := json.Unmarshal(out, &msgs); err != nil {
		t.Fatalf("istioctl output on %s is not the JSON list expected: %v\n%s", path, err, out)
	}
	return msgs
}

// istioctlMessage is one entry of `istioctl analyze --output json`.
type istioctlMessage struct {
	Code    string `json:"code"`
	Origin  string `json:"origin"`
	Message string `json:"message"`
}

// TestCleanTestdataIsValidIstio makes sure the clean files of the RL3xxx
// rules are configurations Istio accepts and fully uses: no schema error
// (IST0106) and no unreachable or ineffective rule (IST0130, IST0131). A
// clean file that Istio rejects would prove nothing about false alarms.
// It also confirms RL3009's claim that an all-zero split is rejected.
func TestCleanTestdataIsValidIstio(t *testing.T) {
	bin, err := findIstioctl(t)
	if err != nil {
		t.Skipf("skipping: no istioctl binary (%v); %s", err, istioctlBuild)
	}
	dirs, err := filepath.Glob("../../testdata/rules/RL3*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no RL3xxx testdata: %v", err)
	}
	for _, dir := range dirs {
		for _, m := range istioctlMessages(t, bin, filepath.Join(dir, "clean.yaml")) {
			switch m.Code {
			case "IST0106", "IST0130", "IST0131":
				t.Errorf("%s/clean.yaml: istioctl %s on %s: %s", dir, m.Code, m.Origin, m.Message)
			}
		}
	}
	rejected := false
	for _, m := range istioctlMessages(t, bin, "../../testdata/rules/RL3009/bad.yaml") {
		if m.Code == "IST0106" && m.Origin == "VirtualService shop/reviews" && strings.Contains(m.Message, "total destination weight = 0") {
			rejected = true
		}
	}
	if !rejected {
		t.Error("istioctl does not reject the all-zero split of RL3009/bad.yaml, which RL3009 reports as rejected")
	}
}
