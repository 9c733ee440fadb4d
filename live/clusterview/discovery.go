package clusterview

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// Defaults a discovery client takes when the rest.Config leaves them unset,
// the same as client-go's discovery client.
const (
	discoveryTimeout = 32 * time.Second
	discoveryBurst   = 300
)

// RESTDiscovery is a Discovery that asks the API server over REST: GET
// /api/v1 for the core group, /apis/GROUP/VERSION for the others. It does
// what client-go's discovery client does for the one call the view makes,
// without linking client-go/discovery, which links the scheme of every
// built-in type and, through it, every typed client (a few milliseconds of
// package initialisation in each run of the binary).
type RESTDiscovery struct {
	client rest.Interface
}

// NewDiscovery returns a discovery client for the API server of rc: the same
// host, credentials and TLS, with client-go's discovery defaults where rc
// leaves them unset (a 32 s timeout per request, a burst of 300, the default
// user agent). rc itself is not changed. The error is rest's (a host that
// is not a URL, unreadable certificates), for the caller to put in context.
func NewDiscovery(rc *rest.Config) (*RESTDiscovery, error) {
	c := rest.CopyConfig(rc)
	c.APIPath = ""
	c.GroupVersion = nil
	if c.Timeout == 0 {
		c.Timeout = discoveryTimeout
	}
	if c.Burst == 0 {
		c.Burst = discoveryBurst
	}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	c.NegotiatedSerializer = discoveryCodecs()
	client, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, err // as client-go's has it: the callers say "discovery client: …"
	}
	return &RESTDiscovery{client: client}, nil
}

// discoveryCodecs decode the two kinds a discovery answer can hold, an
// APIResourceList and (for an error) a Status, both unversioned meta types,
// the way client-go's discovery client decodes them (a universal decoder,
// behind an encoder that encodes nothing: discovery only reads). The
// scheme is built per client, not at package init, so that a run that
// never reads a cluster does not pay for it.
func discoveryCodecs() runtime.NegotiatedSerializer {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	codec := runtime.NoopEncoder{Decoder: serializer.NewCodecFactory(s).UniversalDecoder()}
	return serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{Serializer: codec})
}

// ServerResourcesForGroupVersion returns the resources the API server
// serves in a group version ("v1" for the core group, else "GROUP/VERSION").
// A group version the server does not serve is an error for which
// apierrors.IsNotFound holds — except the core "v1", which reads as an empty
// list, as client-go's discovery client has it.
// Each request is bounded by the client's timeout (discovery takes no
// context).
func (d *RESTDiscovery) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	if groupVersion == "" {
		return nil, fmt.Errorf("discovery: empty group version")
	}
	path := "/apis/" + groupVersion
	if groupVersion == "v1" {
		path = "/api/v1"
	}
	list := &metav1.APIResourceList{GroupVersion: groupVersion}
	if err := d.client.Get().AbsPath(path).Do(context.Background()).Into(list); err != nil {
		if groupVersion == "v1" && apierrors.IsNotFound(err) {
			return list, nil
		}
		return nil, err
	}
	return list, nil
}
