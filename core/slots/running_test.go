package slots

import (
	"cmp"
	"slices"
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// TestFailAppReturnsReservations checks that FailApp hands back each
// failed task with the exact reservation it was started for, whether that
// reservation is only its request and app or carries more, after slots of
// the rarer kind have been freed and reused.
func TestFailAppReturnsReservations(t *testing.T) {
	full := func(req, user string, tag uint64) queue.Reservation {
		return queue.Reservation{RequestID: req, App: "a", User: user, Group: "g", Priority: 2, Scheduler: "s:1", Tag: tag}
	}
	tests := []struct {
		name  string
		start []RunningTask
		end   []TaskKey // finished before FailApp
		want  []RunningTask
	}{
		{
			name:  "request and app only",
			start: []RunningTask{{Key: TaskKey{"r", "0"}, Reservation: queue.Reservation{RequestID: "r", App: "a"}}},
			want:  []RunningTask{{Key: TaskKey{"r", "0"}, Reservation: queue.Reservation{RequestID: "r", App: "a"}}},
		},
		{
			name: "full reservations, one slot reused",
			start: []RunningTask{
				{Key: TaskKey{"r", "0"}, Reservation: full("r", "ann", 7)},
				{Key: TaskKey{"q", "1"}, Reservation: full("q", "bob", 8)},
				{Key: TaskKey{"p", "2"}, Reservation: queue.Reservation{RequestID: "other", App: "a"}},
			},
			end: []TaskKey{{"r", "0"}},
			want: []RunningTask{
				{Key: TaskKey{"q", "1"}, Reservation: full("q", "bob", 8)},
				{Key: TaskKey{"p", "2"}, Reservation: queue.Reservation{RequestID: "other", App: "a"}},
				{Key: TaskKey{"z", "3"}, Reservation: full("z", "cat", 9)},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(8, queue.NewFIFO())
			if err != nil {
				t.Fatal(err)
			}
			c.AddApp("a")
			start := func(rt RunningTask) {
				if err := c.Enqueue(rt.Reservation, 1); err != nil {
					t.Fatal(err)
				}
				r, ok := c.Next()
				if !ok || !c.Start(rt.Key, r) {
					t.Fatalf("could not start %v", rt.Key)
				}
			}
			for _, rt := range tc.start {
				start(rt)
			}
			for _, k := range tc.end {
				if !c.Finished(k) {
					t.Fatalf("Finished(%v) = false", k)
				}
			}
			if len(tc.end) > 0 {
				start(tc.want[len(tc.want)-1])
			}
			got := c.FailApp("a")
			key := func(a, b RunningTask) int { return cmpKey(a.Key, b.Key) }
			slices.SortFunc(got, key)
			want := slices.SortedFunc(slices.Values(tc.want), key)
			if !slices.Equal(got, want) {
				t.Fatalf("FailApp = %+v, want %+v", got, want)
			}
			if c.Running() != 0 || c.Free() != 8 {
				t.Fatalf("after FailApp: %d running, %d free", c.Running(), c.Free())
			}
		})
	}
}

func cmpKey(a, b TaskKey) int {
	return cmp.Or(cmp.Compare(a.RequestID, b.RequestID), cmp.Compare(a.TaskID, b.TaskID))
}
