package locality

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"
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

// periods draws a run of snapshots of n node monitors, one per period:
// the first from fleet, each next one with a churn fraction of the node
// monitors redrawn (running, queued and task length; the racks and slots
// stay).
func periods(n, count int, churn float64, rng *rand.Rand) [][]NodeLoad {
	cur := fleet(n, rng)
	out := [][]NodeLoad{cur}
	for range count - 1 {
		next := slices.Clone(cur)
		fresh := fleet(n, rng)
		for i := range next {
			if rng.Float64() < churn {
				next[i].Running, next[i].Queued, next[i].TaskMillis = fresh[i].Running, fresh[i].Queued, fresh[i].TaskMillis
			}
		}
		out = append(out, next)
		cur = next
	}
	return out
}

// cpuSeconds reads this process's CPU time (user + system, all threads):
// on a shared, loaded machine it measures the compute a period used, not
// the time it waited for a processor.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkPricePeriods times 20 consecutive periods at 1,000 and 10,000
// node monitors, with 10% and all of them changing between periods, three
// ways in the same run: "warm", one Pricer for all periods (what the
// coordinator runs); "fresh", a new Pricer each period (the same method
// without the kept racks); "cold", Compute (core/flow's min-cost flow on a
// new network, the reference the Pricer is tested against). One op is 20
// periods; the metrics are the median and the slowest period in
// milliseconds of wall time, and the median in milliseconds of the
// process's CPU time; for the warm Pricer also the racks it brought up to
// date and the node monitors whose slopes it replaced per period, and the
// most Bellman-Ford rounds a period's prices took. The warm Pricer's first
// period comes before the 20 and is not timed.
//
//	go test -run XXX -bench PricePeriods -benchtime 3x ./core/locality/
func BenchmarkPricePeriods(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, churn := range []float64{0.1, 1} {
			snaps := periods(n, 21, churn, rand.New(rand.NewPCG(7, uint64(n))))
			for _, mode := range []string{"warm", "fresh", "cold"} {
				b.Run(fmt.Sprintf("nodes=%d/churn=%g/%s", n, churn, mode), func(b *testing.B) {
					var times, cpu []float64
					var rebuilt, changed, rounds int
					for b.Loop() {
						times, cpu = times[:0], cpu[:0]
						rebuilt, changed, rounds = 0, 0, 0
						pr, err := NewPricer(DefaultParams())
						if err != nil {
							b.Fatal(err)
						}
						if _, err := pr.Price(snaps[0]); err != nil {
							b.Fatal(err)
						}
						for _, s := range snaps[1:] {
							t0, c0 := time.Now(), cpuSeconds()
							switch mode {
							case "warm":
								_, err = pr.Price(s)
							case "fresh":
								var fresh *Pricer
								if fresh, err = NewPricer(DefaultParams()); err == nil {
									_, err = fresh.Price(s)
								}
							default:
								_, err = Compute(s, DefaultParams())
							}
							if err != nil {
								b.Fatal(err)
							}
							times = append(times, float64(time.Since(t0).Microseconds())/1000)
							cpu = append(cpu, 1000*(cpuSeconds()-c0))
							if mode == "warm" {
								rebuilt += pr.Stats().Rebuilt
								changed += pr.Stats().Changed
								rounds = max(rounds, pr.Stats().Rounds)
							}
						}
					}
					slices.Sort(times)
					slices.Sort(cpu)
					b.ReportMetric((times[9]+times[10])/2, "p50-ms")
					b.ReportMetric(times[len(times)-1], "max-ms")
					b.ReportMetric((cpu[9]+cpu[10])/2, "cpu-p50-ms")
					if mode == "warm" {
						b.ReportMetric(float64(rebuilt)/float64(len(times)), "racks-updated/period")
						b.ReportMetric(float64(changed)/float64(len(times)), "nodes-replaced/period")
						b.ReportMetric(float64(rounds), "max-rounds")
					}
				})
			}
		}
	}
}
