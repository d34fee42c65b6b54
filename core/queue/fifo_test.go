package queue

import (
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
