package fairgossip

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestReportRoundTrip(t *testing.T) {
	r := Report{Node: "nm-7", Type: "gpu=yes,rack=r1", Slots: 8, Seq: 42,
		Users: []Usage{{User: "alice", Queued: 3, Running: 5}, {User: "", Queued: 0, Running: 1}}}
	b, err := EncodeReport(r)
	if err != nil {
		t.Fatal(err)
	}
	if Kind(b) != "report" {
		t.Fatalf("kind %q", Kind(b))
	}
	got, err := DecodeReport(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip: %+v, want %+v", got, r)
	}
}

// guidanceOf builds n users and, for each, a weight on one of 4 types.
func guidanceOf(n int) ([]UserShare, []TypeWeight) {
	var us []UserShare
	var ws []TypeWeight
	for i := range n {
		u := fmt.Sprintf("user-%05d", i)
		us = append(us, UserShare{User: u, Running: uint64(i % 50), Target: float32(i) / 4})
		ws = append(ws, TypeWeight{Type: fmt.Sprintf("type-%d", i%4), User: u, Weight: float32(i%7) + 0.5})
	}
	return us, ws
}

func TestGuidanceChunksAndAssembly(t *testing.T) {
	for _, n := range []int{0, 1, 30, 5000} {
		t.Run(fmt.Sprint(n, " users"), func(t *testing.T) {
			us, ws := guidanceOf(n)
			chunks, err := EncodeGuidance(9, us, ws)
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, c := range chunks {
				if len(c) > MaxMessage {
					t.Fatalf("chunk of %d bytes, over %d", len(c), MaxMessage)
				}
				total += len(c)
			}
			t.Logf("%d users: %d chunks, %d bytes", n, len(chunks), total)
			var a Assembler
			var g Guidance
			var done bool
			// Out of order, with a duplicate.
			order := append([]int{}, len(chunks)-1)
			for i := range len(chunks) - 1 {
				order = append(order, i)
			}
			order = append(order, 0)
			for k, i := range order {
				c, err := DecodeChunk(chunks[i])
				if err != nil {
					t.Fatal(err)
				}
				g2, ok := a.Add(c)
				if ok {
					if done || k < len(chunks)-1 {
						t.Fatalf("completed at chunk %d of %d (already done: %v)", k, len(chunks), done)
					}
					g, done = g2, true
				}
			}
			if !done {
				t.Fatal("never completed")
			}
			if len(g.Users) != n || len(g.Weights) != n || g.Version != 9 {
				t.Fatalf("assembled %d users, %d weights, version %d", len(g.Users), len(g.Weights), g.Version)
			}
			if n > 0 && (g.Users[n-1] != us[n-1] || g.Users[0] != us[0]) {
				t.Fatalf("users changed: %+v", g.Users[0])
			}
		})
	}
}

func TestAssemblerVersions(t *testing.T) {
	chunk := func(v uint64, i, n uint32) Chunk { return Chunk{Version: v, Index: i, Count: n} }
	var a Assembler
	a.Add(chunk(5, 0, 2))
	// A newer version drops the incomplete one.
	if _, ok := a.Add(chunk(6, 0, 1)); !ok {
		t.Fatal("a one-chunk version did not complete")
	}
	if _, ok := a.Add(chunk(5, 1, 2)); ok {
		t.Fatal("an older version completed after a newer one")
	}
	if _, ok := a.Add(chunk(6, 0, 1)); ok {
		t.Fatal("a completed version completed twice")
	}
	a.Reset()
	if _, ok := a.Add(chunk(1, 0, 1)); !ok {
		t.Fatal("after Reset a low version was refused")
	}
}

func TestDecodeRefusesMalformed(t *testing.T) {
	good, _ := EncodeReport(Report{Node: "n", Type: "t", Slots: 1, Users: []Usage{{User: "u", Queued: 1}}})
	chunks, _ := EncodeGuidance(1, []UserShare{{User: "u", Target: 1}}, nil)
	tests := []struct {
		name string
		b    []byte
		dec  func([]byte) error
	}{
		{"empty", nil, decReport},
		{"wrong magic", []byte{0, kindReport}, decReport},
		{"guidance as report", chunks[0], decReport},
		{"truncated report", good[:len(good)-1], decReport},
		{"trailing bytes", append(append([]byte{}, good...), 0), decReport},
		{"huge user count", []byte{magic, kindReport, 1, 'n', 1, 't', 1, 0, 0xff, 0xff, 0xff, 0x7f}, decReport},
		{"chunk index past count", []byte{magic, kindGuidance, 1, 3, 2, 0, 0}, decChunk},
		{"zero chunks", []byte{magic, kindGuidance, 1, 0, 0, 0, 0}, decChunk},
		{"negative target", append([]byte{magic, kindGuidance, 1, 0, 1, 1, 1, 'u', 0}, 0xbf, 0x80, 0, 0, 0), decChunk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.dec(tt.b); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v, want ErrMalformed", err)
			}
		})
	}
}

func decReport(b []byte) error { _, err := DecodeReport(b); return err }
func decChunk(b []byte) error  { _, err := DecodeChunk(b); return err }

// FuzzDecode feeds arbitrary bytes to both decoders: an error or a value
// that encodes back to a valid message, never a panic or a large
// allocation.
func FuzzDecode(f *testing.F) {
	good, _ := EncodeReport(Report{Node: "n", Type: "t", Slots: 4, Seq: 1, Users: []Usage{{User: "u", Queued: 1, Running: 2}}})
	f.Add(good)
	us, ws := guidanceOf(3)
	chunks, _ := EncodeGuidance(2, us, ws)
	f.Add(chunks[0])
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := DecodeReport(b); err == nil {
			if _, err := EncodeReport(r); err != nil {
				t.Fatalf("decoded report does not encode: %v", err)
			}
		}
		if c, err := DecodeChunk(b); err == nil {
			if c.Index >= c.Count || len(c.Users)+len(c.Weights) > len(b) {
				t.Fatalf("decoded chunk out of bounds: %d/%d, %d entries from %d bytes", c.Index, c.Count, len(c.Users)+len(c.Weights), len(b))
			}
		}
	})
}
