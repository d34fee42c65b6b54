package nodemonitor

import (
	"testing"
	"time"
)

// TestTaskClock: Little's law over a period gives the mean run time of
// the tasks that finished, however they overlap; later periods move the
// moving averages of busy time and finished tasks, whose ratio is the
// mean.
func TestTaskClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := newTaskClock(t0)
	if got := c.period(at(10), 0); got != 0 {
		t.Fatalf("mean %d before any task, want 0", got)
	}
	// Task A runs 100-200 ms, B 150-450 ms: mean (100 + 300) / 2 = 200.
	c.observe(at(100), 1, 0)
	c.observe(at(150), 2, 0)
	c.observe(at(200), 1, 1)
	c.observe(at(450), 0, 1)
	if got := c.period(at(460), 0); got != 200 {
		t.Fatalf("mean %d ms, want 200", got)
	}
	// A period busy 400 ms with none finished: busy stays 400 on average,
	// finished falls to 2 + 0.1·(0 - 2) = 1.8, so 400/1.8 = 222 ms.
	c.observe(at(500), 1, 0)
	if got := c.period(at(900), 1); got != 222 {
		t.Fatalf("mean %d ms, want 222", got)
	}
	// That task finishes at 1000 ms: busy 100 ms, 1 finished; averages
	// 400 + 0.1·(100 - 400) = 370 and 1.8 + 0.1·(1 - 1.8) = 1.72: 215 ms.
	c.observe(at(1000), 0, 1)
	if got := c.period(at(1100), 0); got != 215 {
		t.Fatalf("mean %d ms, want 215", got)
	}
	// Steady work, one 300 ms task after another on one slot, with
	// reports every 200 ms that end mid-task: the estimate settles near
	// 300, swinging a little with how many tasks end in each period.
	var got uint64
	for ms := 1100; ms <= 1100+18000; ms += 100 {
		if (ms-1100)%300 == 0 { // one task ends (none at first), the next starts
			finished := 1
			if ms == 1100 {
				finished = 0
			}
			c.observe(at(ms), 1, finished)
		}
		if (ms-1100)%200 == 0 {
			got = c.period(at(ms), 1)
			if ms > 1100+12000 && (got < 280 || got > 320) { // settled after 60 periods
				t.Fatalf("at %d ms, steady 300 ms tasks estimated at %d ms", ms, got)
			}
		}
	}
	if got < 280 || got > 320 {
		t.Fatalf("steady 300 ms tasks estimated at %d ms", got)
	}
	// A time read before the lock that trails the last change adds
	// nothing rather than going backwards.
	c.observe(at(1200), 1, 0)
	c.observe(at(1150), 0, 1)
	if c.busy != 0 {
		t.Fatalf("busy %v after a trailing time, want 0", c.busy)
	}
}
