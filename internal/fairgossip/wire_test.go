package fairgossip

import (
	"errors"
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

// TestReportLocalitySection: the rack and task run time travel in a
// trailing section that an original report lacks; later fields inside the
// section are skipped.
func TestReportLocalitySection(t *testing.T) {
	// An original report, byte for byte: node "n", type "t", 2 slots,
	// seq 5, user "u" with 1 queued and 3 running.
	original := []byte{magic, kindReport, 1, 'n', 1, 't', 2, 5, 1, 1, 'u', 1, 3}
	tests := []struct {
		name string
		b    []byte
		want Report
	}{
		{"original format", original,
			Report{Node: "n", Type: "t", Slots: 2, Seq: 5, Users: []Usage{{User: "u", Queued: 1, Running: 3}}}},
		{"with the section", append(append([]byte{}, original...), 5, 2, 'r', '1', 0xac, 0x02),
			Report{Node: "n", Type: "t", Slots: 2, Seq: 5, Users: []Usage{{User: "u", Queued: 1, Running: 3}}, Rack: "r1", TaskMillis: 300}},
		{"a later field skipped", append(append([]byte{}, original...), 4, 0, 7, 9, 9),
			Report{Node: "n", Type: "t", Slots: 2, Seq: 5, Users: []Usage{{User: "u", Queued: 1, Running: 3}}, TaskMillis: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeReport(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decoded %+v, want %+v", got, tt.want)
			}
		})
	}
	// Encoding: no section unless a field is set, and a round trip.
	plain := Report{Node: "n", Type: "t", Slots: 2, Seq: 5, Users: []Usage{{User: "u", Queued: 1, Running: 3}}}
	if b, _ := EncodeReport(plain); !reflect.DeepEqual(b, original) {
		t.Fatalf("a report without locality fields encodes as % x, want the original % x", b, original)
	}
	for _, r := range []Report{{Node: "a", Rack: "rack-7"}, {Node: "a", TaskMillis: 1 << 40}, {Node: "b", Rack: "x", TaskMillis: 12, Users: plain.Users}} {
		b, err := EncodeReport(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeReport(b)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip of %+v: %+v (%v)", r, got, err)
		}
	}
}

func TestDecodeRefusesMalformed(t *testing.T) {
	good, _ := EncodeReport(Report{Node: "n", Type: "t", Slots: 1, Users: []Usage{{User: "u", Queued: 1}}})
	table, _ := EncodeNames(1, []string{"a", "ab"}, []string{"t"})
	guidance, _ := EncodeIndexed(2, 1, 0, []Entry{{User: 0, Value: 3}}, []TypeEntries{{Type: 0, Entries: []Entry{{User: 1, Value: 16}}}})
	tests := []struct {
		name string
		b    []byte
		dec  func([]byte) error
	}{
		{"empty", nil, decReport},
		{"wrong magic", []byte{0, kindReport}, decReport},
		{"guidance as report", guidance[0], decReport},
		{"truncated report", good[:len(good)-1], decReport},
		{"trailing bytes", append(append([]byte{}, good...), 0), decReport},
		{"locality section past the end", append(append([]byte{}, good...), 9, 0, 1), decReport},
		{"locality section with a short rack", append(append([]byte{}, good...), 2, 5, 'r'), decReport},
		{"locality section without run time", append(append([]byte{}, good...), 2, 1, 'r'), decReport},
		{"bytes after the locality section", append(append([]byte{}, good...), 2, 0, 0, 1), decReport},
		{"huge user count", []byte{magic, kindReport, 1, 'n', 1, 't', 1, 0, 0xff, 0xff, 0xff, 0x7f}, decReport},
		{"retired guidance format", []byte{magic, 2, 1, 0, 1, 0, 0}, decIndexed},

		{"names: report as names", good, decNames},
		{"names: truncated", table[0][:len(table[0])-1], decNames},
		{"names: trailing bytes", append(append([]byte{}, table[0]...), 0), decNames},
		{"names: epoch 0", []byte{magic, kindNames, 0, 0, 1, 1, 0, 0, 1, 0, 1, 'a'}, decNames},
		{"names: index past count", []byte{magic, kindNames, 1, 2, 1, 1, 0, 0, 0}, decNames},
		{"names: past the table", []byte{magic, kindNames, 1, 0, 1, 1, 0, 0, 2, 0, 1, 'a', 1, 1, 'b'}, decNames},
		{"names: first name shares a prefix", []byte{magic, kindNames, 1, 0, 1, 1, 0, 0, 1, 1, 1, 'a'}, decNames},
		{"names: prefix longer than predecessor", []byte{magic, kindNames, 1, 0, 1, 2, 0, 0, 2, 0, 1, 'a', 3, 1, 'b'}, decNames},
		{"names: huge table", []byte{magic, kindNames, 1, 0, 1, 0x81, 0x80, 0x40, 0, 0, 0}, decNames},
		{"names: huge name count", []byte{magic, kindNames, 1, 0, 1, 1, 0, 0, 0xff, 0xff, 0x7f}, decNames},

		{"guidance: names as guidance", table[0], decIndexed},
		{"guidance: truncated", guidance[0][:len(guidance[0])-1], decIndexed},
		{"guidance: trailing bytes", append(append([]byte{}, guidance[0]...), 0), decIndexed},
		{"guidance: version 0", []byte{magic, kindIndexed, 0, 1, 0, 0, 1, 0, 0}, decIndexed},
		{"guidance: epoch 0", []byte{magic, kindIndexed, 2, 0, 0, 0, 1, 0, 0}, decIndexed},
		{"guidance: base not older", []byte{magic, kindIndexed, 2, 1, 2, 0, 1, 0, 0}, decIndexed},
		{"guidance: index past count", []byte{magic, kindIndexed, 2, 1, 0, 1, 1, 0, 0}, decIndexed},
		{"guidance: zero chunks", []byte{magic, kindIndexed, 2, 1, 0, 0, 0, 0, 0}, decIndexed},
		{"guidance: user index past the limit", []byte{magic, kindIndexed, 2, 1, 0, 0, 1, 1, 0x80, 0x80, 0x40, 1, 0}, decIndexed},
		{"guidance: types out of order", []byte{magic, kindIndexed, 2, 1, 0, 0, 1, 0, 2, 1, 0, 0, 0}, decIndexed},
		{"guidance: empty weight section", []byte{magic, kindIndexed, 2, 1, 0, 0, 1, 0, 1, 0, 0}, decIndexed},
		{"names: more names than its chunks hold", []byte{magic, kindNames, 1, 0, 1, 0xff, 0x7f, 0, 0, 0}, decNames},
		{"guidance: huge entry count", []byte{magic, kindIndexed, 2, 1, 0, 0, 1, 0xff, 0xff, 0x7f}, decIndexed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.dec(tt.b)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v, want ErrMalformed", err)
			}
			t.Log(err)
		})
	}
}

func decReport(b []byte) error  { _, err := DecodeReport(b); return err }
func decNames(b []byte) error   { _, err := DecodeNames(b); return err }
func decIndexed(b []byte) error { _, err := DecodeIndexed(b); return err }

// FuzzDecode feeds arbitrary bytes to every decoder: an error or a value
// that encodes back to an equal one, never a panic or a large allocation.
func FuzzDecode(f *testing.F) {
	good, _ := EncodeReport(Report{Node: "n", Type: "t", Slots: 4, Seq: 1, Users: []Usage{{User: "u", Queued: 1, Running: 2}}})
	f.Add(good)
	loc, _ := EncodeReport(Report{Node: "n", Type: "t", Slots: 4, Seq: 1, Rack: "r1", TaskMillis: 250})
	f.Add(loc)
	table, _ := EncodeNames(5, []string{"user-1", "user-12", "user-2"}, []string{"gpu", "mem=high"})
	f.Add(table[0])
	g, _ := EncodeIndexed(7, 5, 0, []Entry{{User: 0, Value: 3}, {User: 2, Value: 300}},
		[]TypeEntries{{Type: 0, Entries: []Entry{{User: 1, Value: 16}}}, {Type: 1, Entries: []Entry{{User: 0, Value: 1}}}})
	f.Add(g[0])
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := DecodeReport(b); err == nil {
			again, err := EncodeReport(r)
			if err != nil {
				t.Fatalf("decoded report does not encode: %v", err)
			}
			if r2, err := DecodeReport(again); err != nil || !reflect.DeepEqual(r, r2) {
				t.Fatalf("re-encoded report decodes to %+v (%v), want %+v", r2, err, r)
			}
		}
		if c, err := DecodeNames(b); err == nil {
			if uint64(c.Start)+uint64(len(c.Names)) > uint64(c.Users)+uint64(c.Types) || c.Index >= c.Count || len(c.Names) > len(b) {
				t.Fatalf("decoded name chunk out of bounds: %+v", c)
			}
			for _, s := range c.Names {
				if len(s) > maxName {
					t.Fatalf("decoded a name of %d bytes", len(s))
				}
			}
		}
		if c, err := DecodeIndexed(b); err == nil {
			if c.Index >= c.Count || len(c.Running)+len(c.Weights) > len(b) {
				t.Fatalf("decoded chunk out of bounds: %d/%d, %d entries from %d bytes", c.Index, c.Count, len(c.Running)+len(c.Weights), len(b))
			}
			again, err := EncodeIndexed(c.Version, c.Epoch, c.Base, c.Running, c.Weights)
			if err != nil {
				t.Fatalf("decoded chunk does not encode: %v", err)
			}
			if len(again) == 1 {
				d, err := DecodeIndexed(again[0])
				if err != nil || !sameEntries(c, d) {
					t.Fatalf("re-encoded chunk decodes to %+v (%v), want %+v", d, err, c)
				}
			}
		}
		// A receiver holding a table takes anything without panicking and
		// installs only names of its table.
		var r Receiver
		r.Add(table[0])
		res, err := r.Add(b)
		if err == nil && res.Installed {
			known := map[string]bool{"user-1": true, "user-12": true, "user-2": true}
			for u := range res.Guidance.Running {
				if !known[u] {
					t.Fatalf("installed unknown user %q", u)
				}
			}
		}
	})
}

// sameEntries compares two chunks' values (empty and nil alike).
func sameEntries(a, b GuidanceChunk) bool {
	if a.Version != b.Version || a.Epoch != b.Epoch || a.Base != b.Base || len(a.Running) != len(b.Running) || len(a.Weights) != len(b.Weights) {
		return false
	}
	for i := range a.Running {
		if a.Running[i] != b.Running[i] {
			return false
		}
	}
	for i := range a.Weights {
		if a.Weights[i].Type != b.Weights[i].Type || len(a.Weights[i].Entries) != len(b.Weights[i].Entries) {
			return false
		}
		for j := range a.Weights[i].Entries {
			if a.Weights[i].Entries[j] != b.Weights[i].Entries[j] {
				return false
			}
		}
	}
	return true
}
