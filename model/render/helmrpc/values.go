package helmrpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"time"
)

// The values a chart is rendered with cross the process boundary in this
// encoding, not JSON and not plain gob: a template prints a YAML int (Go
// int), a --set number (strvals' int64) and a float differently
// (`{{ typeOf .Values.x }}`, `kindIs`, `%v` of 1e6 versus 1000000), and
// toYaml tells a nil list from an empty one. JSON turns every number into
// float64, and gob sends an empty and a nil slice alike. Each value is a
// tag byte naming its exact Go type, then its payload, so decoding gives
// back the same types, the same nil-ness and the same float bits.
//
// The types are the ones go.yaml.in/yaml/v3 (values files, inline values,
// an Application's valuesObject) and strvals (--set, parameters) produce
// when decoding into an `any`; any other type is refused with its path.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagString
	tagInt
	tagInt8
	tagInt16
	tagInt32
	tagInt64
	tagUint
	tagUint8
	tagUint16
	tagUint32
	tagUint64
	tagFloat32
	tagFloat64
	tagStringMap    // map[string]any
	tagNilStringMap // map[string]any(nil)
	tagAnyMap       // map[any]any (YAML mappings with keys that are not all strings)
	tagNilAnyMap    // map[any]any(nil)
	tagList         // []any
	tagNilList      // []any(nil)
	tagTime         // time.Time (a YAML !!timestamp)
)

// maxDepth bounds the nesting of values, encoded or decoded: no YAML a
// person writes is this deep, and a cycle or garbage must not overflow
// the stack.
const maxDepth = 10000

// EncodeValues encodes values losslessly (see DecodeValues). Map keys are
// written in a fixed order, so equal values give equal bytes.
func EncodeValues(values map[string]any) ([]byte, error) {
	var e encoder
	if err := e.value(values, nil, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// DecodeValues decodes what EncodeValues wrote: the same Go types, the
// same nil maps and lists, the same float bits.
func DecodeValues(data []byte) (map[string]any, error) {
	d := decoder{data: data}
	v, err := d.value(0)
	if err != nil {
		return nil, fmt.Errorf("decoding values at byte %d: %w", d.pos, err)
	}
	if d.pos != len(d.data) {
		return nil, fmt.Errorf("decoding values: %d bytes after the end", len(d.data)-d.pos)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("decoding values: the top level is %T, not a mapping", v)
	}
	return m, nil
}

type encoder struct{ buf []byte }

func (e *encoder) uvarint(n uint64) { e.buf = binary.AppendUvarint(e.buf, n) }

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// value encodes v; path names it in errors (a.b[2]).
func (e *encoder) value(v any, path []string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value %s is nested more than %d levels deep", pathString(path), maxDepth)
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, tagNil)
	case bool:
		if x {
			e.buf = append(e.buf, tagTrue)
		} else {
			e.buf = append(e.buf, tagFalse)
		}
	case string:
		e.buf = append(e.buf, tagString)
		e.str(x)
	case int:
		e.buf = binary.AppendVarint(append(e.buf, tagInt), int64(x))
	case int8:
		e.buf = binary.AppendVarint(append(e.buf, tagInt8), int64(x))
	case int16:
		e.buf = binary.AppendVarint(append(e.buf, tagInt16), int64(x))
	case int32:
		e.buf = binary.AppendVarint(append(e.buf, tagInt32), int64(x))
	case int64:
		e.buf = binary.AppendVarint(append(e.buf, tagInt64), x)
	case uint:
		e.buf = binary.AppendUvarint(append(e.buf, tagUint), uint64(x))
	case uint8:
		e.buf = binary.AppendUvarint(append(e.buf, tagUint8), uint64(x))
	case uint16:
		e.buf = binary.AppendUvarint(append(e.buf, tagUint16), uint64(x))
	case uint32:
		e.buf = binary.AppendUvarint(append(e.buf, tagUint32), uint64(x))
	case uint64:
		e.buf = binary.AppendUvarint(append(e.buf, tagUint64), x)
	case float32:
		e.buf = binary.LittleEndian.AppendUint32(append(e.buf, tagFloat32), math.Float32bits(x))
	case float64:
		e.buf = binary.LittleEndian.AppendUint64(append(e.buf, tagFloat64), math.Float64bits(x))
	case time.Time:
		b, err := x.MarshalBinary()
		if err != nil {
			return fmt.Errorf("value %s: %w", pathString(path), err)
		}
		e.buf = append(e.buf, tagTime)
		e.str(string(b))
	case map[string]any:
		if x == nil {
			e.buf = append(e.buf, tagNilStringMap)
			return nil
		}
		e.buf = append(e.buf, tagStringMap)
		e.uvarint(uint64(len(x)))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e.str(k)
			if err := e.value(x[k], append(path, "."+k), depth+1); err != nil {
				return err
			}
		}
	case map[any]any:
		if x == nil {
			e.buf = append(e.buf, tagNilAnyMap)
			return nil
		}
		e.buf = append(e.buf, tagAnyMap)
		e.uvarint(uint64(len(x)))
		// Each entry encoded on its own, then written in the order of the
		// encoded keys: the keys' types have no common order.
		type entry struct{ key, val []byte }
		entries := make([]entry, 0, len(x))
		for k, v := range x {
			kp := append(path, fmt.Sprintf("[%v]", k))
			var ke, ve encoder
			if err := ke.value(k, kp, depth+1); err != nil {
				return err
			}
			if err := ve.value(v, kp, depth+1); err != nil {
				return err
			}
			entries = append(entries, entry{ke.buf, ve.buf})
		}
		sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].key, entries[j].key) < 0 })
		for _, en := range entries {
			e.buf = append(append(e.buf, en.key...), en.val...)
		}
	case []any:
		if x == nil {
			e.buf = append(e.buf, tagNilList)
			return nil
		}
		e.buf = append(e.buf, tagList)
		e.uvarint(uint64(len(x)))
		for i, item := range x {
			if err := e.value(item, append(path, "["+strconv.Itoa(i)+"]"), depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("value %s has the Go type %T, which rolloutlint-helm cannot receive", pathString(path), v)
	}
	return nil
}

func pathString(path []string) string {
	if len(path) == 0 {
		return "(the values)"
	}
	var b bytes.Buffer
	for _, p := range path {
		b.WriteString(p)
	}
	s := b.String()
	if s[0] == '.' {
		s = s[1:]
	}
	return s
}

type decoder struct {
	data []byte
	pos  int
}

var errShort = errors.New("the data ends inside a value")

func (d *decoder) uvarint() (uint64, error) {
	n, k := binary.Uvarint(d.data[d.pos:])
	if k <= 0 {
		return 0, errors.New("bad unsigned number")
	}
	d.pos += k
	return n, nil
}

func (d *decoder) varint() (int64, error) {
	n, k := binary.Varint(d.data[d.pos:])
	if k <= 0 {
		return 0, errors.New("bad signed number")
	}
	d.pos += k
	return n, nil
}

// count reads a length and checks that many items can follow (each takes
// at least one byte), so garbage cannot make it allocate without bound.
func (d *decoder) count() (int, error) {
	n, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(d.data)-d.pos) {
		return 0, fmt.Errorf("a length of %d, with %d bytes left", n, len(d.data)-d.pos)
	}
	return int(n), nil
}

func (d *decoder) str() (string, error) {
	n, err := d.count()
	if err != nil {
		return "", err
	}
	s := string(d.data[d.pos : d.pos+n])
	d.pos += n
	return s, nil
}

func (d *decoder) fixed(n int) ([]byte, error) {
	if len(d.data)-d.pos < n {
		return nil, errShort
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("values nested more than %d levels deep", maxDepth)
	}
	if d.pos >= len(d.data) {
		return nil, errShort
	}
	tag := d.data[d.pos]
	d.pos++
	switch tag {
	case tagNil:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagString:
		return d.str()
	case tagInt, tagInt8, tagInt16, tagInt32, tagInt64:
		n, err := d.varint()
		if err != nil {
			return nil, err
		}
		return signed(tag, n)
	case tagUint, tagUint8, tagUint16, tagUint32, tagUint64:
		n, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		return unsigned(tag, n)
	case tagFloat32:
		b, err := d.fixed(4)
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case tagFloat64:
		b, err := d.fixed(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case tagTime:
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		var t time.Time
		if err := t.UnmarshalBinary([]byte(s)); err != nil {
			return nil, fmt.Errorf("a timestamp: %w", err)
		}
		return t, nil
	case tagNilStringMap:
		return map[string]any(nil), nil
	case tagStringMap:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, n)
		for range n {
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if m[k], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return m, nil
	case tagNilAnyMap:
		return map[any]any(nil), nil
	case tagAnyMap:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		m := make(map[any]any, n)
		for range n {
			k, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			if k != nil && !reflect.TypeOf(k).Comparable() {
				return nil, fmt.Errorf("a mapping key of type %T", k)
			}
			if m[k], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return m, nil
	case tagNilList:
		return []any(nil), nil
	case tagList:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		l := make([]any, n)
		for i := range l {
			if l[i], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	return nil, fmt.Errorf("unknown type tag %d", tag)
}

func signed(tag byte, n int64) (any, error) {
	switch tag {
	case tagInt:
		if int64(int(n)) == n {
			return int(n), nil
		}
	case tagInt8:
		if int64(int8(n)) == n {
			return int8(n), nil
		}
	case tagInt16:
		if int64(int16(n)) == n {
			return int16(n), nil
		}
	case tagInt32:
		if int64(int32(n)) == n {
			return int32(n), nil
		}
	default:
		return n, nil
	}
	return nil, fmt.Errorf("%d does not fit its integer type", n)
}

func unsigned(tag byte, n uint64) (any, error) {
	switch tag {
	case tagUint:
		if uint64(uint(n)) == n {
			return uint(n), nil
		}
	case tagUint8:
		if uint64(uint8(n)) == n {
			return uint8(n), nil
		}
	case tagUint16:
		if uint64(uint16(n)) == n {
			return uint16(n), nil
		}
	case tagUint32:
		if uint64(uint32(n)) == n {
			return uint32(n), nil
		}
	default:
		return n, nil
	}
	return nil, fmt.Errorf("%d does not fit its unsigned type", n)
}
