package client

import (
	"testing"
	"testing/synctest"
	"time"
)

// The end goes to exactly one party: the waiter when the task ends within
// the wait, else the task itself; a stop ends the wait early.
func TestHandoff(t *testing.T) {
	for _, tt := range []struct {
		name      string
		endsAfter time.Duration // < 0: never, within the test
		wait      time.Duration
		stopAfter time.Duration // 0: no stop
		wantTaken bool
	}{
		{name: "ends before the wait", endsAfter: 0, wait: time.Millisecond, wantTaken: true},
		{name: "ends within the wait", endsAfter: 500 * time.Microsecond, wait: time.Millisecond, wantTaken: true},
		{name: "ends after the wait", endsAfter: 2 * time.Millisecond, wait: time.Millisecond, wantTaken: false},
		{name: "never ends", endsAfter: -1, wait: time.Millisecond, wantTaken: false},
		{name: "stopped first", endsAfter: 2 * time.Millisecond, wait: time.Second, stopAfter: time.Millisecond, wantTaken: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHandoff()
				stop := make(chan struct{})
				if tt.stopAfter > 0 {
					time.AfterFunc(tt.stopAfter, func() { close(stop) })
				}
				reported := make(chan bool, 1)
				if tt.endsAfter >= 0 {
					go func() {
						time.Sleep(tt.endsAfter)
						reported <- !h.finish(taskEnd{status: 7, body: []byte("x")})
					}()
				}
				end, taken := h.await(tt.wait, stop)
				if taken != tt.wantTaken {
					t.Fatalf("waiter took the end: %v, want %v", taken, tt.wantTaken)
				}
				if taken && (end.status != 7 || string(end.body) != "x") {
					t.Errorf("waiter got %+v, want status 7 and message x", end)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				select {
				case self := <-reported:
					if self == taken {
						t.Errorf("task reports itself: %v, waiter took the end: %v; want exactly one", self, taken)
					}
				default:
					if tt.endsAfter >= 0 {
						t.Error("the task never ended")
					}
				}
			})
		})
	}
}

// When the task ends at the very instant the wait expires, still exactly
// one party has the end.
func TestHandoffRace(t *testing.T) {
	for i := 0; i < 200; i++ {
		h := newHandoff()
		self := make(chan bool, 1)
		go func() { self <- !h.finish(taskEnd{}) }()
		_, taken := h.await(0, nil)
		if s := <-self; s == taken {
			t.Fatalf("round %d: task reports itself %v, waiter took the end %v", i, s, taken)
		}
	}
}
