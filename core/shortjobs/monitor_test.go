package shortjobs

import (
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// TestMonitorLifecycle walks a node monitor through a short and a long
// job's reservations and checks the queue order and the advert changes.
func TestMonitorLifecycle(t *testing.T) {
	m := NewMonitor(Config{Cutoff: 10, StarveLimit: 8})
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
