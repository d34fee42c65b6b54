package pricegossip

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/core/locality"
)

func equal(a, b locality.Prices) bool {
	return a.Version == b.Version && a.Cluster == b.Cluster && a.RackPerGB == b.RackPerGB && a.CorePerGB == b.CorePerGB &&
		maps.Equal(a.Node, b.Node) && maps.Equal(a.Rack, b.Rack)
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		p    locality.Prices
	}{
		{"empty", locality.Prices{}},
		{"typical", locality.Prices{Version: 1763900000123456789, Cluster: 50, RackPerGB: 1000, CorePerGB: 2000,
			Node: map[string]int64{"nm-00001": 0, "nm-00002": 150, "nm-00010": 2500, "nm-1": 7},
			Rack: map[string]int64{"rack-a": 50, "rack-b": 0}}},
		{"unnamed rack and extremes", locality.Prices{Version: math.MaxUint64, Cluster: math.MinInt64, RackPerGB: math.MaxInt64, CorePerGB: -1,
			Node: map[string]int64{"": 1, "a": math.MaxInt64, "ab": math.MinInt64, strings.Repeat("z", MaxName): -3},
			Rack: map[string]int64{"": 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Encode(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if !IsPrices(b) {
				t.Fatal("IsPrices false on an encoded message")
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got, tt.p) {
				t.Fatalf("round trip: %+v, want %+v", got, tt.p)
			}
		})
	}
}

// TestRoundTripRandom: random tables, encoded twice, give the same bytes
// (the encoding does not depend on map order) and decode to the input.
func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		p := locality.Prices{Version: rng.Uint64(), Cluster: rng.Int64() - math.MaxInt64/2, RackPerGB: rng.Int64N(5000), CorePerGB: rng.Int64N(50000),
			Node: map[string]int64{}, Rack: map[string]int64{}}
		for range rng.IntN(60) {
			p.Node[fmt.Sprintf("nm-%d", rng.IntN(1000))] = rng.Int64N(1 << 40)
		}
		for range rng.IntN(5) {
			p.Rack[fmt.Sprintf("r%x", rng.Uint32())] = rng.Int64N(1 << 20)
		}
		a, err := Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Encode(p)
		if !bytes.Equal(a, b) {
			t.Fatal("two encodings of the same prices differ")
		}
		got, err := Decode(a)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(got, p) {
			t.Fatalf("round trip: %+v, want %+v", got, p)
		}
	}
}

// TestSize: a fleet's member names front-code to a few bytes a node.
func TestSize(t *testing.T) {
	p := locality.Prices{Version: 1, Node: map[string]int64{}, Rack: map[string]int64{}}
	for i := range 10000 {
		p.Node[fmt.Sprintf("nm-%05d", i)] = int64(i % 3000)
	}
	for i := range 250 {
		p.Rack[fmt.Sprintf("rack-%03d", i)] = int64(i)
	}
	b, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("10,000 nodes, 250 racks: %d bytes (%.1f a node)", len(b), float64(len(b))/10000)
	if len(b) > 6*10000+8*250+32 {
		t.Fatalf("%d bytes: front coding is not working", len(b))
	}
}

func TestEncodeRefusesLongName(t *testing.T) {
	_, err := Encode(locality.Prices{Node: map[string]int64{strings.Repeat("x", MaxName+1): 1}})
	if err == nil {
		t.Fatal("encoded a name over MaxName")
	}
}

func TestDecodeRefusesMalformed(t *testing.T) {
	good, _ := Encode(locality.Prices{Version: 3, Node: map[string]int64{"ab": 1, "ac": 2}, Rack: map[string]int64{"r": 0}})
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"fairgossip message", []byte{0xFA, 1, 0}},
		{"future format", []byte{magic, format + 1, 0}},
		{"truncated", good[:len(good)-1]},
		{"trailing bytes", append(append([]byte{}, good...), 0)},
		{"bad version varint", []byte{magic, format, 0xff}},
		{"huge rack count", []byte{magic, format, 1, 0, 0, 0, 0xff, 0xff, 0x7f}},
		{"first name shares a prefix", []byte{magic, format, 1, 0, 0, 0, 1, 1, 1, 'a', 0, 0}},
		{"names out of order", []byte{magic, format, 1, 0, 0, 0, 0, 2, 0, 1, 'b', 0, 0, 1, 'a', 0}},
		{"name twice", []byte{magic, format, 1, 0, 0, 0, 0, 2, 0, 1, 'a', 0, 1, 0, 0}},
		{"name past the end", []byte{magic, format, 1, 0, 0, 0, 1, 0, 9, 'a', 0, 0, 0}},
		{"name over the limit", append([]byte{magic, format, 1, 0, 0, 0, 1, 0, 0x80, 0x02}, make([]byte, 300)...)},
		{"missing price", []byte{magic, format, 1, 0, 0, 0, 1, 0, 1, 'a'}},
		{"missing node table", []byte{magic, format, 1, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.b)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v, want ErrMalformed", err)
			}
			t.Log(err)
		})
	}
}

// FuzzDecode: any input decodes or fails with ErrMalformed, never panics,
// and what decodes re-encodes to the same bytes (the format has one
// encoding per table).
func FuzzDecode(f *testing.F) {
	good, _ := Encode(locality.Prices{Version: 7, Cluster: 5, RackPerGB: 1000, CorePerGB: 2000,
		Node: map[string]int64{"nm-1": 10, "nm-2": 0, "nm-10": 300}, Rack: map[string]int64{"r1": 0, "r2": 10}})
	f.Add(good)
	f.Add([]byte{magic, format, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{magic, format, 1, 0, 0, 0, 0, 2, 0, 1, 'a', 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		again, err := Encode(p)
		if err != nil {
			t.Fatalf("decoded prices do not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			// Varints have one canonical form, but a decoder accepts
			// overlong ones; compare the decoded values instead.
			q, err := Decode(again)
			if err != nil || !equal(p, q) {
				t.Fatalf("re-encoding changed the prices: %+v vs %+v (%v)", p, q, err)
			}
		}
	})
}
