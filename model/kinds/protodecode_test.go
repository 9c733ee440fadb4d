package kinds_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/golang/protobuf/jsonpb" //nolint:staticcheck // the reference: Istio's UnmarshalJSON uses it
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/descriptorpb"
	networkingv1 "istio.io/api/networking/v1"

	"github.com/rolloutlint/rolloutlint/model/kinds"
)

// jsonpbDecode is the reference: what the unstructured converter does with an
// Istio spec today (JSON text, then the type's UnmarshalJSON, i.e. jsonpb with
// unknown fields allowed). Messages without UnmarshalJSON use jsonpb directly.
func jsonpbDecode(m proto.Message, v map[string]any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if u, ok := m.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(data)
	}
	return legacyUnmarshal(data, m)
}

// legacyUnmarshal is jsonpb as Istio configures it, for messages that have no
// UnmarshalJSON of their own.
func legacyUnmarshal(data []byte, m proto.Message) error {
	u := jsonpb.Unmarshaler{AllowUnknownFields: true}
	return u.Unmarshal(bytes.NewReader(data), protoadapt.MessageV1Of(m))
}

// obj is shorthand for a generic object.
type obj = map[string]any

func TestDecodeProtoTable(t *testing.T) {
	vs := func() proto.Message { return &networkingv1.VirtualService{} }
	dr := func() proto.Message { return &networkingv1.DestinationRule{} }
	gw := func() proto.Message { return &networkingv1.Gateway{} }
	opt := func() proto.Message { return &descriptorpb.UninterpretedOption{} }
	route := func(r obj) obj { return obj{"hosts": []any{"a"}, "http": []any{r}} }
	httpRoute := func(m proto.Message) *networkingv1.HTTPRoute { return m.(*networkingv1.VirtualService).GetHttp()[0] }
	lb := func(m proto.Message) *networkingv1.LoadBalancerSettings {
		return m.(*networkingv1.DestinationRule).GetTrafficPolicy().GetLoadBalancer()
	}
	outlier := func(m proto.Message) *networkingv1.OutlierDetection {
		return m.(*networkingv1.DestinationRule).GetTrafficPolicy().GetOutlierDetection()
	}
	policy := func(p obj) obj { return obj{"host": "h", "trafficPolicy": p} }

	tests := []struct {
		name string
		new  func() proto.Message
		in   obj
		// fail: DecodeProto must fail; unsupported: with ErrUnsupported
		// (jsonpb may accept it), otherwise with a real error (jsonpb must fail too).
		fail, unsupported bool
		check             func(t *testing.T, m proto.Message)
	}{
		// Field names.
		{name: "json name", new: vs, in: obj{"exportTo": []any{"."}},
			check: func(t *testing.T, m proto.Message) { eq(t, m.(*networkingv1.VirtualService).GetExportTo()[0], ".") }},
		{name: "proto name", new: vs, in: obj{"export_to": []any{"x"}},
			check: func(t *testing.T, m proto.Message) { eq(t, m.(*networkingv1.VirtualService).GetExportTo()[0], "x") }},
		{name: "json name wins over proto name", new: vs, in: obj{"export_to": []any{"x"}, "exportTo": []any{"y"}},
			check: func(t *testing.T, m proto.Message) { eq(t, m.(*networkingv1.VirtualService).GetExportTo()[0], "y") }},
		{name: "null json name discards the proto name", new: vs, in: obj{"export_to": []any{"x"}, "exportTo": nil},
			check: func(t *testing.T, m proto.Message) { eq(t, len(m.(*networkingv1.VirtualService).GetExportTo()), 0) }},
		{name: "proto name of a message field", new: dr, in: policy(obj{"connection_pool": obj{"http": obj{"http1_max_pending_requests": int64(9)}}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, m.(*networkingv1.DestinationRule).GetTrafficPolicy().GetConnectionPool().GetHttp().GetHttp1MaxPendingRequests(), int32(9))
			}},
		{name: "unknown fields ignored", new: vs, in: obj{"hostz": []any{"a"}, "hosts": []any{"b"}},
			check: func(t *testing.T, m proto.Message) { eq(t, m.(*networkingv1.VirtualService).GetHosts()[0], "b") }},
		{name: "extension key declined", new: vs, in: obj{"[google.api.http]": obj{}}, fail: true, unsupported: true},

		// Lists and nulls.
		{name: "null field is unset", new: vs, in: obj{"hosts": nil, "http": nil},
			check: func(t *testing.T, m proto.Message) { eq(t, len(m.(*networkingv1.VirtualService).GetHosts()), 0) }},
		{name: "null in a string list is empty", new: vs, in: obj{"hosts": []any{"a", nil}},
			check: func(t *testing.T, m proto.Message) { eq(t, m.(*networkingv1.VirtualService).GetHosts()[1], "") }},
		{name: "null in a message list is an empty message", new: vs, in: obj{"http": []any{nil, obj{"name": "b"}}},
			check: func(t *testing.T, m proto.Message) {
				http := m.(*networkingv1.VirtualService).GetHttp()
				eq(t, len(http), 2)
				eq(t, http[1].GetName(), "b")
			}},
		{name: "list given an object", new: vs, in: obj{"hosts": obj{"a": 1}}, fail: true},
		{name: "string list given numbers", new: vs, in: obj{"hosts": []any{int64(1)}}, fail: true},
		{name: "message given a string", new: vs, in: obj{"http": []any{"route"}}, fail: true},

		// Maps.
		{name: "string map", new: vs, in: route(obj{"headers": obj{"request": obj{"set": obj{"x-a": "1", "x-b": nil}}}}),
			check: func(t *testing.T, m proto.Message) {
				set := httpRoute(m).GetHeaders().GetRequest().GetSet()
				eq(t, set["x-a"], "1")
				v, ok := set["x-b"]
				eq(t, ok, true)
				eq(t, v, "")
			}},
		{name: "message map", new: vs, in: route(obj{"match": []any{obj{"headers": obj{"x-canary": obj{"exact": "yes"}}}}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, httpRoute(m).GetMatch()[0].GetHeaders()["x-canary"].GetExact(), "yes")
			}},
		{name: "map given a list", new: vs, in: route(obj{"headers": obj{"request": obj{"set": []any{"a"}}}}), fail: true},

		// Oneofs.
		{name: "oneof member", new: vs, in: route(obj{"match": []any{obj{"uri": obj{"prefix": "/api"}}}}),
			check: func(t *testing.T, m proto.Message) { eq(t, httpRoute(m).GetMatch()[0].GetUri().GetPrefix(), "/api") }},
		{name: "two oneof members: the later-declared wins", new: vs, in: route(obj{"match": []any{obj{"uri": obj{"regex": "r", "exact": "e"}}}}),
			check: func(t *testing.T, m proto.Message) { eq(t, httpRoute(m).GetMatch()[0].GetUri().GetRegex(), "r") }},
		{name: "null oneof member does not count", new: vs, in: route(obj{"match": []any{obj{"uri": obj{"regex": nil, "exact": "e"}}}}),
			check: func(t *testing.T, m proto.Message) { eq(t, httpRoute(m).GetMatch()[0].GetUri().GetExact(), "e") }},

		// Enums.
		{name: "enum by name", new: dr, in: policy(obj{"loadBalancer": obj{"simple": "LEAST_REQUEST"}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, lb(m).GetSimple(), networkingv1.LoadBalancerSettings_LEAST_REQUEST)
			}},
		{name: "enum by number", new: dr, in: policy(obj{"loadBalancer": obj{"simple": int64(3)}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, lb(m).GetSimple(), networkingv1.LoadBalancerSettings_PASSTHROUGH)
			}},
		{name: "enum number outside the enum", new: dr, in: policy(obj{"loadBalancer": obj{"simple": int64(42)}}),
			check: func(t *testing.T, m proto.Message) { eq(t, int32(lb(m).GetSimple()), 42) }},
		{name: "enum unknown name", new: dr, in: policy(obj{"loadBalancer": obj{"simple": "FASTEST"}}), fail: true},
		{name: "enum number as string", new: dr, in: policy(obj{"loadBalancer": obj{"simple": "3"}}), fail: true},
		{name: "enum as bool", new: dr, in: policy(obj{"loadBalancer": obj{"simple": true}}), fail: true},
		{name: "enum out of int32 range", new: dr, in: policy(obj{"loadBalancer": obj{"simple": int64(1) << 40}}), fail: true},

		// Integers.
		{name: "int32", new: vs, in: route(obj{"retries": obj{"attempts": int64(3)}}),
			check: func(t *testing.T, m proto.Message) { eq(t, httpRoute(m).GetRetries().GetAttempts(), int32(3)) }},
		{name: "int32 as string", new: vs, in: route(obj{"retries": obj{"attempts": "-4"}}),
			check: func(t *testing.T, m proto.Message) { eq(t, httpRoute(m).GetRetries().GetAttempts(), int32(-4)) }},
		{name: "int32 overflow", new: vs, in: route(obj{"retries": obj{"attempts": int64(math.MaxInt32) + 1}}), fail: true},
		{name: "int32 fraction", new: vs, in: route(obj{"retries": obj{"attempts": 2.5}}), fail: true, unsupported: true},
		{name: "int32 as word", new: vs, in: route(obj{"retries": obj{"attempts": "three"}}), fail: true, unsupported: true},
		{name: "int32 as bool", new: vs, in: route(obj{"retries": obj{"attempts": true}}), fail: true},
		{name: "uint32", new: vs, in: route(obj{"route": []any{obj{"destination": obj{"host": "a", "port": obj{"number": int64(8080)}}}}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, httpRoute(m).GetRoute()[0].GetDestination().GetPort().GetNumber(), uint32(8080))
			}},
		{name: "uint32 negative", new: vs, in: route(obj{"route": []any{obj{"destination": obj{"port": obj{"number": int64(-1)}}}}}), fail: true},
		{name: "uint32 negative string", new: vs, in: route(obj{"route": []any{obj{"destination": obj{"port": obj{"number": "-1"}}}}}), fail: true},
		{name: "uint32 overflow", new: vs, in: route(obj{"route": []any{obj{"destination": obj{"port": obj{"number": int64(1) << 32}}}}}), fail: true},
		{name: "uint64", new: dr, in: policy(obj{"loadBalancer": obj{"consistentHash": obj{"maglev": obj{"tableSize": "18446744073709551615"}}}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, lb(m).GetConsistentHash().GetMaglev().GetTableSize(), uint64(math.MaxUint64))
			}},
		{name: "int64 and double", new: opt, in: obj{"negativeIntValue": "-9223372036854775808", "doubleValue": int64(7), "positive_int_value": int64(5)},
			check: func(t *testing.T, m proto.Message) {
				o := m.(*descriptorpb.UninterpretedOption)
				eq(t, o.GetNegativeIntValue(), int64(math.MinInt64))
				eq(t, o.GetDoubleValue(), 7.0)
				eq(t, o.GetPositiveIntValue(), uint64(5))
			}},
		{name: "required field missing", new: opt, in: obj{"name": []any{obj{"namePart": "a"}}}, fail: true},

		// Floats.
		{name: "double", new: vs, in: route(obj{"fault": obj{"delay": obj{"percentage": obj{"value": 0.5}, "fixedDelay": "1s"}}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, httpRoute(m).GetFault().GetDelay().GetPercentage().GetValue(), 0.5)
			}},
		{name: "double as string", new: vs, in: route(obj{"fault": obj{"abort": obj{"percentage": obj{"value": "1e-1"}}}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, httpRoute(m).GetFault().GetAbort().GetPercentage().GetValue(), 0.1)
			}},
		{name: "double Infinity", new: vs, in: route(obj{"fault": obj{"abort": obj{"percentage": obj{"value": "Infinity"}}}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, math.IsInf(httpRoute(m).GetFault().GetAbort().GetPercentage().GetValue(), 1), true)
			}},
		{name: "double as word", new: vs, in: route(obj{"fault": obj{"abort": obj{"percentage": obj{"value": "half"}}}}), fail: true, unsupported: true},
		{name: "double as list", new: vs, in: route(obj{"fault": obj{"abort": obj{"percentage": obj{"value": []any{}}}}}), fail: true},

		// Bools and bytes.
		{name: "bool", new: gw, in: obj{"servers": []any{obj{"hosts": []any{"*"}, "tls": obj{"httpsRedirect": true}}}},
			check: func(t *testing.T, m proto.Message) {
				eq(t, m.(*networkingv1.Gateway).GetServers()[0].GetTls().GetHttpsRedirect(), true)
			}},
		{name: "bool as string", new: gw, in: obj{"servers": []any{obj{"tls": obj{"httpsRedirect": "true"}}}}, fail: true},
		{name: "bool null in a list", new: gw, in: obj{"servers": []any{obj{"tls": nil}, nil}},
			check: func(t *testing.T, m proto.Message) { eq(t, len(m.(*networkingv1.Gateway).GetServers()), 2) }},
		{name: "bytes", new: vs, in: route(obj{"directResponse": obj{"status": int64(200), "body": obj{"bytes": "aGVsbG8="}}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, string(httpRoute(m).GetDirectResponse().GetBody().GetBytes()), "hello")
			}},
		{name: "bytes not base64", new: vs, in: route(obj{"directResponse": obj{"body": obj{"bytes": "h%llo"}}}), fail: true},
		{name: "string with invalid UTF-8 declined", new: vs, in: obj{"hosts": []any{"a\xff"}}, fail: true, unsupported: true},

		// Well-known types.
		{name: "duration", new: vs, in: route(obj{"timeout": "1m30.5s"}),
			check: func(t *testing.T, m proto.Message) {
				d := httpRoute(m).GetTimeout()
				eq(t, d.GetSeconds(), int64(90))
				eq(t, d.GetNanos(), int32(5e8))
			}},
		{name: "duration as number", new: vs, in: route(obj{"timeout": int64(5)}), fail: true},
		{name: "duration malformed", new: vs, in: route(obj{"timeout": "5 seconds"}), fail: true},
		{name: "bool wrapper", new: vs, in: route(obj{"corsPolicy": obj{"allowCredentials": false}}),
			check: func(t *testing.T, m proto.Message) {
				c := httpRoute(m).GetCorsPolicy().GetAllowCredentials()
				eq(t, c != nil && !c.GetValue(), true)
			}},
		{name: "bool wrapper as string", new: vs, in: route(obj{"corsPolicy": obj{"allowCredentials": "yes"}}), fail: true},
		{name: "uint32 wrapper", new: dr, in: policy(obj{"outlierDetection": obj{"consecutive5xxErrors": "7", "consecutiveGatewayErrors": int64(2)}}),
			check: func(t *testing.T, m proto.Message) {
				eq(t, outlier(m).GetConsecutive_5XxErrors().GetValue(), uint32(7))
				eq(t, outlier(m).GetConsecutiveGatewayErrors().GetValue(), uint32(2))
			}},
		{name: "uint32 wrapper as object", new: dr, in: policy(obj{"outlierDetection": obj{"consecutive5xxErrors": obj{"value": int64(7)}}}), fail: true},
		{name: "double wrapper", new: dr, in: policy(obj{"loadBalancer": obj{"warmup": obj{"duration": "10s", "minimumPercent": int64(10), "aggression": 1.5}}}),
			check: func(t *testing.T, m proto.Message) {
				w := lb(m).GetWarmup()
				eq(t, w.GetMinimumPercent().GetValue(), 10.0)
				eq(t, w.GetAggression().GetValue(), 1.5)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.new()
			err := kinds.DecodeProto(got, tc.in)
			want := tc.new()
			refErr := jsonpbDecode(want, tc.in)
			switch {
			case tc.fail && err == nil:
				t.Fatalf("DecodeProto accepted %v: %v", tc.in, got)
			case tc.fail && tc.unsupported != errors.Is(err, kinds.ErrUnsupported):
				t.Fatalf("error %v: ErrUnsupported = %v, want %v", err, errors.Is(err, kinds.ErrUnsupported), tc.unsupported)
			case tc.fail && !tc.unsupported && refErr == nil:
				t.Fatalf("DecodeProto rejected what jsonpb accepts: %v", err)
			case !tc.fail && err != nil:
				t.Fatalf("DecodeProto: %v", err)
			case !tc.fail && refErr != nil:
				t.Fatalf("jsonpb rejects the case itself: %v", refErr)
			case !tc.fail && !proto.Equal(got, want):
				t.Fatalf("DecodeProto and jsonpb differ:\n got %v\nwant %v", got, want)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}
