package queue

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestFIFOQueuedByUser: QueuedByUser agrees with a plain count of what is
// queued, by user, through pushes, pops and request and app removals, and
// the index's spare headers and cached header never outgrow their bounds.
func TestFIFOQueuedByUser(t *testing.T) {
	tests := []struct {
		name     string
		requests int // distinct request IDs drawn from
		steps    int
	}{
		{"few requests", 3, 500},
		{"past the small-map size", 40, 3000},
		{"many requests", 2000, 6000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.requests), 3))
			f := NewFIFO()
			var queued []Reservation // oracle, in service order
			users := []string{"", "ann", "bob"}
			for step := range tc.steps {
				switch op := rng.IntN(10); {
				case op < 5:
					h := rng.IntN(tc.requests)
					r := Reservation{RequestID: fmt.Sprint("r", h), App: fmt.Sprint("a", h%2), User: users[h%3]}
					f.Push(r)
					queued = append(queued, r)
				case op < 8:
					r, ok := f.Pop()
					if ok != (len(queued) > 0) || (ok && r != queued[0]) {
						t.Fatalf("step %d: Pop (%v,%v), oracle %v", step, r, ok, queued)
					}
					if ok {
						queued = queued[1:]
					}
				case op < 9:
					id := fmt.Sprint("r", rng.IntN(tc.requests))
					want := 0
					kept := queued[:0:0]
					for _, r := range queued {
						if r.RequestID == id {
							want++
						} else {
							kept = append(kept, r)
						}
					}
					if got := f.RemoveRequest(id); got != want {
						t.Fatalf("step %d: RemoveRequest(%s) = %d, want %d", step, id, got, want)
					}
					queued = kept
				default:
					app := fmt.Sprint("a", rng.IntN(2))
					want := 0
					kept := queued[:0:0]
					for _, r := range queued {
						if r.App == app {
							want++
						} else {
							kept = append(kept, r)
						}
					}
					if got := f.RemoveApp(app); got != want {
						t.Fatalf("step %d: RemoveApp(%s) = %d, want %d", step, app, got, want)
					}
					queued = kept
				}
				checkQueuedByUser(t, step, f, queued)
				checkBounds(t, f)
				lq := f.long
				if lq == nil {
					continue // never linked: no nodes, no index
				}
				spareNodes := 0
				for n := lq.spare; n != nil; n = n.links[inQueue].next {
					spareNodes++
				}
				if spareNodes != lq.nSpare {
					t.Fatalf("step %d: %d spare nodes listed, %d counted", step, spareNodes, lq.nSpare)
				}
				if len(lq.idx.spare) > shrinkAbove || spareNodes > shrinkAbove {
					t.Fatalf("step %d: %d spare headers, %d spare nodes", step, len(lq.idx.spare), spareNodes)
				}
				for _, k := range []linkKind{inRequest, inApp} {
					if l := lq.idx.lastList[k]; l != nil && filedHeader(&lq.idx, k, lq.idx.lastKey[k]) != l {
						t.Fatalf("step %d: cached header for %q is not the indexed one", step, lq.idx.lastKey[k])
					}
				}
			}
		})
	}
}
