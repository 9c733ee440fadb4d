package clusterview

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// apiServer is a loopback server answering discovery as kube-apiserver does:
// the group versions it serves, a Status for the ones it does not (or a
// plain-text 404 when plain is set), and what each request carried.
type apiServer struct {
	*httptest.Server
	mu     sync.Mutex
	served map[string]*metav1.APIResourceList // path → list
	status map[string]int                     // path → an error status to answer
	plain  bool
	delay  time.Duration
	seen   []*http.Request
}

func newAPIServer(t *testing.T) *apiServer {
	t.Helper()
	s := &apiServer{served: map[string]*metav1.APIResourceList{}, status: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Clone(r.Context()))
	list, code, plain, delay := s.served[r.URL.Path], s.status[r.URL.Path], s.plain, s.delay
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if list != nil && code == 0 {
		w.Header().Set("Content-Type", "application/json")
		out := *list
		out.Kind, out.APIVersion = "APIResourceList", "v1"
		_ = json.NewEncoder(w).Encode(&out)
		return
	}
	if code == 0 {
		code = http.StatusNotFound
	}
	if plain {
		http.Error(w, "404 page not found", code)
		return
	}
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code),
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
	}
	if code == http.StatusForbidden {
		st.Reason, st.Message = metav1.StatusReasonForbidden, `forbidden: User "nobody" cannot get path "`+r.URL.Path+`"`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(&st)
}

// change alters what the server answers, under its lock.
func (s *apiServer) change(f func(*apiServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *apiServer) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.seen...)
}

// TestRESTDiscovery asks a loopback API server for group versions: a
// served one decodes into its resources, the core group is asked at
// /api/v1, one not served is NotFound (as the resolver needs, from a
// Status or a bare 404), another error keeps its reason and message, and
// the credentials and user agent of the rest.Config go with every request.
func TestRESTDiscovery(t *testing.T) {
	srv := newAPIServer(t)
	srv.change(func(s *apiServer) {
		s.served["/apis/argoproj.io/v1alpha1"] = &metav1.APIResourceList{GroupVersion: "argoproj.io/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "rollouts", Kind: KindRollout, Namespaced: true, Verbs: metav1.Verbs{"get", "list", "watch"}},
			{Name: "rollouts/status", Kind: KindRollout, Namespaced: true},
			{Name: "clusteranalysistemplates", Kind: KindClusterAnalysisTemplate},
		}}
		s.served["/api/v1"] = &metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "services", Kind: KindService, Namespaced: true},
		}}
		s.status["/apis/networking.istio.io/v1beta1"] = http.StatusForbidden
	})
	rc := &rest.Config{Host: srv.URL, BearerToken: "s3cret", UserAgent: "rolloutlint/test"}
	d, err := NewDiscovery(rc)
	if err != nil {
		t.Fatal(err)
	}

	l, err := d.ServerResourcesForGroupVersion("argoproj.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range l.APIResources {
		names = append(names, r.Name)
	}
	if want := []string{"rollouts", "rollouts/status", "clusteranalysistemplates"}; !reflect.DeepEqual(names, want) {
		t.Errorf("resources %q, want %q", names, want)
	}
	if l.GroupVersion != "argoproj.io/v1alpha1" || !l.APIResources[0].Namespaced || l.APIResources[2].Namespaced ||
		!reflect.DeepEqual(l.APIResources[0].Verbs, metav1.Verbs{"get", "list", "watch"}) {
		t.Errorf("list not decoded whole: %+v", l)
	}
	if l, err := d.ServerResourcesForGroupVersion("v1"); err != nil || len(l.APIResources) != 1 || l.APIResources[0].Name != "services" {
		t.Errorf("core group: %+v, %v", l, err)
	}

	_, err = d.ServerResourcesForGroupVersion("networking.istio.io/v1")
	if !apierrors.IsNotFound(err) {
		t.Errorf("a group version not served: %v, want NotFound", err)
	}
	_, err = d.ServerResourcesForGroupVersion("networking.istio.io/v1beta1")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot get path "/apis/networking.istio.io/v1beta1"`) {
		t.Errorf("a forbidden group version: %v, want the server's Forbidden", err)
	}
	srv.change(func(s *apiServer) { s.plain = true })
	if _, err = d.ServerResourcesForGroupVersion("networking.istio.io/v1alpha3"); !apierrors.IsNotFound(err) {
		t.Errorf("a plain-text 404: %v, want NotFound", err)
	}
	if l, err := d.ServerResourcesForGroupVersion("v1"); err != nil || len(l.APIResources) != 1 {
		t.Errorf("core group after the switch to plain 404s: %+v, %v", l, err)
	}
	srv.change(func(s *apiServer) { delete(s.served, "/api/v1") })
	if l, err := d.ServerResourcesForGroupVersion("v1"); err != nil || l.GroupVersion != "v1" || len(l.APIResources) != 0 {
		t.Errorf("core group not found: %+v, %v; want an empty list, as client-go's discovery has it", l, err)
	}
	if _, err := d.ServerResourcesForGroupVersion(""); err == nil {
		t.Error("an empty group version was asked for")
	}

	var paths []string
	for _, r := range srv.requests() {
		paths = append(paths, r.Method+" "+r.URL.Path)
		if got := r.Header.Get("Authorization"); got != "Bearer s3cret" {
			t.Errorf("%s %s: Authorization %q", r.Method, r.URL.Path, got)
		}
		if got := r.Header.Get("User-Agent"); got != "rolloutlint/test" {
			t.Errorf("%s %s: User-Agent %q", r.Method, r.URL.Path, got)
		}
		if got := r.Header.Get("Accept"); !strings.Contains(got, "application/json") {
			t.Errorf("%s %s: Accept %q", r.Method, r.URL.Path, got)
		}
	}
	want := []string{"GET /apis/argoproj.io/v1alpha1", "GET /api/v1", "GET /apis/networking.istio.io/v1",
		"GET /apis/networking.istio.io/v1beta1", "GET /apis/networking.istio.io/v1alpha3", "GET /api/v1", "GET /api/v1"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("requests:\n got %q\nwant %q", paths, want)
	}
	if rc.Timeout != 0 || rc.Burst != 0 || rc.NegotiatedSerializer != nil {
		t.Errorf("NewDiscovery changed the caller's config: %+v", rc)
	}
}

// TestRESTDiscoveryTimeout: a server that does not answer in the config's
// timeout is an error, not a hang, as with client-go's discovery client
// (the rest.Config's Timeout bounds each request).
func TestRESTDiscoveryTimeout(t *testing.T) {
	srv := newAPIServer(t)
	srv.change(func(s *apiServer) { s.delay = 5 * time.Second })
	d, err := NewDiscovery(&rest.Config{Host: srv.URL, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = d.ServerResourcesForGroupVersion("argoproj.io/v1alpha1")
	if err == nil || apierrors.IsNotFound(err) {
		t.Fatalf("a server that does not answer: %v, want a timeout error", err)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("the request took %v; the timeout is 100ms", took)
	}
}

// TestRESTDiscoveryDrivesTheResolver: the resolver the view and List use
// picks the preferred version the API server serves, and reads a version
// it does not serve as absent rather than as an error.
func TestRESTDiscoveryDrivesTheResolver(t *testing.T) {
	srv := newAPIServer(t)
	srv.change(func(s *apiServer) {
		s.served["/apis/networking.istio.io/v1beta1"] = &metav1.APIResourceList{GroupVersion: "networking.istio.io/v1beta1",
			APIResources: []metav1.APIResource{{Name: "virtualservices", Kind: KindVirtualService, Namespaced: true}}}
	})
	d, err := NewDiscovery(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r := newResolver(d)
	var vs, dr watchedResource
	for _, w := range watchedResources {
		switch w.kind {
		case KindVirtualService:
			vs = w
		case KindDestinationRule:
			dr = w
		}
	}
	gvr, err := r.resolve(vs)
	if want := (schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1beta1", Resource: "virtualservices"}); err != nil || gvr != want {
		t.Errorf("VirtualService resolved to %v, %v; want %v", gvr, err, want)
	}
	if gvr, err := r.resolve(dr); err != nil || gvr.Resource != "" {
		t.Errorf("DestinationRule (not served) resolved to %v, %v; want nothing and no error", gvr, err)
	}
}

// TestRESTDiscoveryMatchesClientGo asks the same loopback server the same
// group versions through client-go's discovery client, which the commands
// used before, and through RESTDiscovery: the lists and the errors (their
// text, and NotFound or Forbidden) are the same.
func TestRESTDiscoveryMatchesClientGo(t *testing.T) {
	for _, plain := range []bool{false, true} {
		srv := newAPIServer(t)
		srv.change(func(s *apiServer) {
			s.plain = plain
			s.served["/apis/argoproj.io/v1alpha1"] = &metav1.APIResourceList{GroupVersion: "argoproj.io/v1alpha1", APIResources: []metav1.APIResource{
				{Name: "rollouts", SingularName: "rollout", Kind: KindRollout, Namespaced: true, ShortNames: []string{"ro"}, Verbs: metav1.Verbs{"list"}},
			}}
			s.served["/api/v1"] = &metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "services", Kind: KindService, Namespaced: true}}}
			s.status["/apis/apps/v1"] = http.StatusForbidden
		})
		rc := &rest.Config{Host: srv.URL, Timeout: 5 * time.Second}
		ours, err := NewDiscovery(rc)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := discovery.NewDiscoveryClientForConfig(rc)
		if err != nil {
			t.Fatal(err)
		}
		for _, gv := range []string{"argoproj.io/v1alpha1", "v1", "networking.istio.io/v1", "apps/v1"} {
			l1, err1 := ours.ServerResourcesForGroupVersion(gv)
			l2, err2 := theirs.ServerResourcesForGroupVersion(gv)
			if !reflect.DeepEqual(l1, l2) {
				t.Errorf("plain 404s %v, %s: list\n got %#v\nwant %#v", plain, gv, l1, l2)
			}
			if fmt.Sprint(err1) != fmt.Sprint(err2) || apierrors.IsNotFound(err1) != apierrors.IsNotFound(err2) ||
				apierrors.IsForbidden(err1) != apierrors.IsForbidden(err2) {
				t.Errorf("plain 404s %v, %s: error\n got %v\nwant %v", plain, gv, err1, err2)
			}
		}
	}
}

// TestNewDiscoveryBadConfig: a config rest cannot make a client of is an
// error, with rest's reason, as it was with client-go's discovery client.
func TestNewDiscoveryBadConfig(t *testing.T) {
	rc := &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{CAFile: "/nonexistent/ca.crt"}}
	_, err := NewDiscovery(rc)
	_, theirs := discovery.NewDiscoveryClientForConfig(rc)
	if err == nil || theirs == nil || err.Error() != theirs.Error() {
		t.Fatalf("error %v, want client-go's %v", err, theirs)
	}
}
