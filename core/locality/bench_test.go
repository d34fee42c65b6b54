package locality

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// fleet draws a period's snapshot of n node monitors with 8 slots in
// racks of 40: most nodes busy with a short queue, one in ten hot with a
// long one (Zipf-like skew), task lengths around 100 ms.
func fleet(n int, rng *rand.Rand) []NodeLoad {
	out := make([]NodeLoad, n)
	for i := range out {
		l := NodeLoad{Name: fmt.Sprintf("nm-%05d", i), Rack: fmt.Sprintf("rack-%03d", i/40), Slots: 8,
			Running: rng.IntN(9), TaskMillis: 50 + rng.Int64N(100)}
		if l.Running == 8 {
			l.Queued = rng.IntN(4)
		}
		if rng.IntN(10) == 0 {
			l.Running, l.Queued = 8, 8+rng.IntN(40)
		}
		out[i] = l
	}
	return out
}

// BenchmarkCompute times a period's build and solve at 100, 1,000 and
// 10,000 node monitors with the default weights.
func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			nodes := fleet(n, rand.New(rand.NewPCG(1, uint64(n))))
			var out Outcome
			for b.Loop() {
				var err error
				if out, err = Compute(nodes, DefaultParams()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.Arcs), "arcs")
			b.ReportMetric(float64(out.Rack+out.Core), "moved")
		})
	}
}
