package queue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestPriorityOrder(t *testing.T) {
	tests := []orderCase{
		{
			name: "smallest priority first, FIFO within a priority",
			push: rvs("l1 p=5", "l2 p=5", "h1 p=1", "m1 p=3", "h2 p=1", "n1 p=-1"),
			want: []string{"n1", "h1", "h2", "m1", "l1", "l2"},
		},
		{
			// Same 1:2 pattern as Fair, with a less urgent user queued first.
			name:    "weighted fair within a priority",
			weights: map[string]float64{"a": 1, "b": 2},
			push:    rvs(cat([]string{"c1 p=1", "c2 p=1"}, seq("a", 1, 3), seq("b", 1, 6))...),
			want:    strings.Fields("a1 b1 b2 a2 b3 b4 a3 b5 b6 c1 c2"),
		},
		{
			name:    "fair inside each level independently",
			weights: map[string]float64{"a": 1, "b": 1},
			push:    rvs("a1 p=2", "a2 p=2", "b1 p=2", "a3 p=0", "a4 p=0", "b2 p=0"),
			want:    strings.Fields("a3 b2 a4 a1 b1 a2"),
		},
		{
			name:        "remove request across levels",
			push:        rvs("x1 r=R p=0", "x2 r=R p=2", "a1 p=2", "b1 p=0", "x3 r=R p=1"),
			removeReqs:  []string{"R"},
			wantRemoved: 3,
			want:        []string{"b1", "a1"},
		},
		{
			name:        "remove app across levels and users",
			push:        rvs("a1 app=S p=1", "b1 p=1", "a2 app=S p=0", "c1 app=S p=0", "c2 p=0"),
			removeApps:  []string{"S"},
			wantRemoved: 3,
			want:        []string{"c2", "b1"},
		},
		{
			name:        "remove empties the most urgent level",
			push:        rvs("h1 r=H p=0", "h2 r=H p=0", "l1 p=9", "l2 p=9"),
			removeReqs:  []string{"H"},
			wantRemoved: 2,
			want:        []string{"l1", "l2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runOrderCase(t, mustPriority(t, 1, tc.weights), tc)
		})
	}
}

// TestPriorityInterleaved: a more urgent reservation arriving later is
// served at the next Pop, ahead of everything already queued.
func TestPriorityInterleaved(t *testing.T) {
	p := mustPriority(t, 1, nil)
	var got []string
	pop := func() {
		r, ok := p.Pop()
		if !ok {
			t.Fatal("unexpected empty")
		}
		got = append(got, r.Scheduler)
	}
	pushAll(p, rvs("l1 p=2", "l2 p=2", "l3 p=2"))
	pop()
	p.Push(rv("h1 p=0"))
	pop()
	pop()
	pushAll(p, rvs("m1 p=1", "h2 p=0"))
	got = append(got, drain(t, p)...)
	want := strings.Fields("l1 h1 l2 h2 m1 l3")
	if !slices.Equal(got, want) {
		t.Fatalf("order\n got %v\nwant %v", got, want)
	}
	checkBounds(t, p)
	if len(p.levels) != 0 {
		t.Fatalf("drained queue keeps %d levels", len(p.levels))
	}
}

// TestPriorityStrictAndFair: with a misbehaving low-priority user always
// backlogged (§7.6), high-priority users are served exclusively, and share
// among themselves by weight.
func TestPriorityStrictAndFair(t *testing.T) {
	const pops = 60000
	for _, tc := range shareCases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustPriority(t, 1, tc.weights)
			users := sortedUsers(tc.weights)
			prio := map[string]int32{}
			for _, u := range users {
				prio[u] = 1
			}
			for i := range 100 {
				p.Push(Reservation{User: "hog", RequestID: fmt.Sprint("hog", i), Priority: 2})
			}
			counts := backlogRun(p, users, prio, pops, nil)
			if counts["hog"] != 0 {
				t.Fatalf("low priority served %d times while higher priority was queued", counts["hog"])
			}
			checkShares(t, counts, tc.weights, pops)
			checkBounds(t, p)
			// Once the urgent users go away the low priority is served.
			for _, u := range users {
				for i := 1; i <= 4+counts[u]; i++ {
					p.RemoveRequest(fmt.Sprintf("%s-%d", u, i))
				}
			}
			if p.Len() != 100 {
				t.Fatalf("Len = %d, want only the 100 hog reservations", p.Len())
			}
			if r, _ := p.Pop(); r.User != "hog" {
				t.Fatalf("popped %+v, want hog", r)
			}
		})
	}
}

// TestPrioritySharedWeights: one SetWeight applies at every priority.
func TestPrioritySharedWeights(t *testing.T) {
	const pops = 20000
	p := mustPriority(t, 1, nil)
	if err := p.SetWeight("b", 3); err != nil {
		t.Fatal(err)
	}
	for _, level := range []int32{0, 7} {
		prio := map[string]int32{"a": level, "b": level}
		counts := backlogRun(p, []string{"a", "b"}, prio, pops, nil)
		checkShares(t, counts, map[string]float64{"a": 1, "b": 3}, pops)
		// Empty this level so the next one is the most urgent.
		for _, u := range []string{"a", "b"} {
			for i := 1; i <= 4+counts[u]; i++ {
				p.RemoveRequest(fmt.Sprintf("%s-%d", u, i))
			}
		}
		if p.Len() != 0 {
			t.Fatalf("Len = %d after clearing level %d", p.Len(), level)
		}
		checkBounds(t, p)
	}
}

// TestPriorityIdleUserNoBurst: within a level, a newcomer gets its share,
// not a burst.
func TestPriorityIdleUserNoBurst(t *testing.T) {
	p := mustPriority(t, 1, nil)
	for i := range 3000 {
		p.Push(Reservation{User: "a", RequestID: fmt.Sprint("a", i), Priority: 4})
	}
	for range 1000 {
		p.Pop()
	}
	for i := range 500 {
		p.Push(Reservation{User: "b", RequestID: fmt.Sprint("b", i), Priority: 4})
	}
	nb := 0
	for k := 1; k <= 200; k++ {
		if r, _ := p.Pop(); r.User == "b" {
			nb++
		}
		if nb > k/2+1 || nb < k/2-1 {
			t.Fatalf("after %d pops b got %d, want about half", k, nb)
		}
	}
}
