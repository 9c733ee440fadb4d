package planreport

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rolloutlint/rolloutlint/internal/corpus"
	"github.com/rolloutlint/rolloutlint/model/load"
	"github.com/rolloutlint/rolloutlint/semantics/plan"
	"github.com/rolloutlint/rolloutlint/semantics/xds"
)

// reference is what jsonEnc must write for r: encoding/json's compact form
// indented by json.Indent.
func reference(t *testing.T, r *Rollout, prefix string) []byte {
	t.Helper()
	compact, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, prefix, "  "); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func checkRollout(t *testing.T, e *jsonEnc, r *Rollout, prefix string) bool {
	t.Helper()
	e.b = e.b[:0]
	e.rollout(r)
	if want := reference(t, r, prefix); !bytes.Equal(e.b, want) {
		i := 0
		for i < len(e.b) && i < len(want) && e.b[i] == want[i] {
			i++
		}
		lo := max(0, i-200)
		t.Errorf("prefix %q: jsonEnc differs from encoding/json at byte %d:\ngot  ...%s\nwant ...%s",
			prefix, i, e.b[lo:min(len(e.b), i+100)], want[lo:min(len(want), i+100)])
		return false
	}
	return true
}

// oddStrings are strings encoding/json escapes or replaces.
var oddStrings = []string{
	"", "plain", "<canary-hash>", "a&b", `quote " and \ backslash`, "\x00\x01\x1f\x7f",
	"\b\f\n\r\t", "\u2028\u2029", "é → 😀", "\xff\xfe", "\xed\xa0\x80", "trunc\xe2\x82",
	"{[,:]}", "\ufffd", "\u00e9\u0301", "</script>",
}

// randString is a string of random runes and bytes, often odd.
func randString(rnd *rand.Rand) string {
	if rnd.IntN(3) == 0 {
		return oddStrings[rnd.IntN(len(oddStrings))]
	}
	var b strings.Builder
	for range rnd.IntN(12) {
		switch rnd.IntN(5) {
		case 0:
			b.WriteByte(byte(rnd.IntN(256))) // any byte, valid UTF-8 or not
		case 1:
			b.WriteRune(rune(rnd.IntN(0x110000)))
		case 2:
			b.WriteString(oddStrings[rnd.IntN(len(oddStrings))])
		default:
			b.WriteByte(byte('a' + rnd.IntN(26)))
		}
	}
	return b.String()
}

// fill sets every exported, encoded field reachable from v to a random
// value: zero or not, nil or empty or not, so that omitempty, null and []
// are all exercised. A kind it does not know fails the test: jsonEnc would
// not know it either.
func fill(t *testing.T, rnd *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(randString(rnd))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		switch rnd.IntN(4) {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(-1 << (bits - 1)) // the smallest
		case 2:
			v.SetInt(1<<(bits-1) - 1) // the largest
		default:
			v.SetInt(int64(rnd.IntN(200) - 100))
		}
	case reflect.Bool:
		v.SetBool(rnd.IntN(2) == 0)
	case reflect.Pointer:
		if depth > 4 || rnd.IntN(3) == 0 {
			v.SetZero()
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, rnd, v.Elem(), depth+1)
	case reflect.Slice:
		switch n := rnd.IntN(6); {
		case n == 0 || depth > 4:
			v.SetZero()
		case n == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1)
			for i := range n - 1 {
				fill(t, rnd, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			fill(t, rnd, v.Field(i), depth+1)
		}
	default:
		t.Fatalf("%s: kind %s is not handled by jsonEnc (nor by this test)", v.Type(), v.Kind())
	}
}

// TestEncoderMatchesJSON compares jsonEnc with encoding/json on Rollouts
// whose every field is random: a field added to the report types and not
// to jsonEnc, or one whose tag changes, makes them differ.
func TestEncoderMatchesJSON(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, prefix := range []string{"    ", ""} {
		e := newJSONEnc(prefix)
		for range 3000 {
			var r Rollout
			fill(t, rnd, reflect.ValueOf(&r).Elem(), 0)
			if !checkRollout(t, e, &r, prefix) {
				return
			}
		}
	}
}

// TestEncoderDeep indents deeper than the ready-made indentation.
func TestEncoderDeep(t *testing.T) {
	e := newJSONEnc("")
	e.depth = 20
	r := Rollout{Rollout: plan.Object{Kind: "Rollout"}}
	e.rollout(&r)
	want := reference(t, &r, strings.Repeat("  ", 20))
	if !bytes.Equal(e.b, want) {
		t.Errorf("got\n%s\nwant\n%s", e.b, want)
	}
}

// quotesLikeJSON reports whether e quotes s as encoding/json does, and
// says where not.
func quotesLikeJSON(t *testing.T, e *jsonEnc, s string) bool {
	t.Helper()
	e.b = e.b[:0]
	e.str(s)
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.b, want) {
		t.Errorf("%q: got %s, want %s", s, e.b, want)
		return false
	}
	return true
}

// TestEncoderStrings compares the string quoting with encoding/json's on
// every rune, every byte and random byte strings.
func TestEncoderStrings(t *testing.T) {
	e := newJSONEnc("")
	check := func(s string) bool { return quotesLikeJSON(t, e, s) }
	for c := range 256 {
		if !check(string([]byte{byte(c)})) || !check("x"+string([]byte{byte(c)})+"y") {
			return
		}
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !check("a" + string(r) + "b") {
			return
		}
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 0, 16)
	for range 200000 {
		buf = buf[:0]
		for range rnd.IntN(16) {
			buf = append(buf, byte(rnd.IntN(256)))
		}
		if !check(string(buf)) {
			return
		}
	}
}

// TestEncoderMatchesJSONOnCorpus compares jsonEnc with encoding/json on
// the Rollouts of generated bundles, with every Istio model.
func TestEncoderMatchesJSONOnCorpus(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	for _, o := range []corpus.Options{
		{Rollouts: n, Seed: 1},
		{Rollouts: n, Seed: 2, MistakeRate: 0.3},
		{Rollouts: n / 2, Seed: 3, Profile: corpus.Gateways, MistakeRate: 0.1},
	} {
		g := load.Inputs(corpus.Generate(o), load.Options{})
		sc := xds.NewScoper(g)
		plans := plan.Build(g)
		if len(plans) < n/2 {
			t.Fatalf("%d plans of %d generated Rollouts", len(plans), o.Rollouts)
		}
		for _, v := range xds.Versions() {
			m, err := xds.ForVersion(v)
			if err != nil {
				t.Fatal(err)
			}
			e := newJSONEnc("    ")
			for _, p := range plans {
				r := rolloutOf(m, sc, p, nil)
				if !checkRollout(t, e, &r, "    ") {
					return
				}
			}
		}
	}
}

// TestEncoderStringsLong puts every byte and the runes encoding/json
// escapes at every position of a longer string, so that safePrefix's eight
// bytes at a time meet each of them in every lane.
func TestEncoderStringsLong(t *testing.T) {
	e := newJSONEnc("")
	const safe = "abcdefghijklmnopqrstuvwxyz0123456789"
	odd := []string{"\u2028", "\u2029", "é", "😀", "\ufffd", "\xed\xa0\x80", "\xe2\x82"}
	for c := range 256 {
		odd = append(odd, string([]byte{byte(c)}))
	}
	for p := 0; p <= 26; p++ {
		for _, o := range odd {
			for _, s := range []string{safe[:p] + o, safe[:p] + o + safe, o + safe[:p] + o} {
				if !quotesLikeJSON(t, e, s) {
					return
				}
			}
		}
	}
}

// TestEncoderSharedValues has the states share their routes, labels and
// managed routes, the pushes their type lists and scopes, and the objects
// recur at other depths, as real plans do: the encodings jsonEnc copies
// from an earlier one must be what encoding/json writes at each place.
func TestEncoderSharedValues(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	e := newJSONEnc("    ")
	for range 2000 {
		var r Rollout
		fill(t, rnd, reflect.ValueOf(&r).Elem(), 0)
		var all []*State
		for i := range r.States {
			all = append(all, &r.States[i])
		}
		for i := range r.Abort {
			all = append(all, &r.Abort[i])
		}
		if len(all) == 0 {
			continue
		}
		pick := func() *State { return all[rnd.IntN(len(all))] }
		var pushes []*xds.Push
		for _, s := range all {
			switch rnd.IntN(3) {
			case 0:
				s.Routes = pick().Routes
			case 1:
				if o := pick().Routes; len(o) > 1 {
					s.Routes = o[:len(o)-1] // same array, shorter
				}
			}
			if rnd.IntN(2) == 0 {
				s.Labels = pick().Labels
			}
			if rnd.IntN(2) == 0 {
				s.Managed = pick().Managed
			}
			if rnd.IntN(3) == 0 && len(s.Writes) > 0 && len(s.Labels) > 0 {
				s.Writes[0].Object = s.Labels[0].Object
			}
			for i := range s.Pushes {
				pushes = append(pushes, &s.Pushes[i])
			}
			for i := range s.PushesIfLate {
				pushes = append(pushes, &s.PushesIfLate[i])
			}
		}
		if r.Live != nil {
			p := pick()
			r.Live.Routes, r.Live.Labels, r.Live.Managed = p.Routes, p.Labels, p.Managed
		}
		for _, p := range pushes {
			o := pushes[rnd.IntN(len(pushes))]
			switch rnd.IntN(4) {
			case 0:
				p.SidecarTypes, p.GatewayTypes, p.Effective = o.Effective, o.SidecarTypes, o.GatewayTypes
			case 1:
				p.Scope.SidecarNamespaces = o.Scope.SidecarNamespaces
			case 2:
				if len(o.Scope.SidecarNamespaces) > 1 {
					p.Scope.SidecarNamespaces = o.Scope.SidecarNamespaces[1:] // same array, other start
				}
			}
		}
		if rnd.IntN(2) == 0 && len(all[0].Routes) > 0 {
			r.Rollout = all[0].Routes[0].VS
		}
		if !checkRollout(t, e, &r, "    ") {
			return
		}
	}
}
