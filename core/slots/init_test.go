package slots

import (
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

// TestInitMatchesNew checks that a Core initialised in place behaves as one
// from New, including their refusals, and that the reservation Tag survives
// Enqueue and Next.
func TestInitMatchesNew(t *testing.T) {
	tests := []struct {
		name    string
		slots   int
		q       queue.Discipline
		wantErr bool
	}{
		{name: "one slot", slots: 1, q: queue.NewFIFO()},
		{name: "four slots fair", slots: 4, q: mustQueue(t, "fair")},
		{name: "zero slots", slots: 0, q: queue.NewFIFO(), wantErr: true},
		{name: "nil queue", slots: 1, q: nil, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Several Cores side by side in one slice, as a simulator
			// lays them out.
			cores := make([]Core, 3)
			var q2 queue.Discipline
			if tc.q != nil {
				q2 = mustQueue(t, "fifo")
				if _, fair := tc.q.(*queue.Fair); fair {
					q2 = mustQueue(t, "fair")
				}
			}
			errInit := cores[1].Init(tc.slots, tc.q)
			fresh, errNew := New(tc.slots, q2)
			if (errInit != nil) != tc.wantErr || (errNew != nil) != tc.wantErr {
				t.Fatalf("Init error %v, New error %v, want error %v", errInit, errNew, tc.wantErr)
			}
			if tc.wantErr {
				if errInit.Error() != errNew.Error() {
					t.Fatalf("Init error %q, New error %q", errInit, errNew)
				}
				return
			}
			c := &cores[1]
			for _, x := range []*Core{c, fresh} {
				x.AddApp("a")
				x.AddApp("b")
			}
			for i, step := range []struct {
				app string
				n   int
				tag uint64
			}{{"a", 2, 7}, {"b", 1, 9}, {"zz", 1, 1}, {"a", 1, 11}} {
				r := res("r", step.app)
				r.Tag = step.tag
				e1, e2 := c.Enqueue(r, step.n), fresh.Enqueue(r, step.n)
				if (e1 == nil) != (e2 == nil) {
					t.Fatalf("step %d: Enqueue errors %v vs %v", i, e1, e2)
				}
			}
			for i := 0; ; i++ {
				r1, ok1 := c.Next()
				r2, ok2 := fresh.Next()
				if ok1 != ok2 || r1 != r2 {
					t.Fatalf("Next %d: (%+v, %v) vs (%+v, %v)", i, r1, ok1, r2, ok2)
				}
				if !ok1 {
					break
				}
				if r1.Tag == 0 {
					t.Fatalf("Next %d: tag lost: %+v", i, r1)
				}
				key := TaskKey{RequestID: r1.RequestID, TaskID: string(rune('0' + i))}
				if c.Start(key, r1) != fresh.Start(key, r2) {
					t.Fatalf("Start %d differs", i)
				}
			}
			if snap(c) != snap(fresh) {
				t.Fatalf("state %+v, New's %+v", snap(c), snap(fresh))
			}
			if !c.Finished(TaskKey{RequestID: "r", TaskID: "0"}) || c.Finished(TaskKey{RequestID: "r", TaskID: "0"}) {
				t.Fatal("Finished of a running task must succeed once")
			}
			// Removing the first app keeps the second usable.
			c.RemoveApp("a")
			if err := c.Enqueue(res("s", "b"), 1); err != nil {
				t.Fatalf("Enqueue for the remaining app: %v", err)
			}
			if err := c.Enqueue(res("s", "a"), 1); err == nil {
				t.Fatal("Enqueue for a removed app accepted")
			}
		})
	}
}

func mustQueue(t *testing.T, kind string) queue.Discipline {
	t.Helper()
	q, err := queue.New(kind, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
