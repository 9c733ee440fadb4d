package clusterview

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// listFixture is a fake cluster serving Rollouts, Services,
// VirtualServices, ClusterAnalysisTemplates and Applications (no
// DestinationRule CRD), with objects in two namespaces.
func listFixture(t *testing.T) (*fakeDiscovery, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	for _, w := range watchedResources {
		for _, ver := range w.versions {
			listKinds[schema.GroupVersionResource{Group: w.group, Version: ver, Resource: w.resource}] = w.kind + "List"
		}
	}
	objs := []runtime.Object{
		mustObj(t, rolloutA), mustObj(t, svc("a-stable")), mustObj(t, vsObj),
		mustObj(t, strings.Replace(svc("x"), "namespace: shop", "namespace: elsewhere", 1)),
		mustObj(t, "apiVersion: argoproj.io/v1alpha1\nkind: ClusterAnalysisTemplate\nmetadata: {name: global}\nspec: {metrics: []}\n"),
		mustObj(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop-app, namespace: argocd}\nspec: {}\n"),
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
	disc := &fakeDiscovery{served: map[string][]metav1.APIResource{}}
	disc.serve("argoproj.io/v1alpha1", "rollouts", KindRollout)
	disc.serve("argoproj.io/v1alpha1", "clusteranalysistemplates", KindClusterAnalysisTemplate)
	disc.serve("argoproj.io/v1alpha1", "applications", KindApplication)
	disc.serve("v1", "services", KindService)
	disc.serve("networking.istio.io/v1", "virtualservices", KindVirtualService)
	return disc, client
}

// TestListScopes lists one namespace: its objects, the cluster-scoped ones
// and the Applications of every namespace; the DestinationRule CRD is not
// installed, which is not a problem.
func TestListScopes(t *testing.T) {
	disc, client := listFixture(t)
	v := New()
	var calls []ListProgress
	res, err := v.List(context.Background(), disc, client, ListOptions{
		Scopes:   []Scope{{Kinds: WebhookKinds(), Namespaces: []string{"shop"}}},
		Progress: func(p ListProgress) { calls = append(calls, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Key{
		{KindApplication, "argocd", "shop-app"}, {KindClusterAnalysisTemplate, "", "global"},
		{KindRollout, "shop", "a"}, {KindService, "shop", "a-stable"}, {KindVirtualService, "shop", "vs"},
	}
	if got := keysOf(v.Objects()); !reflect.DeepEqual(got, want) {
		t.Fatalf("listed\n got %v\nwant %v", got, want)
	}
	if res.Objects != 5 || res.Bytes <= 0 || res.Partial() {
		t.Errorf("result: %+v", res)
	}
	if !reflect.DeepEqual(res.NotServed, []string{KindDestinationRule, KindAnalysisTemplate}) {
		t.Errorf("not served: %v", res.NotServed)
	}
	last := calls[len(calls)-1]
	if last.Done != last.Total || last.Total != 5 || last.Objects != 5 {
		t.Errorf("last progress %+v, want 5 of 5 lists and 5 objects", last)
	}
	// Every namespace: the Service of "elsewhere" too.
	all := New()
	if _, err := all.List(context.Background(), disc, client, ListOptions{Scopes: []Scope{{Kinds: []string{KindService}, Namespaces: []string{"*"}}}}); err != nil {
		t.Fatal(err)
	}
	if all.Len() != 2 {
		t.Errorf("services in every namespace: %v", keysOf(all.Objects()))
	}
	if _, err := New().List(context.Background(), disc, client, ListOptions{Scopes: []Scope{{Kinds: []string{"Pod"}}}}); err == nil {
		t.Error("a kind the view cannot read was accepted")
	}
}

// TestListProblems: a forbidden kind is reported and the others are read;
// the object bound stops every list; an ended context is a time-out.
func TestListProblems(t *testing.T) {
	disc, client := listFixture(t)
	client.PrependReactor("list", "virtualservices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "networking.istio.io", Resource: "virtualservices"}, "",
			errors.New(`User "ci" cannot list resource "virtualservices"`))
	})
	v := New()
	scopes := []Scope{{Kinds: []string{KindRollout, KindService, KindVirtualService}, Namespaces: []string{"shop"}}}
	res, err := v.List(context.Background(), disc, client, ListOptions{Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Partial() || len(res.Problems) != 1 || res.Problems[0].Reason != ReasonForbidden || v.Len() != 2 {
		t.Fatalf("forbidden VirtualServices: problems %+v, %d objects", res.Problems, v.Len())
	}
	msg := res.Problems[0].String()
	for _, want := range []string{"VirtualService in namespace shop", "forbidden", "virtualservices.networking.istio.io"} {
		if !strings.Contains(msg, want) {
			t.Errorf("problem %q lacks %q", msg, want)
		}
	}

	bounded := New()
	res, err = bounded.List(context.Background(), disc, client, ListOptions{Scopes: scopes, MaxObjects: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if bounded.Len() != 1 || res.Objects != 1 {
		t.Errorf("MaxObjects 1 kept %d objects", bounded.Len())
	}
	limited := 0
	for _, p := range res.Problems {
		if p.Reason == ReasonLimit {
			limited++
		}
	}
	if limited != 2 || res.Problems[0].Kind != KindService { // the Rollout list finished; the Service list stopped, the VirtualService one never ran
		t.Errorf("problems after the bound: %+v", res.Problems)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = New().List(ctx, disc, client, ListOptions{Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Problems {
		if p.Reason != ReasonTimeout && p.Reason != ReasonForbidden {
			t.Errorf("ended context: %+v", p)
		}
	}
	if len(res.Problems) != 3 {
		t.Errorf("ended context: %d problems, want one per list", len(res.Problems))
	}
}

// TestAdmitNeverPassesTheObjectBound takes places from many goroutines at
// once, as parallel lists do: exactly MaxObjects are admitted.
func TestAdmitNeverPassesTheObjectBound(t *testing.T) {
	const bound, takers = 2, 64
	l := &lister{opts: ListOptions{MaxObjects: bound}, res: &ListResult{}}
	admitted := make(chan bool, takers)
	start := make(chan struct{})
	for range takers {
		go func() {
			<-start
			admitted <- l.admit()
		}()
	}
	close(start)
	n := 0
	for range takers {
		if <-admitted {
			n++
		}
	}
	if n != bound || l.res.Objects != bound || !l.full {
		t.Errorf("admitted %d, counted %d, full %v; want %d, %d, true", n, l.res.Objects, l.full, bound, bound)
	}
}
