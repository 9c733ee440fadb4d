package kinds_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// specKinds are the kinds with a proto spec, in a fixed order for the fuzzer.
var specKinds = []*kinds.Kind{
	kinds.Lookup(kinds.GroupIstio, kinds.VirtualService),
	kinds.Lookup(kinds.GroupIstio, kinds.DestinationRule),
	kinds.Lookup(kinds.GroupIstio, kinds.Gateway),
	kinds.Lookup(kinds.GroupIstio, kinds.ServiceEntry),
	kinds.Lookup(kinds.GroupIstio, kinds.Sidecar),
}

// generic turns JSON text into the loader's generic values: integers (and
// integral floats below 2^53) as int64, other numbers as float64.
func generic(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var conv func(any) any
	conv = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				t[k] = conv(x)
			}
		case []any:
			for i, x := range t {
				t[i] = conv(x)
			}
		case json.Number:
			if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
				return i
			}
			f, err := strconv.ParseFloat(string(t), 64)
			if err != nil || math.IsInf(f, 0) {
				return string(t)
			}
			if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return int64(f)
			}
			return f
		}
		return v
	}
	return conv(v), nil
}

// FuzzDecodeProto feeds arbitrary JSON-shaped specs to DecodeProto: it must
// never panic, never accept what jsonpb rejects, and whatever it accepts must
// equal jsonpb's result. Errors other than ErrUnsupported must be real (jsonpb
// rejects the input too).
func FuzzDecodeProto(f *testing.F) {
	seeds := []struct {
		kind int
		spec string
	}{
		{0, `{"hosts":["reviews"],"gateways":["mesh"],"http":[{"name":"primary","match":[{"uri":{"prefix":"/api"},"headers":{"x-canary":{"exact":"yes"}}}],"route":[{"destination":{"host":"reviews-stable","subset":"stable","port":{"number":8080}},"weight":90},{"destination":{"host":"reviews-canary"},"weight":10}],"retries":{"attempts":"3","perTryTimeout":"2s"},"timeout":"10s","mirrorPercentage":{"value":12.5}}]}`},
		{0, `{"hosts":["a",null],"http":[null,{"fault":{"abort":{"httpStatus":503,"percentage":{"value":"Infinity"}}},"corsPolicy":{"allowCredentials":true},"directResponse":{"status":200,"body":{"bytes":"aGk="}}}],"tls":[{"match":[{"sniHosts":["a"],"port":443}],"route":[{"destination":{"host":"a"}}]}],"tcp":[{"route":[{"destination":{"host":"b"},"weight":1.5}]}],"export_to":["."],"exportTo":[]}`},
		{1, `{"host":"reviews","subsets":[{"name":"stable","labels":{"version":"v1"}},{"name":"canary","labels":{"version":"v2"},"trafficPolicy":{"loadBalancer":{"simple":"LEAST_REQUEST"}}}],"trafficPolicy":{"connectionPool":{"http":{"http1MaxPendingRequests":1024,"maxRequestsPerConnection":"1"},"tcp":{"connectTimeout":"30ms"}},"outlierDetection":{"consecutive5xxErrors":"7","interval":"5m","baseEjectionTime":"15m"},"tls":{"mode":2}}}`},
		{1, `{"host":"r","trafficPolicy":{"loadBalancer":{"consistentHash":{"httpCookie":{"name":"c","ttl":"0s"},"minimumRingSize":"18446744073709551615","maglev":{"tableSize":65537}},"warmup":{"duration":"1s","aggression":2,"minimumPercent":"NaN"}}}}`},
		{2, `{"selector":{"istio":"ingressgateway"},"servers":[{"port":{"number":443,"name":"https","protocol":"HTTPS"},"hosts":["*"],"tls":{"mode":"SIMPLE","credentialName":"cert","httpsRedirect":false}}]}`},
		{3, `{"hosts":["api.example.com"],"location":"MESH_EXTERNAL","resolution":"DNS","ports":[{"number":443,"name":"tls","protocol":"TLS"}],"endpoints":[{"address":"1.2.3.4","ports":{"tls":8443},"weight":2}]}`},
		{4, `{"workloadSelector":{"labels":{"app":"x"}},"egress":[{"hosts":["./*"],"port":{"number":80}}],"outboundTrafficPolicy":{"mode":"REGISTRY_ONLY"}}`},
		{0, `{"http":[{"retries":{"attempts":2.5}}]}`},
		{0, `{"http":[{"match":[{"uri":{"exact":"e","regex":"r"}}],"timeout":5}]}`},
	}
	for _, s := range seeds {
		f.Add(uint8(s.kind), []byte(s.spec))
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		v, err := generic(data)
		if err != nil {
			return
		}
		spec, ok := v.(map[string]any)
		if !ok {
			return
		}
		k := specKinds[int(kind)%len(specKinds)]
		got := k.Spec(k.New())
		err = kinds.DecodeProto(got, spec)
		want := k.Spec(k.New())
		refErr := jsonpbDecode(want, spec)
		switch {
		case err == nil && refErr != nil:
			t.Fatalf("DecodeProto accepted what jsonpb rejects (%v): %s", refErr, data)
		case err == nil && !proto.Equal(got, want):
			t.Fatalf("DecodeProto and jsonpb differ on %s:\n got %v\nwant %v", data, got, want)
		case err != nil && refErr == nil && !errors.Is(err, kinds.ErrUnsupported):
			t.Fatalf("DecodeProto calls %s malformed (%v) but jsonpb accepts it", data, err)
		}
	})
}
