package queue

import (
	"fmt"
	"slices"
	"testing"
)

func TestFIFOOrder(t *testing.T) {
	tests := []orderCase{
		{
			name: "arrival order across users and priorities",
			push: rvs("b1", "a1 p=-5", "c1 p=9", "a2", "b2"),
			want: []string{"b1", "a1", "c1", "a2", "b2"},
		},
		{
			name:        "remove request from head middle and tail",
			push:        rvs("x1 r=R", "a1", "x2 r=R", "b1", "x3 r=R"),
			removeReqs:  []string{"R"},
			wantRemoved: 3,
			want:        []string{"a1", "b1"},
		},
		{
			name:        "remove app",
			push:        rvs("a1 app=spark", "b1 app=impala", "a2 app=spark", "c1 app=impala"),
			removeApps:  []string{"impala"},
			wantRemoved: 2,
			want:        []string{"a1", "a2"},
		},
		{
			name:        "remove request then app overlapping",
			push:        rvs("a1 r=R app=S", "a2 r=R app=T", "b1 r=Q app=S", "b2 r=Q app=T"),
			removeReqs:  []string{"R", "R", "missing"},
			removeApps:  []string{"S", "S"},
			wantRemoved: 3,
			want:        []string{"b2"},
		},
		{
			name:        "remove everything",
			push:        rvs("a1 r=R", "a2 r=R"),
			removeReqs:  []string{"R"},
			wantRemoved: 2,
			want:        nil,
		},
		{
			name:        "empty app and request ids are ordinary keys",
			push:        rvs("a1 r= app=", "a2 r=R app=", "a3 r= app=A"),
			removeReqs:  []string{""},
			wantRemoved: 2,
			want:        []string{"a2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runOrderCase(t, NewFIFO(), tc)
		})
	}
}

func TestFIFOZeroValueAndInterleaving(t *testing.T) {
	var f FIFO // the zero value is usable
	f.Push(rv("a1"))
	f.Push(rv("a2"))
	if r, _ := f.Pop(); r.Scheduler != "a1" {
		t.Fatalf("Pop = %s, want a1", r.Scheduler)
	}
	f.Push(rv("a3 r=X"))
	f.Push(rv("a4"))
	if n := f.RemoveRequest("X"); n != 1 {
		t.Fatalf("RemoveRequest = %d", n)
	}
	if got := drain(t, &f); !slices.Equal(got, []string{"a2", "a4"}) {
		t.Fatalf("order %v", got)
	}
	// Reuse after draining.
	f.Push(rv("b1"))
	if got := drain(t, &f); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("order %v", got)
	}
}

// TestFIFOHeadTag checks that HeadTag names the reservation the next Pop
// returns, in the inline ring, a pooled ring and the linked form, with
// pushes and pops interleaved so that the head wraps around the ring.
func TestFIFOHeadTag(t *testing.T) {
	cases := []struct {
		name   string
		pooled bool
		push   int // reservations pushed before draining
		popMid int // reservations popped, then as many pushed again, before draining
	}{
		{name: "empty"},
		{name: "one", push: 1},
		{name: "inline ring wraps", push: smallRing, popMid: smallRing - 2},
		{name: "own ring", push: ringMax, popMid: 5},
		{name: "pooled ring", pooled: true, push: ringMax - 1, popMid: 3},
		{name: "linked", push: 2*ringMax + 3, popMid: 7},
		{name: "pooled linked", pooled: true, push: ringMax + 1, popMid: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f FIFO
			var pool RingPool
			if tc.pooled {
				f.SetRingPool(&pool)
			}
			next := uint64(1)
			push := func(k int) {
				for range k {
					f.Push(Reservation{RequestID: fmt.Sprintf("r%d", next%3), App: "a", Tag: next})
					next++
				}
			}
			popChecked := func() bool {
				head, okHead := f.HeadTag()
				r, ok := f.Pop()
				if ok != okHead || (ok && r.Tag != head) {
					t.Fatalf("HeadTag = (%d, %v), then Pop = (%d, %v)", head, okHead, r.Tag, ok)
				}
				return ok
			}
			push(tc.push)
			for range tc.popMid {
				popChecked()
			}
			push(tc.popMid)
			popped := 0
			for popChecked() {
				popped++
			}
			if want := tc.push; popped != want {
				t.Fatalf("drained %d, want %d", popped, want)
			}
		})
	}
}

// PushFrom and PopInto are Push and Pop through pointers: the same
// reservations come out in the same order, in the ring and once the queue
// has outgrown it, with and without a ring pool, and PopInto leaves its
// target alone when the queue is empty.
func TestFIFOPushFromPopInto(t *testing.T) {
	for _, pooled := range []bool{false, true} {
		var byValue, byPointer FIFO
		if pooled {
			byValue.SetRingPool(&RingPool{})
			byPointer.SetRingPool(&RingPool{})
		}
		var r Reservation
		for round, n := range []int{3, ringMax + 5, 1, 2 * ringMax} {
			for i := range n {
				in := Reservation{
					RequestID: fmt.Sprintf("r%d-%d", round, i), App: "a", User: fmt.Sprintf("u%d", i%3),
					Priority: int32(i % 2), Scheduler: "s", Tag: uint64(i),
				}
				byValue.Push(in)
				byPointer.PushFrom(&in)
			}
			for i := range n {
				want, ok := byValue.Pop()
				if !ok || !byPointer.PopInto(&r) || r != want {
					t.Fatalf("pooled %v, round %d, pop %d: PopInto gave %+v, Pop %+v (%v)", pooled, round, i, r, want, ok)
				}
			}
		}
		kept := r
		if byPointer.PopInto(&r) || r != kept {
			t.Fatalf("pooled %v: PopInto on an empty queue returned true or changed its target to %+v", pooled, r)
		}
	}
}
