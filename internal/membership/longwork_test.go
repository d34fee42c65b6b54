package membership

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// The long-work advert is one byte (LongWork) from a node monitor that
// sends no level and two (LongWork, LongLevel) from one that does; both
// decode, and an old reader of the two-byte form sees its first byte as
// before.
func TestLongAdvertOneAndTwoBytes(t *testing.T) {
	type oldMeta struct {
		Role     Role  `json:"r"`
		LongWork uint8 `json:"l,omitempty"`
	}
	for _, tc := range []struct {
		name   string
		wire   string
		advert []byte
	}{
		{"no policy", `{"r":"nodemonitor"}`, []byte{0}},
		{"one byte, idle", `{"r":"nodemonitor","l":0}`, []byte{0}},
		{"one byte, busy", `{"r":"nodemonitor","l":3}`, []byte{3}},
		{"two bytes, level 0", `{"r":"nodemonitor","ll":0}`, []byte{0}},
		{"two bytes, queued long work only", `{"r":"nodemonitor","ll":2}`, []byte{0, 2}},
		{"two bytes, running and queued", `{"r":"nodemonitor","l":1,"ll":3}`, []byte{1, 3}},
		{"two bytes, saturated", `{"r":"nodemonitor","l":255,"ll":255}`, []byte{255, 255}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := DecodeMeta([]byte(tc.wire))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.LongAdvert(); !bytes.Equal(got, tc.advert) {
				t.Fatalf("LongAdvert() = %v, want %v", got, tc.advert)
			}
			var old oldMeta
			if err := json.Unmarshal([]byte(tc.wire), &old); err != nil {
				t.Fatalf("an old reader fails: %v", err)
			}
			if old.LongWork != tc.advert[0] {
				t.Fatalf("an old reader sees long work %d, want %d", old.LongWork, tc.advert[0])
			}
		})
	}
}

// WithLongWork and LongAdvert round-trip through the wire form, which
// carries the level only when it is not zero.
func TestWithLongWorkRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		advert [2]byte
		want   []byte
		keys   []string
	}{
		{[2]byte{0, 0}, []byte{0}, nil},
		{[2]byte{2, 0}, []byte{2}, []string{"l"}},
		{[2]byte{0, 1}, []byte{0, 1}, []string{"ll"}},
		{[2]byte{4, 5}, []byte{4, 5}, []string{"l", "ll"}},
	} {
		m := Meta{Role: RoleNodeMonitor}.WithLongWork(tc.advert)
		b, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, k := range []string{"l", "ll"} {
			if _, ok := raw[k]; ok {
				keys = append(keys, k)
			}
		}
		if !slices.Equal(keys, tc.keys) {
			t.Errorf("advert %v: wire %s has keys %v, want %v", tc.advert, b, keys, tc.keys)
		}
		got, err := DecodeMeta(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.LongAdvert(), tc.want) {
			t.Errorf("advert %v: decoded %v, want %v", tc.advert, got.LongAdvert(), tc.want)
		}
	}
}

// FuzzDecodeMeta: any input either fails to decode with an error or
// decodes to metadata whose encoding, if it fits, decodes to the same
// encoding again; its long-work advert is one or two bytes whose first
// is LongWork, two exactly when it carries a level.
func FuzzDecodeMeta(f *testing.F) {
	for _, s := range []string{
		`{"r":"nodemonitor","s":"10.0.0.1:20502","n":4}`,
		`{"r":"nodemonitor","l":3}`,
		`{"r":"nodemonitor","l":1,"ll":3}`,
		`{"r":"nodemonitor","ll":300}`,
		`{"r":"scheduler","w":4,"wa":["a","b"]}`,
		`{"r":"nodemonitor","a":[],"t":{"rack":"r1"},"b":"x","v":"v1"}`,
		`null`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMeta(b)
		if err != nil {
			return
		}
		a := m.LongAdvert()
		if len(a) < 1 || len(a) > 2 || a[0] != m.LongWork || (len(a) == 2) != (m.LongLevel > 0) {
			t.Fatalf("LongAdvert() = %v for LongWork %d, LongLevel %d", a, m.LongWork, m.LongLevel)
		}
		if len(a) == 2 && a[1] != m.LongLevel {
			t.Fatalf("LongAdvert() = %v, level %d", a, m.LongLevel)
		}
		enc, err := m.Encode()
		if err != nil {
			return
		}
		again, err := DecodeMeta(enc)
		if err != nil {
			t.Fatalf("own encoding %s does not decode: %v", enc, err)
		}
		if !bytes.Equal(again.LongAdvert(), a) {
			t.Fatalf("long-work advert %v became %v through %s", a, again.LongAdvert(), enc)
		}
		enc2, err := again.Encode()
		if err != nil {
			t.Fatalf("re-encoding %s: %v", enc, err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable: %s then %s", enc, enc2)
		}
	})
}
