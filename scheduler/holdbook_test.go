package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// TestHoldBookOrder: only the head of the arrival order places rounds,
// unless it is stuck; answering the head lets the next one place.
func TestHoldBookOrder(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name      string
		answered  []int         // calls answered before the check
		at        time.Duration // check at t0+at
		mayPlace  []bool        // per call, in arrival order
		signalled []bool        // per call, after signalHead
	}{
		{name: "the head goes first", at: 0, mayPlace: []bool{true, false, false}, signalled: []bool{true, false, false}},
		{name: "a stuck head lets all place", at: holdHeadStuck, mayPlace: []bool{true, true, true}, signalled: []bool{true, false, false}},
		{name: "the next head after an answer", answered: []int{0}, at: 0, mayPlace: []bool{false, true, false}, signalled: []bool{false, true, false}},
		{name: "none left", answered: []int{0, 1, 2}, at: 0, mayPlace: []bool{true, true, true}, signalled: []bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := holdBook{maxHeld: 8, maxHold: time.Minute}
			calls := make([]*holdState, 3)
			for i := range calls {
				h := newHoldState(t0)
				if over := b.hold(h); over != "" {
					t.Fatal(over)
				}
				h.progress = t0
				b.order(h)
				calls[i] = h
			}
			for _, i := range tt.answered {
				calls[i].waiting = false
			}
			for i, h := range calls {
				if got := b.mayPlace(h, t0.Add(tt.at)); got != tt.mayPlace[i] {
					t.Errorf("call %d: mayPlace %v, want %v", i, got, tt.mayPlace[i])
				}
			}
			for _, h := range calls {
				drain(h)
			}
			b.signalHead()
			for i, h := range calls {
				if got := drain(h); got != tt.signalled[i] {
					t.Errorf("call %d: signalled %v, want %v", i, got, tt.signalled[i])
				}
			}
		})
	}
}

// drain reports whether h was signalled, and clears the signal.
func drain(h *holdState) bool {
	select {
	case <-h.wake:
		return true
	default:
		return false
	}
}

// TestHoldBookBoundsAndSuggestion: past maxHeld a call is refused with
// the bound named; the suggested delay follows how long placed calls
// waited, within its bounds.
func TestHoldBookBoundsAndSuggestion(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name    string
		maxHold time.Duration
		waits   []time.Duration // placed calls' waits, in order
		want    time.Duration
	}{
		{name: "none placed yet", maxHold: time.Minute, want: retryAfterDefault},
		{name: "one placed", maxHold: time.Minute, waits: []time.Duration{2 * time.Second}, want: 2 * time.Second},
		{name: "moving average", maxHold: time.Minute, waits: []time.Duration{2 * time.Second, 7 * time.Second}, want: 3 * time.Second},
		{name: "at least the floor", maxHold: time.Minute, waits: []time.Duration{time.Millisecond}, want: retryAfterMin},
		{name: "at most the hold bound", maxHold: 500 * time.Millisecond, waits: []time.Duration{time.Minute}, want: 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := holdBook{maxHeld: 1, maxHold: tt.maxHold}
			for _, w := range tt.waits {
				h := newHoldState(t0)
				if over := b.hold(h); over != "" {
					t.Fatal(over)
				}
				if over := b.hold(newHoldState(t0)); !strings.Contains(over, "--max-held-jobs") {
					t.Fatalf("a call past the bound: %q, want the bound named", over)
				}
				b.finish(h, t0.Add(w), true)
			}
			if got := b.retryAfter(); got != tt.want {
				t.Fatalf("retryAfter %v, want %v", got, tt.want)
			}
			if st := b.snapshot(); st.Held != 0 || st.Holds != uint64(len(tt.waits)) || st.Seconds.Count != uint64(len(tt.waits)) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestHoldBookCapacitySignal: a capacity signal wakes the oldest call in
// line still waiting, once, brought forward to holdMinGap after its last
// round.
func TestHoldBookCapacitySignal(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := holdBook{maxHeld: 4, maxHold: time.Minute}
	a, c := newHoldState(t0), newHoldState(t0)
	a.waiting = false // answered while in line
	c.last, c.next = t0, t0.Add(time.Second)
	b.queueSignal(a)
	b.queueSignal(c)
	b.queueSignal(c) // once in line
	b.wakeOldest()
	if drain(a) || !drain(c) {
		t.Fatal("the signal did not go to the oldest call still waiting")
	}
	if want := t0.Add(holdMinGap); !c.next.Equal(want) {
		t.Fatalf("next round at %v, want brought forward to %v", c.next, want)
	}
	b.wakeOldest()
	if drain(c) {
		t.Fatal("a call was signalled twice for one place in line")
	}
}

// TestHoldBookSaturated: the fleet counts saturated for a window after a
// refusal as full.
func TestHoldBookSaturated(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name string
		full bool
		at   time.Duration
		want bool
	}{
		{name: "never full", at: 0, want: false},
		{name: "inside the window", full: true, at: time.Second - 1, want: true},
		{name: "past the window", full: true, at: time.Second, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b holdBook
			if tt.full {
				b.sawFull(t0)
			}
			if got := b.saturated(t0.Add(tt.at), time.Second); got != tt.want {
				t.Fatalf("saturated %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAdmissionBook: a node's load is its report less this scheduler's
// share at its arrival, plus this scheduler's counts now.
func TestAdmissionBook(t *testing.T) {
	t0 := time.Unix(1000, 0)
	node := placement.Node{Addr: "n"}
	probes := func(counts ...int) func(func(placement.Probe) bool) {
		return func(yield func(placement.Probe) bool) {
			for _, c := range counts {
				if !yield(placement.Probe{Node: node, Count: c}) {
					return
				}
			}
		}
	}
	tests := []struct {
		name               string
		ownAtReport        []int // own reservations queued at n when the report arrives
		runningAtReport    int
		report             LoadReport
		ownNow             []int // recounted after ownRefresh
		admitted           int   // reservations admitted since
		runningNow         int
		wantQueued, wantRn float64
	}{
		{name: "only others", report: LoadReport{Queued: 4, Running: 2, Slots: 2, TaskTime: time.Second},
			wantQueued: 4, wantRn: 2},
		{name: "own share subtracted then added back", ownAtReport: []int{1, 2}, runningAtReport: 1,
			report: LoadReport{Queued: 4, Running: 2, Slots: 2, TaskTime: time.Second},
			ownNow: []int{3}, runningNow: 1, wantQueued: 4, wantRn: 2},
		{name: "own changes since", ownAtReport: []int{3}, report: LoadReport{Queued: 3, Slots: 2, TaskTime: time.Second},
			ownNow: []int{1}, admitted: 2, runningNow: 2, wantQueued: 3, wantRn: 2},
		{name: "a report below own counts is not negative", ownAtReport: []int{5}, runningAtReport: 3,
			report: LoadReport{Queued: 1, Running: 1, Slots: 2, TaskTime: time.Second}, ownNow: []int{5}, runningNow: 3,
			wantQueued: 5, wantRn: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admissionBook{maxWait: time.Second, stale: 3 * time.Second, share: 0.5}
			a.refreshOwn(t0, probes(tt.ownAtReport...))
			a.observe("n", tt.report, tt.runningAtReport, t0)
			later := t0.Add(ownRefresh)
			a.refreshOwn(later, probes(tt.ownNow...))
			a.admitted([]placement.Probe{{Node: node, Count: tt.admitted}})
			l := a.load("n", tt.runningNow)
			if l.Queued != tt.wantQueued || l.Running != tt.wantRn || !l.At.Equal(t0) {
				t.Fatalf("load %+v; want queued %v running %v at the report", l, tt.wantQueued, tt.wantRn)
			}
			if a.reportsTaken != 1 {
				t.Fatalf("%d reports counted", a.reportsTaken)
			}
			if got := a.load("unknown", 0); !got.At.IsZero() {
				t.Fatalf("a node without a report has load %+v", got)
			}
		})
	}
}

// TestAdmissionBookOwnRefresh: the own count is recounted at most once
// per ownRefresh, and at once if the clock went back.
func TestAdmissionBookOwnRefresh(t *testing.T) {
	t0 := time.Unix(1000, 0)
	one := func(yield func(placement.Probe) bool) {
		yield(placement.Probe{Node: placement.Node{Addr: "n"}, Count: 1})
	}
	none := func(func(placement.Probe) bool) {}
	tests := []struct {
		name string
		at   time.Duration
		want float64
	}{
		{name: "within the period", at: ownRefresh - 1, want: 1},
		{name: "past the period", at: ownRefresh, want: 0},
		{name: "clock went back", at: -time.Millisecond, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admissionBook{maxWait: time.Second}
			a.refreshOwn(t0, one)
			a.refreshOwn(t0.Add(tt.at), none)
			if got := a.own["n"]; got != tt.want {
				t.Fatalf("own count %v, want %v", got, tt.want)
			}
		})
	}
}
