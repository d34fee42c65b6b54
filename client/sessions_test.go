package client

import (
	"slices"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// TestSessionBook: a session is kept while it has jobs in flight, is due
// a check once it has not answered for the interval, and is found by its
// address.
func TestSessionBook(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const every = 100 * time.Millisecond
	type op struct {
		kind string // attach, detach, answer
		id   rpc.ConnID
		addr string
		at   time.Duration
	}
	tests := []struct {
		name    string
		ops     []op
		dueAt   time.Duration
		wantDue []rpc.ConnID
		onAddr  string
		wantOn  []rpc.ConnID
	}{
		{name: "not due within the interval of a submit",
			ops:   []op{{kind: "attach", id: 1, addr: "a:1"}},
			dueAt: every - time.Millisecond, onAddr: "a:1", wantOn: []rpc.ConnID{1}},
		{name: "due once the interval passed",
			ops:   []op{{kind: "attach", id: 1, addr: "a:1"}, {kind: "attach", id: 2, addr: "b:1", at: every}},
			dueAt: every, wantDue: []rpc.ConnID{1}, onAddr: "b:1", wantOn: []rpc.ConnID{2}},
		{name: "an answer puts the check off",
			ops:   []op{{kind: "attach", id: 1, addr: "a:1"}, {kind: "answer", id: 1, at: every / 2}},
			dueAt: every, onAddr: "a:1", wantOn: []rpc.ConnID{1}},
		{name: "forgotten when its last job goes",
			ops: []op{{kind: "attach", id: 1, addr: "a:1"}, {kind: "attach", id: 1, addr: "a:1"},
				{kind: "detach", id: 1}, {kind: "detach", id: 1}, {kind: "answer", id: 1}},
			dueAt: time.Hour, onAddr: "a:1"},
		{name: "kept while a job remains",
			ops: []op{{kind: "attach", id: 1, addr: "a:1"}, {kind: "attach", id: 1, addr: "a:1"},
				{kind: "detach", id: 1}, {kind: "detach", id: 7}},
			dueAt: time.Hour, wantDue: []rpc.ConnID{1}, onAddr: "a:1", wantOn: []rpc.ConnID{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newSessionBook()
			for _, o := range tt.ops {
				switch o.kind {
				case "attach":
					b.attach(o.id, o.addr, t0.Add(o.at))
				case "detach":
					b.detach(o.id)
				case "answer":
					b.answered(o.id, t0.Add(o.at))
				}
			}
			ids := func(refs []sessionRef) []rpc.ConnID {
				var out []rpc.ConnID
				for _, r := range refs {
					out = append(out, r.id)
				}
				slices.Sort(out)
				return out
			}
			if got := ids(b.due(t0.Add(tt.dueAt), every)); !slices.Equal(got, tt.wantDue) {
				t.Errorf("due %v, want %v", got, tt.wantDue)
			}
			if got := ids(b.on(tt.onAddr)); !slices.Equal(got, tt.wantOn) {
				t.Errorf("on %s: %v, want %v", tt.onAddr, got, tt.wantOn)
			}
		})
	}
}
