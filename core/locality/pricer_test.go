package locality

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
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

// samePricing fails t unless warm has cold's optimal cost, prices and
// network size, and places all the queued work.
func samePricing(t *testing.T, what string, warm, cold Outcome) {
	t.Helper()
	if warm.Cost != cold.Cost || warm.Prices.Cluster != cold.Prices.Cluster ||
		!maps.Equal(warm.Prices.Node, cold.Prices.Node) || !maps.Equal(warm.Prices.Rack, cold.Prices.Rack) ||
		warm.Prices.RackPerGB != cold.Prices.RackPerGB || warm.Prices.CorePerGB != cold.Prices.CorePerGB {
		t.Fatalf("%s: warm %+v\ncold %+v", what, warm, cold)
	}
	if warm.Local+warm.Rack+warm.Core != cold.Local+cold.Rack+cold.Core {
		t.Fatalf("%s: warm places %d tasks, cold %d", what, warm.Local+warm.Rack+warm.Core, cold.Local+cold.Rack+cold.Core)
	}
	if warm.Nodes != cold.Nodes || warm.Arcs != cold.Arcs {
		t.Fatalf("%s: warm network %d nodes %d arcs, cold %d %d", what, warm.Nodes, warm.Arcs, cold.Nodes, cold.Arcs)
	}
}

// TestPricerMatchesCompute is the warm re-solve's property test: over
// runs of 30 perturbed periods on one Pricer, each Price equals a cold
// Compute (core/flow's min-cost flow) of the same snapshot: optimal cost,
// every price, the network's size, all queued tasks placed.
func TestPricerMatchesCompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3))
	for run := range 60 {
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
			samePricing(t, fmt.Sprintf("run %d period %d (params %+v, nodes %+v)", run, period, p, nodes), got, want)
			nodes = perturb(rng, nodes, 3, &next)
		}
	}
}

// TestPricerPeriodsMatchCompute: on fleets of hundreds of node monitors in
// racks of 40, over 15 periods with a tenth or all of them changing
// between periods, one Pricer's every period equals a cold Compute of the
// same snapshot, under Quincy's weights and under weights that make the
// core the cheaper route, make moves free, or make waiting free.
func TestPricerPeriodsMatchCompute(t *testing.T) {
	quincy := DefaultParams()
	coreCheaper := DefaultParams()
	coreCheaper.RackPerGB = 3 * coreCheaper.CorePerGB
	equal := DefaultParams()
	equal.RackPerGB = equal.CorePerGB
	freeMoves := DefaultParams()
	freeMoves.RackPerGB, freeMoves.CorePerGB = 0, 0
	freeWait := DefaultParams()
	freeWait.WaitPerSecond = 0
	fewWaves := DefaultParams()
	fewWaves.MaxWaves = 2
	for _, tc := range []struct {
		name  string
		p     Params
		nodes int
		churn float64
	}{
		{"quincy/tenth", quincy, 400, 0.1},
		{"quincy/all", quincy, 400, 1},
		{"core cheaper", coreCheaper, 300, 0.3},
		{"rack equals core", equal, 300, 0.3},
		{"free moves", freeMoves, 200, 0.3},
		{"free wait", freeWait, 200, 0.3},
		{"two waves", fewWaves, 200, 0.3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := NewPricer(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			for k, snap := range periods(tc.nodes, 15, tc.churn, rand.New(rand.NewPCG(5, uint64(tc.nodes)))) {
				want, err := Compute(snap, tc.p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pr.Price(snap)
				if err != nil {
					t.Fatal(err)
				}
				samePricing(t, fmt.Sprintf("period %d", k), got, want)
			}
		})
	}
}

// TestPricerReusesUnchangedRacks: a rack's cost function is worked out
// again only when its node monitors' inputs change.
func TestPricerReusesUnchangedRacks(t *testing.T) {
	base := []NodeLoad{
		{Name: "a1", Rack: "a", Slots: 2, Running: 2, Queued: 6, TaskMillis: 100},
		{Name: "a2", Rack: "a", Slots: 2, TaskMillis: 100},
		{Name: "b1", Rack: "b", Slots: 2, Running: 1, TaskMillis: 100},
		{Name: "c1", Rack: "c", Slots: 2, Running: 2, Queued: 1, TaskMillis: 100},
	}
	moved := slices.Clone(base)
	moved[1].Rack = "b" // a2 moves from rack a to rack b
	renamed := slices.Clone(base)
	renamed[3].Name = "c9"
	for _, tc := range []struct {
		name    string
		next    []NodeLoad
		rebuilt int
	}{
		{"same snapshot", base, 0},
		{"node moves rack", moved, 2},
		{"node renamed", renamed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := NewPricer(DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pr.Price(base); err != nil {
				t.Fatal(err)
			}
			if s := pr.Stats(); s.Rebuilt != 3 || s.Racks != 3 {
				t.Fatalf("first period: %+v, want all 3 racks built", s)
			}
			got, err := pr.Price(tc.next)
			if err != nil {
				t.Fatal(err)
			}
			if s := pr.Stats(); s.Rebuilt != tc.rebuilt {
				t.Fatalf("stats %+v, want %d racks rebuilt", s, tc.rebuilt)
			}
			want, err := Compute(tc.next, DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			samePricing(t, tc.name, got, want)
		})
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

// FuzzPricer: over periods decoded from the input, a Pricer's outcome
// equals a cold Compute's. The first five bytes pick the weights; then
// each byte starts a period's change and every six bytes are one node
// monitor's report (rack, slots, running, queued, task length), so the
// same names recur with new loads, join and leave.
func FuzzPricer(f *testing.F) {
	f.Add([]byte{3, 1, 2, 5, 4, 0, 1, 2, 3, 9, 40, 1, 0, 0, 0, 0, 0, 7, 1, 3, 8, 20, 200})
	f.Add([]byte{1, 9, 1, 0, 2, 2, 0, 4, 0, 30, 0, 3, 1, 1, 2, 1, 9, 255, 0, 2, 3, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		weight := func(b byte) int64 { return int64(b%16) * int64(b%16) * 25 }
		p := Params{WaitPerSecond: weight(data[0]), RackPerGB: weight(data[1]) * 4, CorePerGB: weight(data[2]) * 4,
			InputBytes: GB / 4 * int64(data[3]%8), MaxWaves: 1 + int(data[4]%40), DefaultTaskMillis: 100}
		pr, err := NewPricer(p)
		if err != nil {
			t.Fatal(err)
		}
		data = data[5:]
		for period := 0; len(data) > 0 && period < 16; period++ {
			var nodes []NodeLoad
			n := 1 + int(data[0]%32)
			data = data[1:]
			for k := 0; k < n && len(data) >= 6; k++ {
				b := data[:6]
				data = data[6:]
				nodes = append(nodes, NodeLoad{Name: fmt.Sprintf("n%d", b[0]%16), Rack: fmt.Sprintf("r%d", b[1]%4),
					Slots: int(b[2] % 5), Running: int(b[3] % 12), Queued: int(b[4] % 40), TaskMillis: int64(b[5]) * 10})
			}
			slices.SortStableFunc(nodes, func(x, y NodeLoad) int { return strings.Compare(x.Name, y.Name) })
			nodes = slices.CompactFunc(nodes, func(x, y NodeLoad) bool { return x.Name == y.Name })
			want, werr := Compute(nodes, p)
			got, gerr := pr.Price(nodes)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("period %d: compute %v, price %v", period, werr, gerr)
			}
			if werr == nil {
				samePricing(t, fmt.Sprintf("period %d (params %+v, nodes %+v)", period, p, nodes), got, want)
			}
		}
	})
}
