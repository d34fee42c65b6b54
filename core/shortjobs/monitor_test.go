package shortjobs

import (
	"fmt"
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// TestMonitorLifecycle walks a node monitor through a short and a long
// job's reservations and checks the queue order and the advert changes.
func TestMonitorLifecycle(t *testing.T) {
	m := NewMonitor(Config{Cutoff: 10, StarveLimit: 8}, 1)
	q := m.Queue()
	res := func(id string) queue.Reservation { return queue.Reservation{RequestID: id} }
	steps := []struct {
		name    string
		do      func() bool
		changed bool
		long    int
	}{
		{"queue a long and a short job", func() bool {
			q.Push(res("L"))
			m.Queued("L", 1000)
			q.Push(res("S"))
			q.Push(res("S"))
			m.Queued("S", 4)
			return false
		}, false, 0},
		{"short served first, fetching", func() bool {
			if r, _ := q.Pop(); r.RequestID != "S" {
				t.Fatalf("served %s first", r.RequestID)
			}
			return m.Fetching(Short)
		}, false, 0},
		{"short task launched, one left", func() bool { m.Launched("S", 1, 2); return false }, false, 0},
		{"short task ends: sticky ahead of the queued short one", func() bool {
			ch := m.Ended(Short, 1, res("S-sticky"))
			if r, _ := q.Pop(); r.RequestID != "S-sticky" {
				t.Fatalf("served %s, want the sticky reservation", r.RequestID)
			}
			return ch
		}, false, 0},
		{"sticky fetch got nothing", func() bool { return m.NoTask(Short) }, false, 0},
		{"queued short, then long fetched", func() bool {
			if r, _ := q.Pop(); r.RequestID != "S" {
				t.Fatalf("served %s, want S", r.RequestID)
			}
			if r, _ := q.Pop(); r.RequestID != "L" {
				t.Fatalf("served %s, want L", r.RequestID)
			}
			return m.Fetching(Long)
		}, true, 1},
		{"long launched, last task", func() bool { m.Launched("L", 0, 500); return false }, false, 1},
		{"long ends with nothing left: no sticky", func() bool { return m.Ended(Long, 0, res("L")) }, true, 0},
		{"long fetch without a task", func() bool { m.Fetching(Long); return m.NoTask(Long) }, true, 0},
	}
	for _, s := range steps {
		if got := s.do(); got != s.changed {
			t.Fatalf("%s: advert changed %v, want %v", s.name, got, s.changed)
		}
		if m.LongWork() != s.long {
			t.Fatalf("%s: long work %d, want %d", s.name, m.LongWork(), s.long)
		}
	}
	if q.Len() != 0 || m.Advert() != 0 {
		t.Fatalf("queue %d, advert %d at the end", q.Len(), m.Advert())
	}
}

// A node's queue bounds pass-overs per slot: an old reservation with much
// work waits behind younger short ones for StarveLimit·slots pops.
func TestMonitorStarveLimitPerSlot(t *testing.T) {
	tests := []struct {
		perSlot, slots int
		wantAt         int // the Pop, from 1, that serves the old reservation
	}{
		{2, 1, 3}, {2, 4, 9}, {3, 5, 16}, {1, 1, 2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%dx%d", tc.perSlot, tc.slots), func(t *testing.T) {
			m := NewMonitor(Config{Cutoff: 10, StarveLimit: tc.perSlot}, tc.slots)
			q := m.Queue()
			q.Push(queue.Reservation{RequestID: "old"})
			m.Queued("old", 1e6)
			for i := range 2 * tc.wantAt {
				id := fmt.Sprint("s", i)
				q.Push(queue.Reservation{RequestID: id})
				m.Queued(id, 1)
			}
			for pop := 1; ; pop++ {
				r, ok := q.Pop()
				if !ok {
					t.Fatal("old reservation never served")
				}
				if r.RequestID == "old" {
					if pop != tc.wantAt {
						t.Fatalf("served at pop %d, want %d", pop, tc.wantAt)
					}
					return
				}
			}
		})
	}
}
