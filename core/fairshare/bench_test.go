package fairshare

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// syntheticReports makes nodes reports from nodes spread over types
// machine types (8 slots each) and users users, each with work queued on
// the nodes of a few random types, as a period's input at scale.
func syntheticReports(nodes, types, users int, seed uint64) []NodeReport {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	out := make([]NodeReport, nodes)
	for i := range out {
		out[i] = NodeReport{Node: fmt.Sprintf("nm-%d", i), Type: fmt.Sprintf("type-%d", i%types), Slots: 8, Users: map[string]Usage{}}
	}
	byType := make([][]int, types)
	for i := range out {
		byType[i%types] = append(byType[i%types], i)
	}
	for u := range users {
		name := fmt.Sprintf("user-%d", u)
		for range 1 + rng.IntN(3) {
			ns := byType[rng.IntN(types)]
			for range 4 {
				n := ns[rng.IntN(len(ns))]
				x := out[n].Users[name]
				x.Queued += 1 + rng.IntN(4)
				if rng.IntN(2) == 0 {
					x.Running++
				}
				out[n].Users[name] = x
			}
		}
	}
	return out
}

// BenchmarkCompute is the coordinator's work per period: aggregate every
// node's report and solve CMMF. go test -run NONE -bench Compute ./core/fairshare/
func BenchmarkCompute(b *testing.B) {
	for _, sz := range []struct{ nodes, types, users int }{
		{100, 4, 20}, {1000, 20, 200}, {10000, 100, 5000},
	} {
		reports := syntheticReports(sz.nodes, sz.types, sz.users, 1)
		b.Run(fmt.Sprintf("nodes=%d/types=%d/users=%d", sz.nodes, sz.types, sz.users), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compute(reports, unit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
