package queue

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestWeightChangeCarriesLeadInPops: service a user got at one weight
// counts as the same number of its pops at the next. A user served at a
// tiny floor weight while alone, whose weight is then raised to the
// others', shares the very next pops evenly instead of waiting until the
// others have caught up with a thousand-fold charge.
func TestWeightChangeCarriesLeadInPops(t *testing.T) {
	tests := []struct {
		name string
		// queue makes the discipline under test.
		queue func(t *testing.T) Discipline
		// aloneAt is a's weight while it is served alone aloneFor pops;
		// then b arrives and both get weight 1 (aThen for a).
		aloneAt  float64
		aloneFor int
		aThen    float64
		// over the next pops pops, a gets from aMin to aMax of them.
		pops, aMin, aMax int
	}{
		{name: "fair: floor weight raised", queue: func(t *testing.T) Discipline { return mustFair(t, 1, nil) },
			aloneAt: 1e-3, aloneFor: 5, aThen: 1, pops: 100, aMin: 45, aMax: 50},
		{name: "priority: floor weight raised", queue: func(t *testing.T) Discipline { return mustPriority(t, 1, nil) },
			aloneAt: 1e-3, aloneFor: 5, aThen: 1, pops: 100, aMin: 45, aMax: 50},
		{name: "choosy without guidance: floor weight raised", queue: func(t *testing.T) Discipline { return mustChoosy(t, 1, nil) },
			aloneAt: 1e-3, aloneFor: 5, aThen: 1, pops: 100, aMin: 45, aMax: 50},
		{name: "fair: raised to 3", queue: func(t *testing.T) Discipline { return mustFair(t, 1, nil) },
			aloneAt: 1e-3, aloneFor: 2, aThen: 3, pops: 100, aMin: 73, aMax: 76},
		{name: "fair: weight lowered after a lead at a high weight", queue: func(t *testing.T) Discipline { return mustFair(t, 1, nil) },
			aloneAt: 100, aloneFor: 50, aThen: 1, pops: 100, aMin: 49, aMax: 51},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.queue(t)
			w := q.(Weights)
			if err := w.SetWeight("a", tt.aloneAt); err != nil {
				t.Fatal(err)
			}
			// a alone: it keeps one reservation queued beyond each pop.
			for i := range tt.aloneFor + 1 {
				q.Push(Reservation{User: "a", RequestID: fmt.Sprintf("a-pre-%d", i), App: "app"})
			}
			for range tt.aloneFor {
				if r, ok := q.Pop(); !ok || r.User != "a" {
					t.Fatalf("pop %v %v, want a's", r, ok)
				}
			}
			if err := w.SetWeight("a", tt.aThen); err != nil {
				t.Fatal(err)
			}
			counts := backlogRun(q, []string{"a", "b"}, nil, tt.pops, nil)
			if counts["a"] < tt.aMin || counts["a"] > tt.aMax {
				t.Fatalf("a got %d of the next %d pops, want %d..%d (counts %v)", counts["a"], tt.pops, tt.aMin, tt.aMax, counts)
			}
		})
	}
}

// TestWeightChangeLeadProperty: with every user backlogged, no user's
// start tag is ever more than one of its own pops (1/weight) ahead of the
// virtual time, whatever weight changes come between pops. Leads carried
// across weight changes unscaled break this at the first raise after a
// pop at a small weight.
func TestWeightChangeLeadProperty(t *testing.T) {
	weights := []float64{1e-3, 0.5, 1, 3, 8, 16}
	for trial := range 200 {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		f := mustFair(t, 1, nil)
		users := []string{"a", "b", "c", "d", "e"}[:2+rng.IntN(4)]
		next := map[string]int{}
		push := func(u string) {
			next[u]++
			f.Push(Reservation{User: u, RequestID: fmt.Sprintf("%s-%d", u, next[u]), App: "app"})
		}
		for _, u := range users {
			push(u)
			push(u)
		}
		for step := range 400 {
			if rng.IntN(4) == 0 {
				u := users[rng.IntN(len(users))]
				if err := f.SetWeight(u, weights[rng.IntN(len(weights))]); err != nil {
					t.Fatal(err)
				}
			} else {
				r, ok := f.Pop()
				if !ok {
					t.Fatal("backlogged queue ran empty")
				}
				push(r.User)
			}
			for _, u := range users {
				fl := f.flows[u]
				if fl == nil {
					t.Fatalf("trial %d step %d: backlogged user %s has no flow", trial, step, u)
				}
				if lead, most := fl.tag-f.vtime, 1/f.Weight(u); lead > most*(1+1e-9) {
					t.Fatalf("trial %d step %d: %s leads the virtual time by %v, more than one pop (%v) at weight %v", trial, step, u, lead, most, f.Weight(u))
				}
			}
		}
	}
}

// TestWeightChangeIdleUser: an idle user remembered with a lead earned at
// a floor weight, raised to the others' weight, is served at its share
// as soon as it queues again.
func TestWeightChangeIdleUser(t *testing.T) {
	f := mustFair(t, 1, map[string]float64{"a": 1e-3})
	for i := range 3 {
		f.Push(Reservation{User: "c", RequestID: fmt.Sprintf("c-pre-%d", i), App: "app"})
	}
	f.Push(Reservation{User: "a", RequestID: "a-pre", App: "app"})
	// c's head arrived first; then a, at the lower start tag, is served
	// once and goes idle, 1000 ahead of the virtual time.
	for _, want := range []string{"c", "a"} {
		if r, ok := f.Pop(); !ok || r.User != want {
			t.Fatalf("pop %v %v, want %s's", r, ok, want)
		}
	}
	if err := f.SetWeight("a", 1); err != nil {
		t.Fatal(err)
	}
	counts := backlogRun(f, []string{"a", "c"}, nil, 20, nil)
	if counts["a"] < 9 {
		t.Fatalf("a got %d of 20 pops after its weight was raised, want about half", counts["a"])
	}
}

// TestWeightRaiseForgetsAnIdleUserWhoseLeadRoundsAway: an idle user is
// remembered only while its finish tag is ahead of the virtual time. A
// weight raised so far that its rescaled lead vanishes in rounding (2 +
// 1e-300 is 2) leaves it with no lead: it is forgotten, as it would be
// once the virtual time caught up.
func TestWeightRaiseForgetsAnIdleUserWhoseLeadRoundsAway(t *testing.T) {
	for _, kind := range []string{"fair", "priority", "choosy"} {
		t.Run(kind, func(t *testing.T) {
			q, err := New(kind, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				q.Push(Reservation{User: "b", RequestID: fmt.Sprintf("b%d", i), App: "app"})
			}
			// b's pops move the virtual time to 2; then a, new, starts
			// there and is served first, going idle with a lead of 1.
			for range 3 {
				if r, ok := q.Pop(); !ok || r.User != "b" {
					t.Fatalf("pop %v %v, want b's", r, ok)
				}
			}
			q.Push(Reservation{User: "a", RequestID: "a0", App: "app"})
			if r, ok := q.Pop(); !ok || r.User != "a" {
				t.Fatalf("pop %v %v, want a's", r, ok)
			}
			checkBounds(t, q)
			if err := q.(Weights).SetWeight("a", 1e300); err != nil {
				t.Fatal(err)
			}
			checkBounds(t, q)
		})
	}
}
