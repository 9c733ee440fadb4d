package helmrpc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"runtime"
	"testing"
)

// frames writes payloads as frames into one stream.
func frames(t testing.TB, payloads ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	for _, p := range payloads {
		if err := writeFrame(w, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestEnvelopesRoundTrip: every field arrives as it left, strings byte for
// byte even when they are not UTF-8 (JSON would have replaced the bytes).
func TestEnvelopesRoundTrip(t *testing.T) {
	notUTF8 := "charts/\xff\xfe/x"
	vals, err := EncodeValues(map[string]any{"replicas": 3, "list": []any(nil)})
	if err != nil {
		t.Fatal(err)
	}
	req := &wireRequest{ID: 1 << 40, Protocol: ProtocolVersion, ChartDir: notUTF8, CheckOnly: true, Values: vals,
		ReleaseName: "r", Namespace: "ns", APIVersions: []string{"argoproj.io/v1alpha1", ""}, KubeVersion: "v1.31.0"}
	resp := &Response{ID: 7, ChartName: "c", ChartKubeVersion: ">=1.20", Missing: []string{"dep"}, Stage: StageRender,
		Error: "line 3: \x00bad", Files: []File{{Name: "c/templates/a.yaml", Text: "kind: A\n\xc3"}, {Name: "c/templates/b.yaml"}},
		KubeVersion: "v1.20.0"}
	br := bufio.NewReader(bytes.NewReader(frames(t, req.marshal(), resp.marshal())))
	p1, err := readFrame(br)
	if err != nil {
		t.Fatal(err)
	}
	gotReq, err := unmarshalRequest(p1)
	if err != nil || !reflect.DeepEqual(gotReq, req) {
		t.Errorf("request: %+v, %v\nwant %+v", gotReq, err, req)
	}
	p2, err := readFrame(br)
	if err != nil {
		t.Fatal(err)
	}
	gotResp, err := unmarshalResponse(p2)
	if err != nil || !reflect.DeepEqual(gotResp, resp) {
		t.Errorf("response: %+v, %v\nwant %+v", gotResp, err, resp)
	}
	if _, err := readFrame(br); !errors.Is(err, io.EOF) {
		t.Errorf("after the last frame: %v, want io.EOF", err)
	}
}

// TestEnvelopesRefuseDamage: a stream cut anywhere ends with
// io.ErrUnexpectedEOF (or io.EOF between frames), a payload cut or with
// bytes added is an error, a request as a response (and garbage) is
// refused by its kind — never a panic, never a half-filled envelope taken
// as whole.
func TestEnvelopesRefuseDamage(t *testing.T) {
	resp := (&Response{ID: 9, Files: []File{{Name: "a", Text: "kind: A"}}, KubeVersion: "v1.20.0"}).marshal()
	stream := frames(t, resp)
	for cut := range len(stream) {
		_, err := readFrame(bufio.NewReader(bytes.NewReader(stream[:cut])))
		if want := io.ErrUnexpectedEOF; cut == 0 && !errors.Is(err, io.EOF) || cut > 0 && !errors.Is(err, want) {
			t.Errorf("stream cut at %d of %d: %v", cut, len(stream), err)
		}
	}
	for cut := range len(resp) {
		if r, err := unmarshalResponse(resp[:cut]); err == nil {
			t.Errorf("response cut at %d of %d decoded: %+v", cut, len(resp), r)
		}
	}
	if _, err := unmarshalResponse(append(resp[:len(resp):len(resp)], 0)); err == nil {
		t.Error("a response with a byte after its last field decoded")
	}
	req := (&wireRequest{ID: 9, Protocol: ProtocolVersion, ChartDir: "x"}).marshal()
	if _, err := unmarshalResponse(req); err == nil {
		t.Error("a request decoded as a response")
	}
	if _, err := unmarshalRequest([]byte("garbage")); err == nil {
		t.Error("garbage decoded as a request")
	}
	for cut := range len(req) {
		if r, err := unmarshalRequest(req[:cut]); err == nil {
			t.Errorf("request cut at %d of %d decoded: %+v", cut, len(req), r)
		}
	}
	if _, err := readFrame(bufio.NewReader(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0x7f}))); err == nil {
		t.Error("a frame length past maxFrame was accepted")
	}
	// A large frame arrives whole, or is cut.
	big := bytes.Repeat([]byte("y"), bigFrame+10)
	stream = frames(t, big)
	if got, err := readFrame(bufio.NewReader(bytes.NewReader(stream))); err != nil || !bytes.Equal(got, big) {
		t.Errorf("a frame of %d bytes: %d bytes, %v", len(big), len(got), err)
	}
	if _, err := readFrame(bufio.NewReader(bytes.NewReader(stream[:len(stream)-1]))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a large frame cut short: %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestGarbledLengthAllocatesLittle: a frame that claims 512 MiB and holds
// ten bytes fails without allocating the claim.
func TestGarbledLengthAllocatesLittle(t *testing.T) {
	claim := binary.AppendUvarint(nil, 512<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readFrame(bufio.NewReader(bytes.NewReader(append(claim, "ten bytes!"...))))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a frame cut after 10 of 512 MiB: %v, want io.ErrUnexpectedEOF", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("reading it allocated %d bytes", got)
	}
}

// TestRequestOfAnotherProtocol: a request of another version is read as
// far as its ID and version, so that the companion answers it with the
// reason instead of failing the stream.
func TestRequestOfAnotherProtocol(t *testing.T) {
	old := []byte{kindRequest, 5, 2 * 7} // ID 5, protocol 7 (zig-zag), then fields of its own
	old = append(old, "whatever protocol 7 sends"...)
	wr, err := unmarshalRequest(old)
	if err != nil || wr.ID != 5 || wr.Protocol != 7 {
		t.Fatalf("request of protocol 7: %+v, %v", wr, err)
	}
	if resp := handleWire(wr, func(*Request) *Response { t.Fatal("rendered"); return nil }); resp.Stage != StageRequest || resp.ID != 5 {
		t.Errorf("answer %+v, want StageRequest for request 5", resp)
	}
}

// FuzzEnvelopes: any bytes as a stream of frames, each decoded as a
// request and as a response, give envelopes or errors, never a panic; an
// envelope decoded re-encodes to one that decodes equal.
func FuzzEnvelopes(f *testing.F) {
	f.Add(frames(f, (&wireRequest{ID: 1, Protocol: ProtocolVersion, ChartDir: "c", APIVersions: []string{"v1"}}).marshal()))
	f.Add(frames(f, (&Response{ID: 1, Missing: []string{"d"}, Files: []File{{Name: "n", Text: "t"}}}).marshal()))
	f.Add([]byte("\x07garbage"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		br := bufio.NewReader(bytes.NewReader(stream))
		for {
			payload, err := readFrame(br)
			if err != nil {
				return
			}
			if wr, err := unmarshalRequest(payload); err == nil && wr.Protocol == ProtocolVersion {
				again, err := unmarshalRequest(wr.marshal())
				if err != nil || !reflect.DeepEqual(again, wr) {
					t.Fatalf("request %+v re-encoded decodes as %+v, %v", wr, again, err)
				}
			}
			if r, err := unmarshalResponse(payload); err == nil {
				again, err := unmarshalResponse(r.marshal())
				if err != nil || !reflect.DeepEqual(again, r) {
					t.Fatalf("response %+v re-encoded decodes as %+v, %v", r, again, err)
				}
			}
		}
	})
}
