package queue

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestFairOrder(t *testing.T) {
	tests := []orderCase{
		{
			name: "equal weights round robin by head arrival",
			push: rvs("a1", "a2", "b1", "b2", "c1", "c2"),
			want: []string{"a1", "b1", "c1", "a2", "b2", "c2"},
		},
		{
			name: "single user is FIFO",
			push: rvs("a1", "a2", "a3"),
			want: []string{"a1", "a2", "a3"},
		},
		{
			// Tags: a advances by 1, b by 1/2; ties go to the older head.
			name:    "weights 1:2",
			weights: map[string]float64{"a": 1, "b": 2},
			push:    rvs(cat(seq("a", 1, 3), seq("b", 1, 6))...),
			want:    strings.Fields("a1 b1 b2 a2 b3 b4 a3 b5 b6"),
		},
		{
			name:    "weights 1:4 with later-arriving light user",
			weights: map[string]float64{"a": 1, "b": 4},
			push:    rvs(cat(seq("b", 1, 8), seq("a", 1, 3))...),
			want:    strings.Fields("b1 a1 b2 b3 b4 b5 a2 b6 b7 b8 a3"),
		},
		{
			name:        "remove request spanning users",
			push:        rvs("a1 r=X", "a2", "b1 r=X", "b2", "a3"),
			removeReqs:  []string{"X"},
			wantRemoved: 2,
			want:        []string{"a2", "b2", "a3"},
		},
		{
			// Removing unserved reservations must not charge the user: a
			// keeps start tag 0 and still goes first.
			name:        "removal does not charge",
			push:        rvs(cat(rvSpecs(seq("a", 1, 2), "r=X"), seq("a", 3, 4), seq("b", 1, 4))...),
			removeReqs:  []string{"X"},
			wantRemoved: 2,
			want:        strings.Fields("a3 b1 a4 b2 b3 b4"),
		},
		{
			name:        "remove app mid-queue",
			push:        rvs("a1 app=S", "a2", "b1 app=S", "b2", "c1", "c2 app=S"),
			removeApps:  []string{"S"},
			wantRemoved: 3,
			want:        []string{"a2", "b2", "c1"},
		},
		{
			name:        "remove a whole user then others",
			push:        rvs("a1 app=S", "a2 app=S", "b1", "b2"),
			removeApps:  []string{"S"},
			removeReqs:  []string{"b2"},
			wantRemoved: 3,
			want:        []string{"b1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runOrderCase(t, mustFair(t, 1, tc.weights), tc)
		})
	}
}

// rvSpecs appends extra fields to each label.
func rvSpecs(labels []string, extra string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = l + " " + extra
	}
	return out
}

func TestFairWeightChangeExactOrder(t *testing.T) {
	f := mustFair(t, 1, nil)
	pushAll(f, rvs(cat(seq("a", 1, 5), seq("b", 1, 8))...))
	var got []string
	for range 4 {
		r, _ := f.Pop()
		got = append(got, r.Scheduler)
	}
	if err := f.SetWeight("b", 4); err != nil {
		t.Fatal(err)
	}
	got = append(got, drain(t, f)...)
	// b is charged 1/4 from its very next pop on, and its lead of one pop
	// (b2, charged 1) becomes one pop at weight 4 (1/4): b3-b5 go before
	// a3, which ties with b6 and arrived first.
	want := strings.Fields("a1 b1 a2 b2 b3 b4 b5 a3 b6 b7 b8 a4 a5")
	if !slices.Equal(got, want) {
		t.Fatalf("order\n got %v\nwant %v", got, want)
	}
}

// backlogRun keeps every user in users backlogged (refilling each user's
// queue after every pop of theirs) and counts pops per user. before, when
// non-nil, runs ahead of each pop with the pop number.
func backlogRun(d Discipline, users []string, prio map[string]int32, pops int, before func(i int)) map[string]int {
	next := map[string]int{}
	push := func(u string) {
		next[u]++
		d.Push(Reservation{User: u, RequestID: fmt.Sprintf("%s-%d", u, next[u]), App: "app", Priority: prio[u]})
	}
	for _, u := range users {
		for range 4 {
			push(u)
		}
	}
	counts := map[string]int{}
	for i := range pops {
		if before != nil {
			before(i)
		}
		r, ok := d.Pop()
		if !ok {
			panic("backlogged queue ran empty")
		}
		counts[r.User]++
		if _, tracked := next[r.User]; tracked {
			push(r.User)
		}
	}
	return counts
}

// checkShares asserts each user's share of pops is within 2% (relative) of
// weight / sum(weights).
func checkShares(t *testing.T, counts map[string]int, weights map[string]float64, pops int) {
	t.Helper()
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	for u, w := range weights {
		want := w / sum
		got := float64(counts[u]) / float64(pops)
		if math.Abs(got-want) > 0.02*want {
			t.Errorf("user %s share %.4f, want %.4f ±2%% (counts %v)", u, got, want, counts)
		}
	}
}

var shareCases = []struct {
	name    string
	weights map[string]float64
}{
	{"1:2:3", map[string]float64{"u1": 1, "u2": 2, "u3": 3}},
	{"1:3", map[string]float64{"x": 1, "y": 3}},
	{"equal", map[string]float64{"p": 1, "q": 1, "r": 1, "s": 1}},
	{"5:1:1:1", map[string]float64{"big": 5, "s1": 1, "s2": 1, "s3": 1}},
	{"fractional", map[string]float64{"half": 0.5, "odd": 1.7, "third": 1.0 / 3}},
}

func sortedUsers(w map[string]float64) []string {
	var us []string
	for u := range w {
		us = append(us, u)
	}
	slices.Sort(us)
	return us
}

func TestFairLongRunShares(t *testing.T) {
	const pops = 60000
	for _, tc := range shareCases {
		t.Run(tc.name, func(t *testing.T) {
			f := mustFair(t, 1, tc.weights)
			counts := backlogRun(f, sortedUsers(tc.weights), nil, pops, nil)
			checkShares(t, counts, tc.weights, pops)
			checkBounds(t, f)
		})
	}
}

func TestFairWeightChangeMidRun(t *testing.T) {
	f := mustFair(t, 1, nil)
	users := []string{"a", "b"}
	counts := backlogRun(f, users, nil, 10000, nil)
	checkShares(t, counts, map[string]float64{"a": 1, "b": 1}, 10000)

	// Carry on with the same queues (backlogRun tops them up, so both
	// stay backlogged) after tripling a's weight.
	if err := f.SetWeight("a", 3); err != nil {
		t.Fatal(err)
	}
	counts = backlogRun(f, users, nil, 40000, nil)
	checkShares(t, counts, map[string]float64{"a": 3, "b": 1}, 40000)

	// And it applies immediately: the very next 40 pops are already 3:1,
	// within the one-pop lag SFQ allows.
	if err := f.SetWeight("a", 1); err != nil {
		t.Fatal(err)
	}
	if err := f.SetWeight("b", 3); err != nil {
		t.Fatal(err)
	}
	first := backlogRun(f, users, nil, 40, nil)
	if first["b"] < 29 || first["b"] > 31 {
		t.Fatalf("first 40 pops after weight change: %v, want b≈30", first)
	}
}

// TestFairIdleUserNoBurst: a user arriving (or returning after a long idle
// spell) while another user has been served for a long time must get only
// its share from then on, not a catch-up burst.
func TestFairIdleUserNoBurst(t *testing.T) {
	tests := []struct {
		name      string
		weights   map[string]float64
		wasActive bool // b had been active long before going idle
	}{
		{"new user equal weights", nil, false},
		{"returning user equal weights", nil, true},
		{"new user weight 3", map[string]float64{"b": 3}, false},
		{"returning user weight 1 vs 4", map[string]float64{"a": 4}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := mustFair(t, 1, tc.weights)
			if tc.wasActive {
				pushAll(f, rvs("b1", "b2", "a1"))
				for range 3 {
					f.Pop()
				}
			}
			// a alone for a long time.
			for i := range 5000 {
				f.Push(Reservation{User: "a", RequestID: fmt.Sprint("a", i)})
			}
			for range 2000 {
				f.Pop()
			}
			for i := range 1000 {
				f.Push(Reservation{User: "b", RequestID: fmt.Sprint("b", i)})
			}
			share := f.Weight("b") / (f.Weight("a") + f.Weight("b"))
			nb := 0
			for k := 1; k <= 400; k++ {
				r, _ := f.Pop()
				if r.User == "b" {
					nb++
				}
				if limit := math.Ceil(float64(k)*share) + 1; float64(nb) > limit {
					t.Fatalf("after %d pops b got %d > %v: burst beyond share %.2f", k, nb, limit, share)
				}
				if floor := math.Floor(float64(k)*share) - 1; float64(nb) < floor {
					t.Fatalf("after %d pops b got %d < %v: starved below share %.2f", k, nb, floor, share)
				}
			}
		})
	}
}

// TestFairTrickleUser: a user that keeps exactly one reservation queued goes
// empty after each of its pops. It must still get only its weighted share,
// not win every pop by re-entering at the current virtual time.
func TestFairTrickleUser(t *testing.T) {
	const pops = 40000
	tests := []struct {
		name    string
		weights map[string]float64
	}{
		{"trickle weight 1 vs 3", map[string]float64{"bulk": 3, "trickle": 1}},
		{"trickle weight 1 vs 1", map[string]float64{"bulk": 1, "trickle": 1}},
		{"trickle weight 4 vs 1", map[string]float64{"bulk": 1, "trickle": 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := mustFair(t, 1, tc.weights)
			for i := range pops {
				f.Push(Reservation{User: "bulk", RequestID: fmt.Sprint("bulk", i)})
			}
			f.Push(Reservation{User: "trickle", RequestID: "t"})
			counts := map[string]int{}
			for range pops {
				r, _ := f.Pop()
				counts[r.User]++
				if r.User == "trickle" {
					f.Push(Reservation{User: "trickle", RequestID: "t"})
				}
				checkBoundsCheap(t, f)
			}
			checkShares(t, counts, tc.weights, pops)
		})
	}
}

// checkBoundsCheap checks only the O(1) part of the memory invariants, for
// use inside long loops.
func checkBoundsCheap(t *testing.T, f *Fair) {
	t.Helper()
	if len(f.idle.fs) > f.n || len(f.flows) != len(f.active.fs)+len(f.idle.fs) {
		t.Fatalf("idle %d active %d flows %d with Len %d", len(f.idle.fs), len(f.active.fs), len(f.flows), f.n)
	}
}

// TestFairRenormalize uses tiny weights so the virtual clock crosses the
// renormalisation threshold many times, and checks shares survive it.
func TestFairRenormalize(t *testing.T) {
	const pops = 60000
	weights := map[string]float64{"a": 1e-3, "b": 3e-3}
	f := mustFair(t, 1e-3, weights)
	renorms := 0
	last := 0.0
	counts := backlogRun(f, []string{"a", "b"}, nil, pops, func(int) {
		if f.vtime < last {
			renorms++
		}
		last = f.vtime
		if f.vtime >= renormAt {
			t.Fatalf("vtime %v not renormalised", f.vtime)
		}
	})
	if renorms < 10 {
		t.Fatalf("only %d renormalisations; test does not exercise them", renorms)
	}
	checkShares(t, counts, weights, pops)
}

// TestFairIdleMemoryCap: remembered idle users never outnumber queued
// reservations, and are forgotten once the virtual clock passes them.
func TestFairIdleMemoryCap(t *testing.T) {
	f := mustFair(t, 1, map[string]float64{"bulk": 1000})
	for i := range 100 {
		f.Push(Reservation{User: "bulk", RequestID: fmt.Sprint("bulk", i)})
	}
	// 50 one-shot users, each served once: each leaves a finish tag ahead
	// of the clock.
	for i := range 50 {
		f.Push(Reservation{User: fmt.Sprint("once", i), RequestID: "o"})
	}
	for range 50 {
		f.Pop()
		checkBounds(t, f)
	}
	if len(f.idle.fs) == 0 {
		t.Fatal("expected remembered idle users")
	}
	for f.Len() > 0 {
		f.Pop()
		checkBounds(t, f)
	}
	if len(f.flows) != 0 || f.vtime != 0 {
		t.Fatalf("drained queue keeps %d users, vtime %v", len(f.flows), f.vtime)
	}
}

// TestFairExtremeWeights: the smallest and largest weights CheckWeight
// accepts must keep every tag finite (no Inf/NaN poisoning the clock) and
// still order users sensibly.
func TestFairExtremeWeights(t *testing.T) {
	weights := map[string]float64{"tiny": 1e-308, "huge": 1e308, "one": 1}
	f := mustFair(t, 1, weights)
	const per = 100
	for i := range per {
		for _, u := range []string{"tiny", "huge", "one"} {
			f.Push(Reservation{User: u, RequestID: fmt.Sprint(u, i)})
		}
	}
	var order []string
	for f.Len() > 0 {
		r, _ := f.Pop()
		order = append(order, r.User)
		for _, fl := range slices.Concat(f.active.fs, f.idle.fs) {
			if math.IsInf(fl.tag, 0) || math.IsNaN(fl.tag) {
				t.Fatalf("user %s tag %v after %d pops", fl.user, fl.tag, len(order))
			}
		}
		if math.IsInf(f.vtime, 0) || math.IsNaN(f.vtime) {
			t.Fatalf("vtime %v", f.vtime)
		}
		checkBounds(t, f)
	}
	// All start at tag 0 and tie, so heads go oldest first: tiny, huge,
	// one. huge's charge of 1e-308 is tiny but nonzero, so one (still at
	// 0) goes next; then huge drains, then one, and tiny (charged 1e308)
	// waits for everyone.
	want := slices.Concat([]string{"tiny", "huge", "one"},
		slices.Repeat([]string{"huge"}, per-1),
		slices.Repeat([]string{"one"}, per-1),
		slices.Repeat([]string{"tiny"}, per-1))
	if !slices.Equal(order, want) {
		t.Fatalf("order %v", order)
	}
	// tiny alone, served repeatedly: its clock jumps by 1e308 per pop.
	for i := range 10 {
		f.Push(Reservation{User: "tiny", RequestID: fmt.Sprint("again", i)})
	}
	for f.Len() > 0 {
		f.Pop()
		if math.IsInf(f.vtime, 0) || math.IsNaN(f.vtime) {
			t.Fatalf("vtime %v", f.vtime)
		}
	}
}
