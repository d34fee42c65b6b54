package quincy

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// TestRecost: advancing Now and re-pricing in place gives the graph Build
// makes at the later time, arc for arc, and a warm-started solve of it
// costs what a cold solve does.
func TestRecost(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for c := range 15 {
		cfg := SyntheticConfig{Computers: 20 + rng.IntN(30), Racks: 1 + rng.IntN(4), Jobs: 1 + rng.IntN(5)}
		cfg.Tasks = cfg.Jobs + rng.IntN(100)
		s, err := Synthetic(cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		for _, pol := range Policies {
			s := s.Clone()
			g, err := Build(s, pol, DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			solver := flow.NewSolver(g.Net)
			if _, err := solver.Solve(); err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
			s.Now += time.Duration(1+rng.IntN(120)) * time.Second
			changed := g.Recost()
			fresh, err := Build(s, pol, DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if fresh.Net.NumArcs() != g.Net.NumArcs() {
				t.Fatalf("case %d %v: %d arcs rebuilt, %d recosted", c, pol, fresh.Net.NumArcs(), g.Net.NumArcs())
			}
			for a := range fresh.Net.NumArcs() {
				if fresh.Net.Arc(a) != g.Net.Arc(a) {
					t.Fatalf("case %d %v: arc %d is %+v rebuilt, %+v recosted", c, pol, a, fresh.Net.Arc(a), g.Net.Arc(a))
				}
			}
			warm, err := solver.Solve()
			if err != nil {
				t.Fatalf("case %d %v: warm: %v", c, pol, err)
			}
			cold, err := flow.Solve(fresh.Net)
			if err != nil {
				t.Fatalf("case %d %v: cold: %v", c, pol, err)
			}
			if warm.Cost != cold.Cost {
				t.Fatalf("case %d %v: warm cost %d, cold %d (%d arcs recosted)", c, pol, warm.Cost, cold.Cost, changed)
			}
			sch, err := g.ReadSchedule(warm)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkSchedule(g, warm, sch); err != nil {
				t.Fatalf("case %d %v: %v", c, pol, err)
			}
		}
	}
}
