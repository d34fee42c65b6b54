package coordinator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
)

// reportsAt makes a period's reports at scale: nodes round robin over
// types (8 slots each), each user with work on 4 nodes of each of 1-3
// random types (as sparrow bench coordinator does).
func reportsAt(nodes, types, users int, seed uint64) []fairshare.NodeReport {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	out := make([]fairshare.NodeReport, nodes)
	byType := make([][]int, types)
	for i := range out {
		out[i] = fairshare.NodeReport{Node: fmt.Sprintf("nm-%05d", i), Type: fmt.Sprintf("type-%03d", i%types), Slots: 8, Users: map[string]fairshare.Usage{}}
		byType[i%types] = append(byType[i%types], i)
	}
	for u := range users {
		name := fmt.Sprintf("user-%05d", u)
		for range 1 + rng.IntN(3) {
			ns := byType[rng.IntN(types)]
			for range 4 {
				n := ns[rng.IntN(len(ns))]
				x := out[n].Users[name]
				x.Queued += 1 + rng.IntN(4)
				x.Running += rng.IntN(3)
				out[n].Users[name] = x
			}
		}
	}
	return out
}

func unitWeight(string) float64 { return 1 }

// TestGuideReachesReceivers: what the publish path encodes, a member's
// receiver installs as the solve's running counts and its type's weights.
func TestGuideReachesReceivers(t *testing.T) {
	reports := reportsAt(40, 4, 60, 1)
	// Work sent without user information is the user "" (it once failed
	// every period's solve).
	reports[2].Users[""] = fairshare.Usage{Queued: 3, Running: 1}
	var pub fairgossip.Publisher
	rx := fairgossip.Receiver{Type: "type-002"}
	for v := uint64(1); v <= 6; v++ {
		if v > 1 { // some work changes every period
			reports[int(v)%len(reports)].Users["user-00001"] = fairshare.Usage{Queued: int(v), Running: int(v)}
		}
		g, p, err := Guide(reports, unitWeight, &pub, v)
		if err != nil {
			t.Fatal(err)
		}
		var got fairgossip.Guidance
		installed := false
		for _, m := range append(append([]fairgossip.Message{}, p.Table...), p.Guidance...) {
			res, err := rx.Add(m.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if res.Installed {
				got, installed = res.Guidance, true
			}
		}
		if !installed || got.Version != v {
			t.Fatalf("version %d not installed (got %d)", v, got.Version)
		}
		if _, ok := got.Running[""]; !ok {
			t.Fatalf("v%d: the anonymous user's running count did not arrive: %v", v, got.Running)
		}
		for u, n := range g.Running {
			if got.Running[u] != uint64(n) {
				t.Fatalf("v%d: running count of %s: %d, want %d", v, u, got.Running[u], n)
			}
		}
		for u, w := range g.TypeWeights["type-002"] {
			if math.Abs(got.Weights["type-002"][u]-w) > fairgossip.WeightUnit/2+1e-9 && w > fairgossip.WeightUnit {
				t.Fatalf("v%d: weight of %s: %v, want %v", v, u, got.Weights["type-002"][u], w)
			}
		}
		if len(got.Weights) > 1 {
			t.Fatalf("v%d: kept weights of %d types, want this node's only", v, len(got.Weights))
		}
	}
}

// BenchmarkGuide is the active coordinator's work per period (CMMF solve
// and encoding, steady state: deltas and periodic snapshots), and the
// bytes it publishes. go test -run NONE -bench Guide ./coordinator/
// (sparrow bench coordinator measures the same with getrusage and adds the
// gossip cost.)
func BenchmarkGuide(b *testing.B) {
	for _, sz := range []struct{ nodes, types, users int }{
		{100, 4, 20}, {1000, 20, 200}, {10000, 100, 5000},
	} {
		reports := reportsAt(sz.nodes, sz.types, sz.users, 1)
		b.Run(fmt.Sprintf("nodes=%d/types=%d/users=%d", sz.nodes, sz.types, sz.users), func(b *testing.B) {
			var pub fairgossip.Publisher
			v := uint64(0)
			// Past the warm-up periods (name table and snapshot each).
			for range fairgossip.Warmup {
				v++
				if _, _, err := Guide(reports, unitWeight, &pub, v); err != nil {
					b.Fatal(err)
				}
			}
			bytes, periods := 0, 0
			rng := rand.New(rand.NewPCG(2, 3))
			for b.Loop() {
				// One node's work changes each period.
				r := reports[rng.IntN(len(reports))]
				for u, x := range r.Users {
					x.Running = rng.IntN(4)
					r.Users[u] = x
				}
				v++
				_, p, err := Guide(reports, unitWeight, &pub, v)
				if err != nil {
					b.Fatal(err)
				}
				bytes += p.Bytes()
				periods++
			}
			b.ReportMetric(float64(bytes)/float64(periods), "bytes/period")
		})
	}
}
