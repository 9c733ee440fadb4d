package helmrpc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The envelopes (requests and responses) cross the pipes as frames: the
// payload's length as a uvarint, then the payload, whose first byte says
// what it holds (kindRequest, kindResponse) and whose fields follow in a
// fixed order, strings as a uvarint length and their bytes, as the values
// encoding writes them. Strings go byte for byte (a chart path or a
// template's output that is not UTF-8 arrives as it left), and the codec
// is a few functions: encoding/gob, which this replaced, builds type
// tables in its package initialiser on every start of rolloutlint.
const (
	kindRequest  byte = 'Q'
	kindResponse byte = 'A'
)

// maxFrame bounds the frame a reader accepts: a chart's whole rendered
// output fits many times, and a garbled length cannot make it allocate
// gigabytes.
const maxFrame = 1 << 30

// writeFrame writes payload as one frame.
func writeFrame(w *bufio.Writer, payload []byte) error {
	var n [binary.MaxVarintLen64]byte
	if _, err := w.Write(n[:binary.PutUvarint(n[:], uint64(len(payload)))]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// readFrame reads one frame's payload: io.EOF at the end of the input
// between frames, io.ErrUnexpectedEOF inside one.
func readFrame(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		return nil, fmt.Errorf("a frame length: %w", err)
	}
	if n > maxFrame {
		return nil, fmt.Errorf("a frame of %d bytes, more than the %d accepted", n, maxFrame)
	}
	if n <= bigFrame {
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return payload, nil
	}
	// A large frame's buffer grows with what arrives: a garbled length
	// followed by little must not allocate the length.
	payload, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, err
	}
	if uint64(len(payload)) != n {
		return nil, io.ErrUnexpectedEOF
	}
	return payload, nil
}

// bigFrame is the size from which readFrame reads a frame as it arrives
// instead of allocating its length at once.
const bigFrame = 1 << 20

func (e *encoder) boolean(b bool) {
	if b {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) strs(s []string) {
	e.uvarint(uint64(len(s)))
	for _, x := range s {
		e.str(x)
	}
}

func (e *encoder) bytes(b []byte) {
	e.uvarint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

func (d *decoder) boolean() (bool, error) {
	b, err := d.fixed(1)
	if err != nil {
		return false, err
	}
	switch b[0] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, fmt.Errorf("a boolean of %d", b[0])
}

func (d *decoder) strs() ([]string, error) {
	n, err := d.count()
	if err != nil || n == 0 {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		if out[i], err = d.str(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (d *decoder) bytes() ([]byte, error) {
	n, err := d.count()
	if err != nil || n == 0 {
		return nil, err
	}
	b := make([]byte, n)
	copy(b, d.data[d.pos:d.pos+n])
	d.pos += n
	return b, nil
}

// kind checks the payload's first byte.
func (d *decoder) kind(want byte) error {
	b, err := d.fixed(1)
	if err != nil {
		return err
	}
	if b[0] != want {
		return fmt.Errorf("a frame of kind %q, want %q", b[0], want)
	}
	return nil
}

// end checks that nothing follows the last field.
func (d *decoder) end() error {
	if d.pos != len(d.data) {
		return fmt.Errorf("%d bytes after the last field", len(d.data)-d.pos)
	}
	return nil
}

func (wr *wireRequest) marshal() []byte {
	e := encoder{buf: []byte{kindRequest}}
	e.uvarint(wr.ID)
	e.buf = binary.AppendVarint(e.buf, int64(wr.Protocol))
	e.str(wr.ChartDir)
	e.boolean(wr.CheckOnly)
	e.bytes(wr.Values)
	e.str(wr.ReleaseName)
	e.str(wr.Namespace)
	e.strs(wr.APIVersions)
	e.str(wr.KubeVersion)
	return e.buf
}

// unmarshalRequest decodes what marshal wrote. A request of another
// protocol version is decoded as far as its ID and version, so that it can
// be answered with the reason.
func unmarshalRequest(payload []byte) (*wireRequest, error) {
	d := decoder{data: payload}
	wr := &wireRequest{}
	err := d.kind(kindRequest)
	if err == nil {
		wr.ID, err = d.uvarint()
	}
	var protocol int64
	if err == nil {
		protocol, err = d.varint()
		wr.Protocol = int(protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("a request, at byte %d: %w", d.pos, err)
	}
	if wr.Protocol != ProtocolVersion {
		return wr, nil
	}
	fields := []func() error{
		func() (err error) { wr.ChartDir, err = d.str(); return },
		func() (err error) { wr.CheckOnly, err = d.boolean(); return },
		func() (err error) { wr.Values, err = d.bytes(); return },
		func() (err error) { wr.ReleaseName, err = d.str(); return },
		func() (err error) { wr.Namespace, err = d.str(); return },
		func() (err error) { wr.APIVersions, err = d.strs(); return },
		func() (err error) { wr.KubeVersion, err = d.str(); return },
		d.end,
	}
	for _, f := range fields {
		if err := f(); err != nil {
			return nil, fmt.Errorf("request %d, at byte %d: %w", wr.ID, d.pos, err)
		}
	}
	return wr, nil
}

func (r *Response) marshal() []byte {
	e := encoder{buf: []byte{kindResponse}}
	e.uvarint(r.ID)
	e.str(r.ChartName)
	e.str(r.ChartKubeVersion)
	e.strs(r.Missing)
	e.str(string(r.Stage))
	e.str(r.Error)
	e.uvarint(uint64(len(r.Files)))
	for _, f := range r.Files {
		e.str(f.Name)
		e.str(f.Text)
	}
	e.str(r.KubeVersion)
	return e.buf
}

// unmarshalResponse decodes what marshal wrote.
func unmarshalResponse(payload []byte) (*Response, error) {
	d := decoder{data: payload}
	r := &Response{}
	var stage string
	fields := []func() error{
		func() error { return d.kind(kindResponse) },
		func() (err error) { r.ID, err = d.uvarint(); return },
		func() (err error) { r.ChartName, err = d.str(); return },
		func() (err error) { r.ChartKubeVersion, err = d.str(); return },
		func() (err error) { r.Missing, err = d.strs(); return },
		func() (err error) { stage, err = d.str(); r.Stage = Stage(stage); return },
		func() (err error) { r.Error, err = d.str(); return },
		func() error {
			n, err := d.count()
			if err != nil || n == 0 {
				return err
			}
			r.Files = make([]File, n)
			for i := range r.Files {
				if r.Files[i].Name, err = d.str(); err != nil {
					return err
				}
				if r.Files[i].Text, err = d.str(); err != nil {
					return err
				}
			}
			return nil
		},
		func() (err error) { r.KubeVersion, err = d.str(); return },
		d.end,
	}
	for _, f := range fields {
		if err := f(); err != nil {
			return nil, fmt.Errorf("a response, at byte %d: %w", d.pos, err)
		}
	}
	return r, nil
}
