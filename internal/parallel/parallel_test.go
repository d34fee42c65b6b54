package parallel

import (
	"slices"
	"sync/atomic"
	"testing"
)

// TestEach runs every item once, never more than workers at a time, and
// reports each finish once with a count that climbs by one.
func TestEach(t *testing.T) {
	for _, tc := range []struct {
		name           string
		workers, items int
	}{
		{"more items than workers", 3, 20},
		{"more workers than items", 8, 2},
		{"no items", 2, 0},
		{"zero workers counts as one", 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := make([]int, tc.items)
			for i := range items {
				items[i] = i
			}
			var running, peak atomic.Int32
			ran := make([]atomic.Int32, tc.items)
			var counts, done []int
			Each(tc.workers, items, func(i int) {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				ran[i].Add(1)
				running.Add(-1)
			}, func(i, n int) {
				done = append(done, i)
				counts = append(counts, n)
			})
			for i := range ran {
				if ran[i].Load() != 1 {
					t.Errorf("item %d ran %d times", i, ran[i].Load())
				}
			}
			if limit := int32(max(tc.workers, 1)); peak.Load() > limit {
				t.Errorf("%d ran at once, want at most %d", peak.Load(), limit)
			}
			slices.Sort(done)
			if !slices.Equal(done, items) {
				t.Errorf("done for %v, want %v", done, items)
			}
			for k, n := range counts {
				if n != k+1 {
					t.Errorf("finish %d reported count %d", k, n)
				}
			}
		})
	}
}
