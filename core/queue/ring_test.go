package queue

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestFIFORingAndLinked drives FIFOs through queues that stay within the
// ring, cross ringMax by one, and grow far past it, and checks every answer
// (Pop, RemoveRequest, RemoveApp, Len, QueuedByUser) against a plain slice
// of what is queued, in service order. It also checks when the FIFO is in
// which form: linked only after a push past ringMax, and back in the ring
// once it empties, with its ring back inside the FIFO; and that no unused
// ring slot keeps a reservation (its strings) alive. Each case runs twice:
// with the FIFO's own long ring, and with one borrowed from a RingPool,
// which must answer the same and get its one array back whenever the FIFO
// is back in small.
func TestFIFORingAndLinked(t *testing.T) {
	tests := []struct {
		name     string
		maxLen   int // pushes stop while this many are queued
		requests int // distinct request IDs drawn from
		steps    int
	}{
		{"short queue, ring only", ringMax / 2, 3, 2000},
		{"exactly ringMax", ringMax, 5, 3000},
		{"one past ringMax", ringMax + 1, 5, 3000},
		{"far past ringMax", 4 * ringMax, 20, 6000},
		{"far past ringMax, many requests", 4 * ringMax, 500, 6000},
	}
	for _, tc := range tests {
		for _, pooled := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, pooled=%v", tc.name, pooled), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(tc.maxLen), uint64(tc.requests)))
				var f FIFO
				var pool RingPool
				if pooled {
					f.SetRingPool(&pool)
				}
				borrowed := false        // the FIFO has taken an array from pool
				var queued []Reservation // oracle, in service order
				users := []string{"", "ann", "bob"}
				peak, wasLinked := 0, false
				// Phases of mostly pushes (and some pops) up to maxLen, then
				// mostly pops and removals down to empty, so that every case reaches its
				// length and returns from it.
				filling := true
				for step := range tc.steps {
					wasEmpty := len(queued) == 0
					switch {
					case len(queued) == tc.maxLen:
						filling = false
					case len(queued) == 0:
						filling = true
					}
					pushes := 3
					if filling {
						pushes = 16
					}
					switch op := rng.IntN(20); {
					case op < pushes && len(queued) < tc.maxLen:
						h := rng.IntN(tc.requests)
						r := Reservation{RequestID: fmt.Sprint("r", h), App: fmt.Sprint("a", h%3),
							User: users[h%3], Priority: int32(h % 4), Tag: uint64(step)}
						f.Push(r)
						queued = append(queued, r)
					case op < 18 || filling:
						r, ok := f.Pop()
						if ok != (len(queued) > 0) || (ok && r != queued[0]) {
							t.Fatalf("step %d: Pop = (%+v, %v), want %v", step, r, ok, queued[:min(1, len(queued))])
						}
						if ok {
							queued = queued[1:]
						}
					case op < 19:
						id := fmt.Sprint("r", rng.IntN(tc.requests))
						var want int
						queued, want = without(queued, func(r Reservation) bool { return r.RequestID == id })
						if got := f.RemoveRequest(id); got != want {
							t.Fatalf("step %d: RemoveRequest(%s) = %d, want %d", step, id, got, want)
						}
					default:
						app := fmt.Sprint("a", rng.IntN(3))
						var want int
						queued, want = without(queued, func(r Reservation) bool { return r.App == app })
						if got := f.RemoveApp(app); got != want {
							t.Fatalf("step %d: RemoveApp(%s) = %d, want %d", step, app, got, want)
						}
					}
					if f.Len() != len(queued) {
						t.Fatalf("step %d: Len = %d, want %d", step, f.Len(), len(queued))
					}
					checkQueuedByUser(t, step, &f, queued)
					switch {
					case len(queued) > ringMax && !f.linked:
						t.Fatalf("step %d: %d queued in the ring", step, len(queued))
					case len(queued) == 0 && f.linked:
						t.Fatalf("step %d: empty FIFO still linked", step)
					case f.linked && tc.maxLen <= ringMax:
						t.Fatalf("step %d: linked, with never more than ringMax queued", step)
					case f.linked && !wasLinked && wasEmpty:
						t.Fatalf("step %d: linked after a single push on an empty FIFO", step)
					}
					if lq := f.long; !f.linked && lq != nil && (lq.q.head != nil || lq.idx.lastList[inRequest] != nil) {
						t.Fatalf("step %d: ring form with linked nodes left over", step)
					}
					if f.n == 0 && len(f.ring) > 0 && &f.ring[0] != &f.small[0] {
						t.Fatalf("step %d: empty FIFO's ring not back in small", step)
					}
					rings := [][]entry{f.ring, f.small[:], f.big}
					if pooled {
						borrowed = borrowed || len(f.ring) > smallRing
						inSmall := len(f.ring) == 0 || &f.ring[0] == &f.small[0]
						switch {
						case f.big != nil:
							t.Fatalf("step %d: pooled FIFO allocated its own long ring", step)
						case len(f.ring) > smallRing && len(f.ring) != ringMax:
							t.Fatalf("step %d: borrowed ring of %d, want %d", step, len(f.ring), ringMax)
						case inSmall && borrowed && len(pool.free) != 1:
							t.Fatalf("step %d: pool holds %d arrays with the FIFO in small, want 1", step, len(pool.free))
						case !inSmall && len(pool.free) != 0:
							t.Fatalf("step %d: pool holds %d arrays while the FIFO borrows one, want 0", step, len(pool.free))
						}
						rings = append(rings, pool.free...)
					}
					for _, ring := range rings {
						for j := range ring {
							queuedHere := !f.linked && len(ring) == len(f.ring) && &ring[0] == &f.ring[0] &&
								(j-int(f.head))&(len(ring)-1) < int(f.n)
							if !queuedHere && ring[j] != (entry{}) {
								t.Fatalf("step %d: unused ring slot %d holds %+v", step, j, ring[j])
							}
						}
					}
					checkShapes(t, step, &f)
					checkBounds(t, &f)
					peak = max(peak, len(queued))
					wasLinked = f.linked
				}
				if peak < tc.maxLen {
					t.Fatalf("queue peaked at %d, below the %d the case is for", peak, tc.maxLen)
				}
			})
		}
	}
}

// checkShapes fails unless f's shape table counts exactly the ring's
// entries by shape, and keeps no strings of a shape no entry refers to.
func checkShapes(t *testing.T, step int, f *FIFO) {
	t.Helper()
	tab := f.table()
	want := make(map[uint32]int32)
	if !f.linked {
		for i := range int(f.n) {
			want[f.ring[f.slot(i)].shape]++
		}
	}
	for i := range tab.s {
		sh := tab.s[i]
		switch {
		case sh.refs != want[uint32(i)]:
			t.Fatalf("step %d: shape %d has %d references, the ring %d", step, i, sh.refs, want[uint32(i)])
		case sh.refs == 0 && sh != (shape{}):
			t.Fatalf("step %d: unreferenced shape %d holds %+v", step, i, sh)
		}
	}
}

// without returns rs without the reservations drop selects, in order, and
// how many it dropped.
func without(rs []Reservation, drop func(Reservation) bool) ([]Reservation, int) {
	kept := rs[:0:0]
	for _, r := range rs {
		if !drop(r) {
			kept = append(kept, r)
		}
	}
	return kept, len(rs) - len(kept)
}
