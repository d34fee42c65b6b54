package queue

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func mustChoosy(t testing.TB, def float64, w map[string]float64) *Choosy {
	t.Helper()
	c, err := NewChoosy(def, w)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChoosyOrder(t *testing.T) {
	tests := []struct {
		name    string
		weights map[string]float64
		running map[string]float64 // nil: no snapshot
		// launched are Launched calls after the snapshot, one per user
		// occurrence.
		launched []string
		push     []string
		want     []string
	}{
		{
			name: "lowest cluster-wide count first",
			// a holds 10 slots across the cluster, b 2: b is served while
			// it has work, although a's reservations arrived first.
			running: map[string]float64{"a": 10, "b": 2},
			push:    []string{"a1", "a2", "b1", "b2"},
			want:    []string{"b1", "b2", "a1", "a2"},
		},
		{
			name:    "a user absent from the snapshot has share 0",
			running: map[string]float64{"a": 1},
			push:    []string{"a1", "c1"},
			want:    []string{"c1", "a1"},
		},
		{
			name:    "weights divide counts",
			weights: map[string]float64{"a": 4},
			// a: 10/4 = 2.5 < b: 3/1.
			running: map[string]float64{"a": 10, "b": 3},
			push:    []string{"b1", "a1"},
			want:    []string{"a1", "b1"},
		},
		{
			name: "local launches since the snapshot count",
			// b starts lower but has launched 5 here since: 2+5 > 6.
			running:  map[string]float64{"a": 6, "b": 2},
			launched: []string{"b", "b", "b", "b", "b"},
			push:     []string{"b1", "a1"},
			want:     []string{"a1", "b1"},
		},
		{
			name:    "equal shares fall back to fair order",
			running: map[string]float64{"a": 3, "b": 3},
			push:    []string{"a1", "a2", "b1", "b2"},
			want:    []string{"a1", "b1", "a2", "b2"},
		},
		{
			name: "no snapshot: weighted fair queuing",
			push: []string{"a1", "a2", "b1", "b2"},
			want: []string{"a1", "b1", "a2", "b2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustChoosy(t, 1, tt.weights)
			if tt.running != nil {
				if ok, err := c.SetShares(1, tt.running); !ok || err != nil {
					t.Fatalf("SetShares = %v, %v", ok, err)
				}
			}
			for _, u := range tt.launched {
				c.Launched(u)
			}
			pushAll(c, rvs(tt.push...))
			if got := drain(t, c); !slices.Equal(got, tt.want) {
				t.Fatalf("order %v, want %v", got, tt.want)
			}
		})
	}
}

// TestChoosyWithoutSnapshotIsFair: without a coordinator, Choosy must
// serve exactly as the weighted fair queue does, on any sequence of pushes,
// pops and removals.
func TestChoosyWithoutSnapshotIsFair(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	weights := map[string]float64{"a": 1, "b": 2, "c": 0.5}
	users := []string{"a", "b", "c", "d"}
	for trial := range 50 {
		f, c := mustFair(t, 1, weights), mustChoosy(t, 1, weights)
		if trial%2 == 1 {
			// A snapshot that was cleared leaves no trace.
			c.SetShares(1, map[string]float64{"a": 100})
			c.Launched("b")
			c.ClearShares()
		}
		for step := range 200 {
			switch op := rng.IntN(10); {
			case op < 6:
				r := Reservation{User: users[rng.IntN(len(users))], RequestID: string(rune('A' + rng.IntN(5))), App: "app", Scheduler: string(rune('a' + step%26))}
				f.Push(r)
				c.Push(r)
			case op < 9:
				rf, okf := f.Pop()
				rc, okc := c.Pop()
				if rf != rc || okf != okc {
					t.Fatalf("trial %d step %d: Fair popped %+v %v, Choosy %+v %v", trial, step, rf, okf, rc, okc)
				}
			default:
				id := string(rune('A' + rng.IntN(5)))
				if nf, nc := f.RemoveRequest(id), c.RemoveRequest(id); nf != nc {
					t.Fatalf("RemoveRequest %s: Fair %d, Choosy %d", id, nf, nc)
				}
			}
		}
	}
}

// TestChoosyServesLowestShare is the paper's rule as a property (notes
// §6.3): each pop serves a backlogged user whose share is the lowest among
// the backlogged, and accounting its launch keeps every other backlogged
// user within one task of it.
func TestChoosyServesLowestShare(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	users := []string{"u0", "u1", "u2", "u3", "u4"}
	for trial := range 100 {
		c := mustChoosy(t, 1, nil)
		running := map[string]float64{}
		for _, u := range users {
			running[u] = float64(rng.IntN(20))
		}
		c.SetShares(uint64(trial+1), running)
		for i := range 40 {
			u := users[rng.IntN(len(users))]
			c.Push(Reservation{User: u, RequestID: u, App: "app", Scheduler: string(rune('a' + i%26))})
		}
		for c.Len() > 0 {
			backlogged := map[string]bool{}
			for _, fl := range c.active.fs {
				backlogged[fl.user] = true
			}
			r, _ := c.Pop()
			got, _ := c.Share(r.User)
			for u := range backlogged {
				if s, _ := c.Share(u); s < got {
					t.Fatalf("trial %d: served %s at share %v while %s had %v", trial, r.User, got, u, s)
				}
			}
			c.Launched(r.User)
		}
	}
}

func TestChoosySetShares(t *testing.T) {
	c := mustChoosy(t, 1, nil)
	if _, ok := c.Coordinated(); ok {
		t.Fatal("a new Choosy claims a snapshot")
	}
	if ok, err := c.SetShares(5, map[string]float64{"a": 1}); !ok || err != nil {
		t.Fatalf("first snapshot: %v %v", ok, err)
	}
	c.Launched("a")
	if s, _ := c.Share("a"); s != 2 {
		t.Fatalf("share after a local launch = %v, want 2", s)
	}
	if ok, _ := c.SetShares(5, map[string]float64{"a": 9}); ok {
		t.Fatal("a snapshot of the same version was installed")
	}
	if ok, _ := c.SetShares(4, map[string]float64{"a": 9}); ok {
		t.Fatal("an older snapshot was installed")
	}
	if ok, _ := c.SetShares(6, map[string]float64{"a": 3}); !ok {
		t.Fatal("a newer snapshot was refused")
	}
	if s, _ := c.Share("a"); s != 3 {
		t.Fatalf("share after a new snapshot = %v, want 3 (local accounting restarts)", s)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), -1} {
		if ok, err := c.SetShares(7, map[string]float64{"a": bad}); ok || err == nil {
			t.Fatalf("count %v accepted", bad)
		}
	}
	if v, ok := c.Coordinated(); !ok || v != 6 {
		t.Fatalf("after refused snapshots: version %d %v, want 6 in force", v, ok)
	}
	c.ClearShares()
	if _, ok := c.Share("a"); ok {
		t.Fatal("share reported after ClearShares")
	}
	// After a clear any version is accepted: a restarted coordinator
	// counts from 1 again.
	if ok, _ := c.SetShares(1, nil); !ok {
		t.Fatal("snapshot after ClearShares refused")
	}
}

// TestChoosyFallbackForgetsSharesService: a user Choosy served on every
// free slot (the constrained one, whose cluster-wide share is lowest) is
// not made to wait in the fair order once the counts go stale: after
// ClearShares both backlogged users alternate, as a fresh fair queue would.
func TestChoosyFallbackForgetsSharesService(t *testing.T) {
	c := mustChoosy(t, 1, nil)
	for i := range 40 {
		c.Push(Reservation{User: "spark", RequestID: "s", App: "app", Scheduler: string(rune('a' + i%26))})
		c.Push(Reservation{User: "hadoop", RequestID: "h", App: "app", Scheduler: string(rune('a' + i%26))})
	}
	if _, err := c.SetShares(1, map[string]float64{"spark": 1, "hadoop": 100}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if r, _ := c.Pop(); r.User != "spark" {
			t.Fatalf("with shares, served %s before spark", r.User)
		}
	}
	c.ClearShares()
	got := map[string]int{}
	for range 10 {
		r, _ := c.Pop()
		got[r.User]++
	}
	if got["spark"] != 5 || got["hadoop"] != 5 {
		t.Fatalf("after the fallback, 10 pops served %v; want 5 each (the fair split, not hadoop catching up on 20)", got)
	}
}
