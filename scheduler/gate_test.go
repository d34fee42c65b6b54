package scheduler

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// TestGate: a drain refuses from then on and signals every held call
// still waiting, wherever it waits (the arrival order, the line for a
// capacity signal, admission's queue), and no answered one; the snapshot
// joins the holds' counts and the load reports taken.
func TestGate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name      string
		drain     bool
		reports   int    // load reports observed
		signalled []bool // per call: ordered, in line, admission, admission answered
	}{
		{name: "before a drain", signalled: []bool{false, false, false, false}},
		{name: "a drain signals the waiting calls", drain: true, signalled: []bool{true, true, true, false}},
		{name: "load reports are counted", reports: 2, signalled: []bool{false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gate{
				hold: holdBook{maxHeld: 8, maxHold: time.Minute},
				adm:  admissionBook{maxWait: time.Second, stale: time.Minute, share: 0.5},
			}
			calls := make([]*holdState, 4)
			for i := range calls {
				calls[i] = newHoldState(t0)
				if over := g.hold.hold(calls[i]); over != "" {
					t.Fatal(over)
				}
			}
			g.hold.order(calls[0])
			g.hold.queueSignal(calls[1])
			g.adm.queue = append(g.adm.queue, calls[2], calls[3])
			g.hold.finish(calls[3], t0, false)
			for range tt.reports {
				g.adm.refreshOwn(t0, func(func(placement.Probe) bool) {})
				g.adm.observe("n", LoadReport{Slots: 1}, 0, t0)
			}
			for _, h := range calls {
				drain(h) // a report signals admission's head; only the drain's signals count
			}
			if tt.drain {
				g.drain()
			}
			if got := g.draining.Load(); got != tt.drain {
				t.Fatalf("draining %v, want %v", got, tt.drain)
			}
			for i, h := range calls {
				if got := drain(h); got != tt.signalled[i] {
					t.Errorf("call %d: signalled %v, want %v", i, got, tt.signalled[i])
				}
			}
			st := g.snapshot()
			if st.Held != 3 || st.Holds != 4 || st.LoadReports != uint64(tt.reports) {
				t.Fatalf("snapshot %+v: want 3 held, 4 holds, %d load reports", st, tt.reports)
			}
		})
	}
}
