package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// bookRequest returns a request of m unconstrained tasks.
func bookRequest(id string, m int) *request {
	return &request{Request: placement.NewRequest(id, make([]placement.Task, m))}
}

// TestRequestBookIDs: a chosen id is taken unless in use; a made-up id
// skips ids in use, chosen ones included.
func TestRequestBookIDs(t *testing.T) {
	tests := []struct {
		name    string
		live    []string
		chosen  string
		want    string
		wantErr string
	}{
		{name: "chosen", chosen: "job", want: "job"},
		{name: "chosen in use", live: []string{"job"}, chosen: "job", wantErr: `"job" is already in use`},
		{name: "made up", want: "p-1"},
		{name: "made up skips a chosen look-alike", live: []string{"p-1", "p-2"}, want: "p-3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRequestBook("p")
			for _, id := range tt.live {
				b.add(bookRequest(id, 1))
			}
			got, err := b.newID(tt.chosen)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("newID = %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("newID = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestRequestBookLiveness: a request is live from add to remove, and a
// new request under a reused id does not make the old one live.
func TestRequestBookLiveness(t *testing.T) {
	b := newRequestBook("p")
	old, next := bookRequest("r", 1), bookRequest("r", 1)
	steps := []struct {
		do            func()
		oldLive, next bool
		n             int
	}{
		{do: func() { b.add(old) }, oldLive: true, n: 1},
		{do: func() {
			if !b.remove(old) || b.remove(old) {
				t.Fatal("remove reports wrongly")
			}
		}, n: 0},
		{do: func() { b.add(next) }, next: true, n: 1},
		{do: func() {
			if b.remove(old) {
				t.Fatal("removed a request under a reused id")
			}
		}, next: true, n: 1},
	}
	for i, st := range steps {
		st.do()
		if b.live(old) != st.oldLive || b.live(next) != st.next || b.len() != st.n {
			t.Fatalf("step %d: old live %v, next live %v, %d live; want %v %v %d", i, b.live(old), b.live(next), b.len(), st.oldLive, st.next, st.n)
		}
	}
}

// TestRequestBookQueries: holding, outstanding and overdue see exactly
// the live requests.
func TestRequestBookQueries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	n1, n2 := placement.Node{Addr: "n1"}, placement.Node{Addr: "n2"}
	a, c := bookRequest("a", 2), bookRequest("c", 1)
	a.AddProbes([]placement.Probe{{Node: n1, Count: 2}, {Node: n2, Count: 1}})
	c.AddProbes([]placement.Probe{{Node: n2, Count: 1}})
	a.deadline = t0
	c.deadline = t0.Add(time.Hour)
	b := newRequestBook("p")
	b.add(a)
	b.add(c)
	tests := []struct {
		addr    string
		holding int
	}{{"n1", 1}, {"n2", 2}, {"n3", 0}}
	for _, tt := range tests {
		if got := len(b.holding(tt.addr)); got != tt.holding {
			t.Errorf("holdingLocked(%s) = %d requests, want %d", tt.addr, got, tt.holding)
		}
	}
	total := 0
	for p := range b.outstanding() {
		total += p.Count
	}
	if total != 4 {
		t.Errorf("%d reservations outstanding, want 4", total)
	}
	due := b.overdue(t0.Add(time.Second), time.Minute)
	if len(due) != 1 || due[0] != a || !a.deadline.Equal(t0.Add(time.Second+time.Minute)) {
		t.Fatalf("overdue %v (deadline %v), want a with its deadline moved", due, a.deadline)
	}
	if due := b.overdue(t0.Add(2*time.Second), time.Minute); len(due) != 0 {
		t.Fatalf("overdue again before the new deadline: %v", due)
	}
}
