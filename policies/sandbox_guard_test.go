package policies

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/rolloutlint/rolloutlint/rules"
)

// loadProbe loads a user policy (acme.probe, RL9100) whose one violation
// per Rollout carries the value of expr.
func loadProbe(t *testing.T, expr string) []*rules.Rule {
	t.Helper()
	dir := writePolicy(t, "p.rego", goodMeta+`package acme.probe

violation contains v if {
	some ro in input.rollouts
	r := `+expr+`
	v := {"msg": sprintf("result %v", [r]), "ref": ro.rollout, "path": "spec"}
}
`)
	rs, err := LoadDirs([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// evalPolicy lints the RL0009 testdata with a user policy whose one violation
// carries the value of expr, and returns that policy's findings (RL9100) and
// its failures (RL0009).
func evalPolicy(t *testing.T, expr string) (found, failed []string) {
	t.Helper()
	rs := loadProbe(t, expr)
	res := lintRL0009Testdata(t, rs)
	return messages(res, "RL9100"), messages(res, "RL0009")
}

func all(ms []string) string { return strings.Join(ms, "\n") }

func TestSchemaBuiltinsDoNotReadFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "token.json")
	if err := os.WriteFile(secret, []byte(`{"type": "string", "description": "ghp_SECRETTOKEN"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("TOPSECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []string{
		`json.match_schema("x", {"$ref": "file://` + secret + `"})`,
		`json.verify_schema({"$ref": "file://` + plain + `"})`,
		`json.verify_schema("{\"$ref\": \"file://` + plain + `\"}")`, // a schema given as JSON text
		`json.match_schema("x", {"definitions": {"a": {"$ref": "FILE://` + secret + `"}}, "$ref": "#/definitions/a"})`,
		`json.match_schema("x", {"$id": "file://` + dir + `/", "$ref": "token.json"})`,
		`json.match_schema("x", {"properties": {"a": {"$id": "file://` + secret + `", "type": "string"}}})`,
	}
	for _, expr := range cases {
		found, failed := evalPolicy(t, expr)
		if len(found) != 0 || len(failed) != 1 || !strings.Contains(failed[0], "rolloutlint policies see only the bundle") {
			t.Errorf("%s:\nfindings %q\nfailures %q", expr, found, failed)
		}
		if text := all(found) + all(failed); strings.Contains(text, "SECRET") {
			t.Errorf("%s: a finding quotes the file: %s", expr, text)
		}
	}
}

func TestSchemaBuiltinsDoNotReachTheNetwork(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type": "string"}`))
	}))
	defer srv.Close()
	for _, expr := range []string{
		`json.match_schema("x", {"$ref": "` + srv.URL + `/s.json"})`,
		`json.verify_schema({"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "` + srv.URL + `/s.json"})`,
		`json.match_schema("x", {"$id": "` + srv.URL + `/root.json", "$ref": "other.json"})`,
	} {
		found, failed := evalPolicy(t, expr)
		if len(found) != 0 || len(failed) != 1 {
			t.Errorf("%s:\nfindings %q\nfailures %q", expr, found, failed)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the schema built-ins made %d requests", n)
	}
}

// TestSchemaBuiltinsStillWork checks that the guard lets schemas that refer
// only to themselves through, with the built-in's own answers.
func TestSchemaBuiltinsStillWork(t *testing.T) {
	schema := `{"definitions": {"name": {"type": "string", "maxLength": 3}}, "type": "object", "properties": {"n": {"$ref": "#/definitions/name"}}, "$id": "https://example.com/s.json"}`
	for expr, want := range map[string]string{
		`json.match_schema({"n": "abc"}, ` + schema + `)[0]`:                "result true",
		`json.match_schema({"n": "abcd"}, ` + schema + `)[0]`:               "result false",
		`json.verify_schema(` + schema + `)[0]`:                             "result true",
		`json.match_schema({"id": "file:///etc/x"}, {"type": "object"})[0]`: "result true", // the document is data, not a schema
	} {
		found, failed := evalPolicy(t, expr)
		if len(failed) != 0 || len(found) != 1 || found[0] != want {
			t.Errorf("%s: findings %q, failures %q, want %q", expr, found, failed, want)
		}
	}
}

func hs256(t *testing.T, payload string) string {
	t.Helper()
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(payload))
	m := hmac.New(sha256.New, []byte("s3cret"))
	m.Write([]byte(head))
	return head + "." + enc.EncodeToString(m.Sum(nil))
}

func TestJWTVerificationNeedsAnExplicitTime(t *testing.T) {
	tok := hs256(t, `{"exp": 2000000000, "nbf": 1000000000}`) // valid from 2001 to 2033
	found, failed := evalPolicy(t, `io.jwt.decode_verify("`+tok+`", {"secret": "s3cret"})[0]`)
	if len(found) != 0 || len(failed) != 1 || !strings.Contains(failed[0], `the constraints set no "time"`) {
		t.Errorf("without time: findings %q, failures %q", found, failed)
	}
	for at, want := range map[string]string{"1500000000000000000": "result true", "2100000000000000000": "result false"} {
		found, failed = evalPolicy(t, `io.jwt.decode_verify("`+tok+`", {"secret": "s3cret", "time": `+at+`})[0]`)
		if len(failed) != 0 || len(found) != 1 || found[0] != want {
			t.Errorf("at %s: findings %q, failures %q, want %q", at, found, failed, want)
		}
	}
}

func TestCertificateVerificationNeedsAnExplicitTime(t *testing.T) {
	found, failed := evalPolicy(t, `crypto.x509.parse_and_verify_certificates_with_options("x", {"DNSName": "a"})`)
	if len(found) != 0 || len(failed) != 1 || !strings.Contains(failed[0], "the options set no CurrentTime") {
		t.Errorf("findings %q, failures %q", found, failed)
	}
	// With CurrentTime the built-in runs (and rejects the garbage certificate itself).
	found, failed = evalPolicy(t, `crypto.x509.parse_and_verify_certificates_with_options("x", {"CurrentTime": 1})[0]`)
	if len(failed) != 0 || len(found) != 1 || found[0] != "result false" {
		t.Errorf("with CurrentTime: findings %q, failures %q", found, failed)
	}
}

func TestClockAndRandomBuiltinsDoNotCompile(t *testing.T) {
	for name, call := range map[string]string{
		"io.jwt.encode_sign":                        `io.jwt.encode_sign({"alg": "ES256"}, {}, {})`,
		"io.jwt.encode_sign_raw":                    `io.jwt.encode_sign_raw("{}", "{}", "{}")`,
		"crypto.x509.parse_and_verify_certificates": `crypto.x509.parse_and_verify_certificates("x")`,
		"time.now_ns":                               `time.now_ns()`,
		"rand.intn":                                 `rand.intn("a", 10)`,
	} {
		dir := writePolicy(t, "p.rego", goodMeta+"package acme.p\n\nviolation contains {\"msg\": sprintf(\"%v\", [x]), \"ref\": ro.rollout} if {\n\tsome ro in input.rollouts\n\tx := "+call+"\n}\n")
		_, err := LoadDirs([]string{dir})
		if err == nil || !strings.Contains(err.Error(), name+" is not allowed in rolloutlint policies") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestTimeBuiltinsDoNotReadTheMachineZone(t *testing.T) {
	found, failed := evalPolicy(t, `time.format([0, "Local"])`)
	if len(found) != 0 || len(failed) != 1 || !strings.Contains(failed[0], `the time zone "Local"`) {
		t.Errorf("Local: findings %q, failures %q", found, failed)
	}
	found, failed = evalPolicy(t, `time.format([0, "America/New_York", "2006-01-02 15:04 MST"])`)
	if len(failed) != 0 || len(found) != 1 || found[0] != "result 1969-12-31 19:00 EST" {
		t.Errorf("a named zone: findings %q, failures %q", found, failed)
	}

	// A zone abbreviation means what it means on a machine in UTC, whatever
	// the zone of the machine running the test: the test runs itself again
	// with TZ set (assigning time.Local here would race with goroutines
	// earlier tests left running).
	if _, err := time.LoadLocation("America/Los_Angeles"); err != nil {
		t.Skip("no time zone data:", err)
	}
	if os.Getenv("ROLLOUTLINT_TEST_TZ_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTimeBuiltinsDoNotReadTheMachineZone$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TZ=America/Los_Angeles", "ROLLOUTLINT_TEST_TZ_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("with TZ=America/Los_Angeles: %v\n%s", err, out)
		}
		return
	}
	if name, _ := time.Now().Zone(); name != "PST" && name != "PDT" {
		t.Fatalf("the child runs in zone %s, want America/Los_Angeles", name)
	}
	for expr, want := range map[string]string{
		`time.parse_ns("RFC1123", "Mon, 02 Jan 2006 15:04:05 PST")`:         "result 1136214245000000000",
		`time.parse_ns("2006-01-02 15:04 MST", "2006-01-02 15:04 PST")`:     "result 1136214240000000000",
		`time.parse_ns("2006-01-02 15:04 -0700", "2006-01-02 15:04 -0800")`: "result 1136243040000000000",
		`time.parse_ns("RFC3339", "2006-01-02T15:04:05Z")`:                  "result 1136214245000000000",
		`time.parse_ns("2006-01-02", "2006-01-02")`:                         "result 1136160000000000000",
	} {
		found, failed := evalPolicy(t, expr)
		if len(failed) != 0 || len(found) != 1 || found[0] != want {
			t.Errorf("%s: findings %q, failures %q, want %q", expr, found, failed, want)
		}
	}
}

// TestSandboxCoversEveryNondeterministicBuiltin audits this OPA's built-ins:
// every one OPA marks non-deterministic is either out of the sandbox or
// guarded, so an OPA upgrade that adds one fails here until it is decided.
func TestSandboxCoversEveryNondeterministicBuiltin(t *testing.T) {
	guarded := map[string]bool{ast.JSONMatchSchema.Name: true, ast.JSONSchemaVerify.Name: true, ast.JWTDecodeVerify.Name: true}
	for _, b := range Capabilities().Builtins {
		if b.Nondeterministic && !guarded[b.Name] {
			t.Errorf("%s is non-deterministic and in the sandbox unguarded", b.Name)
		}
	}
}

func TestSandboxGuardsAreInstalled(t *testing.T) {
	for _, name := range []string{ast.JSONMatchSchema.Name, ast.JSONSchemaVerify.Name, ast.JWTDecodeVerify.Name,
		ast.CryptoX509ParseAndVerifyCertificatesWithOptions.Name, ast.Format.Name, ast.ParseNanos.Name} {
		if topdown.GetBuiltin(name) == nil {
			t.Errorf("%s has no implementation", name)
		}
	}
	// The Rego test runner goes through the same registry.
	dir := writePolicy(t, "p_test.rego", "package acme.p_test\n\ntest_local if {\n\ttime.format([0, \"Local\"])\n}\n")
	res, err := TestDirs(t.Context(), []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Passed || !strings.Contains(res[0].Failure, `the time zone "Local"`) {
		t.Errorf("policy test: %+v", res)
	}
}
