package locality

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// perturb changes a period's snapshot the way a fleet changes between
// periods: some node monitors' running and queued counts, task lengths,
// slots and racks change, a few leave and a few join.
func perturb(rng *rand.Rand, nodes []NodeLoad, racks int, next *int) []NodeLoad {
	var out []NodeLoad
	for _, l := range nodes {
		switch rng.IntN(10) {
		case 0:
			continue // left
		case 1, 2, 3:
			l.Running = rng.IntN(2*max(l.Slots, 1) + 1)
			l.Queued = rng.IntN(4)
			if rng.IntN(3) == 0 {
				l.Queued += rng.IntN(15)
			}
		case 4:
			l.TaskMillis = rng.Int64N(3000)
		case 5:
			l.Slots = rng.IntN(5)
		case 6:
			l.Rack = fmt.Sprintf("r%d", rng.IntN(racks))
		}
		out = append(out, l)
	}
	for range rng.IntN(3) {
		*next++
		out = append(out, NodeLoad{Name: fmt.Sprintf("n%d", *next), Rack: fmt.Sprintf("r%d", rng.IntN(racks)),
			Slots: rng.IntN(5), Running: rng.IntN(4), Queued: rng.IntN(10), TaskMillis: rng.Int64N(3000)})
	}
	if len(out) == 0 {
		out = append(out, NodeLoad{Name: "n0", Rack: "r0"})
	}
	out[rng.IntN(len(out))].Slots = 1 + rng.IntN(4) // someone can work
	return out
}

// TestPricerMatchesCompute is the warm re-solve's property test: over
// runs of 30 perturbed periods, each Price equals a cold Compute of the
// same snapshot (optimal cost, every price, all queued tasks placed), and
// a cold solve of the Pricer's own network has the same optimal cost.
func TestPricerMatchesCompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	warm := 0
	for run := range 40 {
		nodes, p := randomSnapshot(rng)
		pr, err := NewPricer(p)
		if err != nil {
			t.Fatal(err)
		}
		next := len(nodes)
		for period := range 30 {
			want, err := Compute(nodes, p)
			if err != nil {
				t.Fatalf("run %d period %d: compute: %v", run, period, err)
			}
			got, err := pr.Price(nodes)
			if err != nil {
				t.Fatalf("run %d period %d: price: %v", run, period, err)
			}
			if pr.Stats().Warm {
				warm++
			}
			if got.Cost != want.Cost || got.Prices.Cluster != want.Prices.Cluster ||
				!maps.Equal(got.Prices.Node, want.Prices.Node) || !maps.Equal(got.Prices.Rack, want.Prices.Rack) {
				t.Fatalf("run %d period %d: warm %+v\ncold %+v\nnodes %+v", run, period, got, want, nodes)
			}
			if got.Local+got.Rack+got.Core != want.Local+want.Rack+want.Core {
				t.Fatalf("run %d period %d: warm places %d tasks, cold %d", run, period,
					got.Local+got.Rack+got.Core, want.Local+want.Rack+want.Core)
			}
			cold, err := flow.Solve(pr.net.Clone())
			if err != nil || cold.Cost != got.Cost {
				t.Fatalf("run %d period %d: cold solve of the kept network %d (%v), warm %d", run, period, cold.Cost, err, got.Cost)
			}
			nodes = perturb(rng, nodes, 3, &next)
		}
	}
	if warm < 40*29*9/10 {
		t.Errorf("only %d of %d periods after the first were solved warm", warm, 40*29)
	}
}

// TestPricerRefusesBadSnapshots: a bad snapshot gets Compute's error and
// leaves the Pricer able to price the next good one.
func TestPricerRefusesBadSnapshots(t *testing.T) {
	good := []NodeLoad{{Name: "a", Rack: "r", Slots: 2, Queued: 5}, {Name: "b", Rack: "r", Slots: 1}}
	for _, c := range []struct {
		name  string
		nodes []NodeLoad
	}{
		{"duplicate", []NodeLoad{{Name: "a", Slots: 1}, {Name: "a", Slots: 1}}},
		{"negative", []NodeLoad{{Name: "a", Slots: 1, Queued: -1}}},
		{"no capacity", []NodeLoad{{Name: "a", Queued: 3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, err := NewPricer(DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pr.Price(good); err != nil {
				t.Fatal(err)
			}
			_, err = pr.Price(c.nodes)
			_, cerr := Compute(c.nodes, DefaultParams())
			if err == nil || cerr == nil || err.Error() != cerr.Error() {
				t.Fatalf("price: %v, compute: %v", err, cerr)
			}
			if c.name == "no capacity" && !errors.Is(err, ErrNoCapacity) {
				t.Errorf("error %v, want ErrNoCapacity", err)
			}
			got, err := pr.Price(good)
			want, _ := Compute(good, DefaultParams())
			if err != nil || got.Cost != want.Cost || !maps.Equal(got.Prices.Node, want.Prices.Node) {
				t.Fatalf("after the bad snapshot: %+v (%v), want %+v", got, err, want)
			}
		})
	}
}

func TestNewPricerRefusesBadParams(t *testing.T) {
	if _, err := NewPricer(Params{MaxWaves: 0}); err == nil {
		t.Fatal("no error for MaxWaves 0")
	}
}
