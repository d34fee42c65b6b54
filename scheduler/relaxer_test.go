package scheduler

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/placement"
)

// relaxRequest returns a request of one relaxable task with delay,
// submitted at t0.
func relaxRequest(id string, t0 time.Time, delay time.Duration) *request {
	task := placement.Task{Nodes: []string{"n0"}}
	job := Job{Tasks: []placement.Task{task}, Relax: []Relaxation{{Task: 0, Delay: delay, InputBytes: -1}}}
	return &request{Request: placement.NewRequest(id, job.Tasks), loc: newRelaxState(job, t0, 1)}
}

// TestRelaxerQueue: requests come due in order of their next delay step;
// newer fresh prices make every queued request due at once.
func TestRelaxerQueue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name    string
		delays  []time.Duration // one request each, r0, r1, ...
		prices  bool            // newer prices arrive at t0
		at      time.Duration   // due at t0+at
		wantDue int
		wantQ   int
	}{
		{name: "nothing due yet", delays: []time.Duration{time.Second, 2 * time.Second}, at: 500 * time.Millisecond, wantDue: 0, wantQ: 2},
		{name: "the earliest due", delays: []time.Duration{2 * time.Second, time.Second}, at: 1500 * time.Millisecond, wantDue: 1, wantQ: 1},
		{name: "both due", delays: []time.Duration{time.Second, time.Second}, at: time.Second, wantDue: 2, wantQ: 0},
		{name: "fresh prices make all due", delays: []time.Duration{time.Minute, time.Hour}, prices: true, at: time.Millisecond, wantDue: 2, wantQ: 0},
		{name: "stale prices do not", delays: []time.Duration{time.Minute}, prices: true, at: time.Hour, wantDue: 1, wantQ: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newRelaxer(3 * time.Second)
			var first time.Time
			for i, d := range tt.delays {
				r := relaxRequest(string(rune('a'+i)), t0, d)
				x.schedule(r, t0)
				if first.IsZero() || r.loc.at.Before(first) {
					first = r.loc.at
				}
			}
			if at, ok := x.next(func() time.Time { return t0 }); !ok || !at.Equal(first) {
				t.Fatalf("next = %v, %v; want the earliest step %v", at, ok, first)
			}
			if tt.prices {
				if !x.setPrices(locality.Prices{Version: 1}, t0) {
					t.Fatal("first prices not installed")
				}
				if at, _ := x.next(func() time.Time { return t0 }); !at.Equal(t0) {
					t.Fatalf("next with prices waiting = %v, want now", at)
				}
			}
			due, _ := x.due(t0.Add(tt.at))
			if len(due) != tt.wantDue || len(x.q) != tt.wantQ {
				t.Fatalf("%d due, %d queued; want %d, %d", len(due), len(x.q), tt.wantDue, tt.wantQ)
			}
			for _, r := range due {
				if r.loc.pos != -1 {
					t.Fatal("a due request still marked queued")
				}
			}
		})
	}
}

// TestRelaxerPrices: prices are installed when newer, or when the
// current ones are stale; the same version renews their age.
func TestRelaxerPrices(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const stale = 3 * time.Second
	tests := []struct {
		name      string
		version   uint64
		at        time.Duration
		installed bool
		fresh     bool // just past the first set's age
	}{
		{name: "newer", version: 6, at: time.Second, installed: true, fresh: true},
		{name: "same version renews", version: 5, at: time.Second, installed: false, fresh: true},
		{name: "older while fresh", version: 4, at: time.Second, installed: false, fresh: false},
		{name: "older once stale (a restarted coordinator)", version: 1, at: 10 * time.Second, installed: true, fresh: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := newRelaxer(stale)
			x.setPrices(locality.Prices{Version: 5}, t0)
			if got := x.setPrices(locality.Prices{Version: tt.version}, t0.Add(tt.at)); got != tt.installed {
				t.Fatalf("installed %v, want %v", got, tt.installed)
			}
			if got := x.fresh(t0.Add(stale + time.Millisecond)); got != tt.fresh {
				t.Fatalf("fresh just past the first set's age: %v, want %v", got, tt.fresh)
			}
			if st := x.snapshot(t0); st.PricesAccepted != map[bool]uint64{true: 2, false: 1}[tt.installed] {
				t.Fatalf("PricesAccepted %d", st.PricesAccepted)
			}
		})
	}
}

// TestRelaxerRemove: a request taken off the queue is never due.
func TestRelaxerRemove(t *testing.T) {
	t0 := time.Unix(1000, 0)
	x := newRelaxer(time.Second)
	a, b := relaxRequest("a", t0, time.Second), relaxRequest("b", t0, time.Second)
	x.schedule(a, t0)
	x.schedule(b, t0)
	x.remove(a)
	x.remove(a)
	due, _ := x.due(t0.Add(time.Hour))
	if len(due) != 1 || due[0] != b {
		t.Fatalf("due %v, want only b", due)
	}
}
