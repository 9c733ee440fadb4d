package webhook_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/rolloutlint/rolloutlint/rules"
	"github.com/rolloutlint/rolloutlint/rules/all"
	"github.com/rolloutlint/rolloutlint/webhook"
)

// FuzzAdmissionReview posts arbitrary bytes to /validate, as a misbehaving
// or hostile client of the API server's port could. It uses only the
// handler's exported surface (NewHandler, ServeHTTP), so it holds while the
// handler's internals change. The handler must not panic; it answers 200
// with an AdmissionReview that carries a response for the request's uid, or
// an HTTP error status for a body it cannot read.
func FuzzAdmissionReview(f *testing.F) {
	rollout := `{"apiVersion":"argoproj.io/v1alpha1","kind":"Rollout","metadata":{"name":"r","namespace":"shop"},"spec":{"strategy":{"canary":{"steps":[{"setWeight":120}]}}}}`
	for _, s := range []string{
		"",
		"{}",
		"null",
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","kind":{"group":"argoproj.io","version":"v1alpha1","kind":"Rollout"},"operation":"CREATE","namespace":"shop","name":"r","object":` + rollout + `}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u2","operation":"DELETE","oldObject":` + rollout + `}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u3","operation":"CREATE","object":{"kind":"Rollout","metadata":{"name":"\u200b"}}}}`,
		`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u4","object":"not an object"}}`,
		`{"request":{"uid":"u5","object":{"apiVersion":"networking.istio.io/v1","kind":"VirtualService","metadata":{"name":"v"},"spec":{"http":[{"route":[{"weight":"50"}]}]}}}}`,
		"\xff\xfe{\x00}\x00",
	} {
		f.Add([]byte(s))
	}
	h := webhook.NewHandler(webhook.Options{Linter: &webhook.Linter{Rules: all.Rules(), Globals: rules.Globals{IstioVersion: "1.28"}}})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, webhook.ValidatePath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			if rec.Code < 400 {
				t.Fatalf("status %d for an unreadable review", rec.Code)
			}
			return
		}
		var out admissionv1.AdmissionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
			t.Fatalf("status 200 without an AdmissionReview response (%v): %q", err, rec.Body.String())
		}
		var in admissionv1.AdmissionReview
		if json.Unmarshal(body, &in) == nil && in.Request != nil && out.Response.UID != in.Request.UID {
			t.Fatalf("response uid %q for request uid %q", out.Response.UID, in.Request.UID)
		}
	})
}
