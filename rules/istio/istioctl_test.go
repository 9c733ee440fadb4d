package istio_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rolloutlint/rolloutlint/model/graph"
	"github.com/rolloutlint/rolloutlint/model/kinds"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/semantics/visibility"
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

// parityRules are the rules compared with istioctl, each with the codes it
// answers to (see docs/istioctl-parity.md).
var parityRules = []string{"RL3004", "RL3005", "RL3012", "RL3018", "RL3019", "RL3020"}

// TestParityWithIstioctl runs the rules that have an offline istioctl
// counterpart and istioctl over the same bundles and compares which objects
// each flags, rule by rule. Two differences are by design and filtered:
// RL3012 also checks Gateway API Gateways' listener hostnames (istioctl does
// that only after 1.31, istio/istio#60776; the pinned istioctl reports the
// reference as a gateway not found, which is RL3018's), and RL3019/RL3020
// decide coverage condition by condition, so they may flag more than
// istioctl's identical-match and URI-prefix comparison: for those the
// objects istioctl flags must be a subset of rolloutlint's, and every extra
// one is listed in parityExtras.
func TestParityWithIstioctl(t *testing.T) {
	bin, err := findIstioctl(t)
	if err != nil {
		t.Skipf("skipping: no istioctl binary (%v); %s", err, istioctlBuild)
	}
	bundles := []string{"testdata/istioctl-parity.yaml", "../../testdata/rules/RL3005", "../../testdata/rules/RL3012",
		"../../testdata/rules/RL3018", "../../testdata/rules/RL3019", "../../testdata/rules/RL3020"}
	var rs []*rules.Rule
	for _, r := range hygieneRules(t) {
		if slices.Contains(parityRules, r.ID) {
			rs = append(rs, r)
		}
	}
	seen := map[string]bool{}
	for _, bundle := range bundles {
		g, err := load.Paths([]string{bundle}, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := istioctlFindings(t, bin, bundle, g)
		got := map[string][]string{}
		for _, d := range runRules(t, g, rs) {
			if d.RuleID == "RL3012" && strings.Contains(d.Message, "Gateway API Gateway") {
				continue // after 1.31 only (see above)
			}
			got[d.RuleID] = append(got[d.RuleID], d.Object.Kind+" "+d.Object.Namespace+"/"+d.Object.Name)
			if d.RuleID == "RL3005" {
				for _, r := range d.Related {
					got[d.RuleID] = append(got[d.RuleID], r.Object.Kind+" "+r.Object.Namespace+"/"+r.Object.Name)
				}
			}
		}
		for _, id := range parityRules {
			w, gt := sortedUnique(want[id]), sortedUnique(got[id])
			seen[id] = seen[id] || len(w) > 0
			if id == "RL3019" || id == "RL3020" {
				for _, o := range w {
					if !slices.Contains(gt, o) {
						t.Errorf("%s: istioctl flags %s, %s does not", bundle, o, id)
					}
				}
				for _, o := range gt {
					if !slices.Contains(w, o) && !slices.Contains(parityExtras[id], o) {
						t.Errorf("%s: %s flags %s, istioctl does not (add it to parityExtras if coverage by condition explains it)", bundle, id, o)
					}
				}
				continue
			}
			if strings.Join(w, ";") != strings.Join(gt, ";") {
				t.Errorf("%s: %s flags %v, istioctl flags %v", bundle, id, gt, w)
			}
		}
	}
	for _, id := range parityRules {
		if !seen[id] {
			t.Errorf("%s: istioctl reported its counterpart nowhere; the bundles no longer exercise it", id)
		}
	}
}

// parityExtras are objects RL3019/RL3020 flag and istioctl does not: routes
// shadowed by a broader match that is not an identical match or a URI prefix
// with otherwise equal conditions.
var parityExtras = map[string][]string{
	"RL3019": {"VirtualService shop/catalog"},
	"RL3020": {"VirtualService shop/catalog"},
}

var gatewayNotFound = regexp.MustCompile(`Referenced gateway not found: "([^"]+)"`)

// istioctlFindings maps istioctl's messages on a bundle to the rules that
// answer them.
func istioctlFindings(t *testing.T, bin, bundle string, g *graph.Graph) map[string][]string {
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
			// A Gateway API Gateway of that name is RL3018's: istiod binds
			// VirtualServices to Istio Gateways only.
			ref := gatewayNotFound.FindStringSubmatch(m.Message)[1]
			id := "RL3004"
			if vsNS, ok := originNamespace(m.Origin); ok {
				ns, name := visibility.ResolveGatewayName(ref, vsNS)
				if g.GetGroup(kinds.GroupGatewayAPI, kinds.Gateway, ns, name) != nil {
					id = "RL3018"
				}
			}
			found[id] = append(found[id], m.Origin)
		case m.Code == "IST0165":
			found["RL3018"] = append(found["RL3018"], m.Origin)
		case m.Code == "IST0132":
			if !missingGateway(missing, m.Origin, m.Message) {
				found["RL3012"] = append(found["RL3012"], m.Origin)
			}
		case m.Code == "IST0130":
			found["RL3019"] = append(found["RL3019"], m.Origin)
		case m.Code == "IST0131":
			found["RL3020"] = append(found["RL3020"], m.Origin)
		}
	}
	return found
}

// originNamespace reads the namespace of an istioctl origin "Kind ns/name".
func originNamespace(origin string) (string, bool) {
	_, ref, ok := strings.Cut(origin, " ")
	if !ok {
		return "", false
	}
	ns, _, ok := strings.Cut(ref, "/")
	return ns, ok
}

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
