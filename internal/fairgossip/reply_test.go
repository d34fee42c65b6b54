package fairgossip

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func replyUsers(n int) []ReplyUser {
	us := make([]ReplyUser, n)
	for i := range us {
		us[i] = ReplyUser{User: fmt.Sprintf("user-%05d", i), Running: uint64(i * 37), Weight: uint64(i % 50)}
	}
	return us
}

// decodeAll decodes every part and checks each against the packet limit
// and the part numbering.
func decodeAll(t *testing.T, msgs [][]byte) []Reply {
	t.Helper()
	var out []Reply
	for i, m := range msgs {
		if len(m) > MaxMessage {
			t.Fatalf("part %d is %d bytes, over %d", i, len(m), MaxMessage)
		}
		r, err := DecodeReply(m)
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		if r.Part != uint32(i) || r.Parts != uint32(len(msgs)) {
			t.Fatalf("part %d decodes as %d of %d, want of %d", i, r.Part, r.Parts, len(msgs))
		}
		out = append(out, r)
	}
	return out
}

func TestReplyRoundTrip(t *testing.T) {
	long := string(make([]byte, maxName))
	for _, tc := range []struct {
		name    string
		version uint64
		weights bool
		users   []ReplyUser
		parts   int
	}{
		{"no users", 1, true, nil, 1},
		{"one user", 1 << 62, true, []ReplyUser{{User: "alice", Running: 3, Weight: 16}}, 1},
		{"no weights", 9, false, []ReplyUser{{User: "alice", Running: 3}, {User: "bob", Running: 0}}, 1},
		{"longest name", 5, true, []ReplyUser{{User: long, Running: 1 << 40, Weight: 1 << 31}}, 1},
		{"fits one packet", 7, true, replyUsers(60), 1},
		{"split in two", 7, true, replyUsers(120), 2},
		{"split in many", 1763000000000000000, true, replyUsers(1000), 13},
		{"split without weights", 7, false, replyUsers(1000), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := EncodeReply(tc.version, tc.weights, tc.users)
			if err != nil {
				t.Fatal(err)
			}
			if tc.parts > 0 && len(msgs) != tc.parts {
				t.Errorf("%d parts, want %d", len(msgs), tc.parts)
			}
			var got []ReplyUser
			for _, r := range decodeAll(t, msgs) {
				if r.Version != tc.version || r.Weights != tc.weights {
					t.Fatalf("decoded version %d weights %v, want %d %v", r.Version, r.Weights, tc.version, tc.weights)
				}
				got = append(got, r.Users...)
			}
			want := tc.users
			if !tc.weights {
				want = make([]ReplyUser, len(tc.users))
				for i, u := range tc.users {
					want[i] = ReplyUser{User: u.User, Running: u.Running}
				}
			}
			if len(want) == 0 {
				want = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("users differ after the round trip: got %d, want %d", len(got), len(want))
			}
		})
	}
}

func TestEncodeReplyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version uint64
		users   []ReplyUser
	}{
		{"version 0", 0, nil},
		{"name too long", 1, []ReplyUser{{User: string(make([]byte, maxName+1))}}},
		{"too many parts", 1, replyUsers(30000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := EncodeReply(tc.version, true, tc.users); err == nil {
				t.Error("encoded")
			}
		})
	}
}

func TestDecodeReplyRefusesMalformed(t *testing.T) {
	good, err := EncodeReply(3, true, []ReplyUser{{User: "u", Running: 2, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	b := good[0]
	with := func(f func([]byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"a report", func() []byte { r, _ := EncodeReport(Report{Node: "n"}); return r }()},
		{"truncated", b[:len(b)-1]},
		{"trailing byte", append(append([]byte(nil), b...), 0)},
		{"version 0", with(func(x []byte) []byte { x[2] = 0; return x })},
		{"part beyond count", []byte{magic, kindReply, 1, 2, 2, 0, 0}},
		{"no parts", []byte{magic, kindReply, 1, 0, 0, 0, 0}},
		{"too many parts", []byte{magic, kindReply, 1, 0, 0x81, 0x02, 0, 0}},
		{"no flags", []byte{magic, kindReply, 1, 0, 1}},
		{"unknown flag", []byte{magic, kindReply, 1, 0, 1, 2, 0}},
		{"user count beyond bytes", []byte{magic, kindReply, 1, 0, 1, 1, 100, 1, 'u', 1, 1}},
		{"name beyond bytes", []byte{magic, kindReply, 1, 0, 1, 0, 1, 9, 'u', 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeReply(tc.b)
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v, want ErrMalformed", err)
			}
		})
	}
}

func TestReplyAssembler(t *testing.T) {
	parts := func(version uint64, n int) []Reply {
		msgs, err := EncodeReply(version, true, replyUsers(n))
		if err != nil {
			t.Fatal(err)
		}
		return decodeAll(t, msgs)
	}
	v5, v6 := parts(5, 200), parts(6, 200) // 3 parts each
	if len(v5) != 3 {
		t.Fatalf("%d parts, want 3", len(v5))
	}
	wantUsers := map[uint64]int{5: 200, 6: 200, 9: 3}
	type step struct {
		r       Reply
		version uint64 // completed version, 0: none
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"in order", []step{{v5[0], 0}, {v5[1], 0}, {v5[2], 5}}},
		{"out of order", []step{{v5[2], 0}, {v5[0], 0}, {v5[1], 5}}},
		{"duplicate part", []step{{v5[0], 0}, {v5[0], 0}, {v5[1], 0}, {v5[2], 5}}},
		{"newer drops older", []step{{v5[0], 0}, {v5[1], 0}, {v6[0], 0}, {v5[2], 0}, {v6[1], 0}, {v6[2], 6}}},
		{"older after completion", []step{{v6[0], 0}, {v6[1], 0}, {v6[2], 6}, {v5[0], 0}, {v5[1], 0}, {v5[2], 0}}},
		{"same version again", []step{{v5[0], 0}, {v5[1], 0}, {v5[2], 5}, {v5[0], 0}, {v5[1], 0}, {v5[2], 0}}},
		{"single part", []step{{parts(9, 3)[0], 9}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a ReplyAssembler
			for i, s := range tc.steps {
				g, ok := a.Add(s.r)
				if ok != (s.version != 0) || g.Version != s.version {
					t.Fatalf("step %d (v%d part %d): completed %v v%d, want v%d", i, s.r.Version, s.r.Part, ok, g.Version, s.version)
				}
				if want := wantUsers[s.version]; ok && (len(g.Running) != want || g.Weights == nil) {
					t.Fatalf("step %d: %d users, want %d with weights", i, len(g.Running), want)
				}
			}
		})
	}
}

func TestReplyAssemblerValues(t *testing.T) {
	msgs, err := EncodeReply(4, true, []ReplyUser{{User: "a", Running: 7, Weight: 24}, {User: "b", Running: 1, Weight: 0}})
	if err != nil {
		t.Fatal(err)
	}
	var a ReplyAssembler
	r, err := DecodeReply(msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	g, ok := a.Add(r)
	want := ReplyGuidance{Version: 4, Running: map[string]uint64{"a": 7, "b": 1}, Weights: map[string]float64{"a": 1.5}}
	if !ok || !reflect.DeepEqual(g, want) {
		t.Fatalf("got %+v %v, want %+v", g, ok, want)
	}
	// Forget lets an older version (a new coordinator's clock) in.
	a.Forget()
	msgs, _ = EncodeReply(2, false, []ReplyUser{{User: "a", Running: 1}})
	r, _ = DecodeReply(msgs[0])
	if g, ok := a.Add(r); !ok || g.Version != 2 || g.Weights != nil {
		t.Fatalf("after Forget: got %+v %v, want version 2 without weights", g, ok)
	}
}

func FuzzDecodeReply(f *testing.F) {
	for _, us := range [][]ReplyUser{nil, {{User: "u", Running: 2, Weight: 16}}, replyUsers(80)} {
		msgs, _ := EncodeReply(11, true, us)
		for _, m := range msgs {
			f.Add(m)
		}
	}
	f.Add([]byte{magic, kindReply, 1, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeReply(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if r.Version == 0 || r.Part >= r.Parts || r.Parts > maxReplyParts || len(r.Users) > len(b) {
			t.Fatalf("decoded reply out of bounds: %+v", r)
		}
		msgs, err := EncodeReply(r.Version, r.Weights, r.Users)
		if err != nil {
			t.Fatalf("decoded reply does not encode: %v", err)
		}
		var again []ReplyUser
		for _, m := range msgs {
			p, err := DecodeReply(m)
			if err != nil || len(m) > MaxMessage {
				t.Fatalf("re-encoded part of %d bytes: %v", len(m), err)
			}
			again = append(again, p.Users...)
		}
		if len(again) != len(r.Users) || (len(again) > 0 && !reflect.DeepEqual(again, r.Users)) {
			t.Fatalf("re-encoded reply decodes to other users")
		}
		var a ReplyAssembler
		a.Add(r) // must not panic on any decoded part
	})
}
