package racksim

import (
	"math"
	"testing"
)

// TestNetworkSharing checks max-min fair transfer times computed by hand.
func TestNetworkSharing(t *testing.T) {
	type flowSpec struct {
		at    float64
		links []int
		bytes float64
	}
	tests := []struct {
		name  string
		caps  []float64
		flows []flowSpec
		want  []float64 // completion time of each flow
	}{
		{
			name:  "one flow over a 1 Gbit/s NIC",
			caps:  []float64{Gbit},
			flows: []flowSpec{{0, []int{0}, 125 * MB}},
			want:  []float64{1},
		},
		{
			name:  "two equal flows share a link",
			caps:  []float64{Gbit},
			flows: []flowSpec{{0, []int{0}, 125 * MB}, {0, []int{0}, 125 * MB}},
			want:  []float64{2, 2},
		},
		{
			// Link 0 (10 B/s) carries both, link 1 (4 B/s) only the first:
			// the first gets 4, the second the remaining 6. The first ends
			// at 2 s (8 B); the second has 30 − 12 = 18 B left at 10 B/s.
			name:  "max-min: bottleneck elsewhere frees bandwidth",
			caps:  []float64{10, 4},
			flows: []flowSpec{{0, []int{0, 1}, 8}, {0, []int{0}, 30}},
			want:  []float64{2, 3.8},
		},
		{
			// The second flow arrives at 0.5 s when the first has 5 B
			// left: both run at 5 B/s, the first ends at 1.5 s; the
			// second then has 5 B at 10 B/s.
			name:  "a late flow halves the rate",
			caps:  []float64{10},
			flows: []flowSpec{{0, []int{0}, 10}, {0.5, []int{0}, 10}},
			want:  []float64{1.5, 2},
		},
		{
			// Cross-rack reads through a 6 B/s uplink: three readers with
			// 4 B/s NICs get 2 B/s each; a fourth flow inside the rack
			// only crosses NICs and gets its NIC's 4.
			name: "uplink shared by three cross-rack flows",
			caps: []float64{6, 4, 4, 4, 4},
			flows: []flowSpec{
				{0, []int{0, 1}, 4}, {0, []int{0, 2}, 4}, {0, []int{0, 3}, 4}, {0, []int{4}, 4},
			},
			want: []float64{2, 2, 2, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNetwork(tc.caps)
			ids := map[int]int{}
			got := make([]float64, len(tc.flows))
			next := 0
			for {
				t0 := n.Next()
				if next < len(tc.flows) && tc.flows[next].at <= t0 {
					f := tc.flows[next]
					ids[n.Add(f.at, f.links, f.bytes)] = next
					next++
					continue
				}
				if math.IsInf(t0, 1) {
					break
				}
				for _, id := range n.Finished(t0) {
					got[ids[id]] = t0
					delete(ids, id)
				}
			}
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Errorf("flow %d finished at %.9f s, want %.9f s", i, got[i], tc.want[i])
				}
			}
			if n.Active() != 0 {
				t.Errorf("%d flows still active", n.Active())
			}
		})
	}
}

// TestNetworkRates checks max-min rates: the flow through the 2 B/s link
// gets 2, the other the 8 left on the shared 10 B/s link; when a third
// flow joins the shared link, the two there split 8 equally (4 each, still
// above the first flow's 2, so its bottleneck stays the 2 B/s link).
func TestNetworkRates(t *testing.T) {
	n := NewNetwork([]float64{10, 2})
	a := n.Add(0, []int{0, 1}, 100)
	b := n.Add(0, []int{0}, 100)
	if ra, rb := n.Rate(a), n.Rate(b); ra != 2 || rb != 8 {
		t.Errorf("rates %g, %g, want 2, 8", ra, rb)
	}
	c := n.Add(0, []int{0}, 100)
	if ra, rb, rc := n.Rate(a), n.Rate(b), n.Rate(c); ra != 2 || rb != 4 || rc != 4 {
		t.Errorf("rates %g, %g, %g, want 2, 4, 4", ra, rb, rc)
	}
}

// TestNetworkRemovePartial checks that a flow ended early reports the
// bytes it carried.
func TestNetworkRemovePartial(t *testing.T) {
	n := NewNetwork([]float64{10})
	id := n.Add(0, []int{0}, 100)
	if got := n.Remove(3, id); math.Abs(got-30) > 1e-9 {
		t.Errorf("carried %g bytes in 3 s at 10 B/s, want 30", got)
	}
	if n.Active() != 0 || !math.IsInf(n.Next(), 1) {
		t.Errorf("network not empty after removing its only flow")
	}
}
