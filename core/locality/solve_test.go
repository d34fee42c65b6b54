package locality

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// handParams make the hand-computed cases readable: a 1 s task waits
// 1000 per wave, moving its 1 GB input costs 1500 within a rack and 2500
// (or 5000) across the core.
func handParams(core int64) Params {
	return Params{WaitPerSecond: 1000, RackPerGB: 1500, CorePerGB: core, InputBytes: GB, MaxWaves: 32, DefaultTaskMillis: 1000}
}

func TestSolveHandComputed(t *testing.T) {
	tests := []struct {
		name              string
		nodes             []NodeLoad
		p                 Params
		node, rack        map[string]int64
		cluster, cost     int64
		local, inRack, cx int64
	}{{
		// h's three queued tasks cost 1000, 2000, 3000 on h (one task runs
		// there) or 1500, 2500 on its idle rack-mate m: the flow keeps two
		// on h and moves one (1000 + 2000 + 1500). One more task on h
		// pushes one of h's to m's second wave (1500 + 1000), so h's price
		// is its rack's plus exactly ψ.
		name: "hot node, idle rack-mate",
		nodes: []NodeLoad{
			{Name: "h", Rack: "r1", Slots: 1, Running: 1, Queued: 3, TaskMillis: 1000},
			{Name: "m", Rack: "r1", Slots: 1, TaskMillis: 1000},
			{Name: "o", Rack: "r2", Slots: 1, TaskMillis: 1000},
		},
		p:    handParams(5000),
		node: map[string]int64{"h": 2500, "m": 1000, "o": 0}, rack: map[string]int64{"r1": 1000, "r2": 0},
		cluster: 0, cost: 4500, local: 2, inRack: 1,
	}, {
		// h's five tasks cost 1000..5000 on h or 2500, 3500, ... on o in
		// the other rack: three stay, two cross the core (12000). One more
		// on o is cheapest by sending one of o's back to h's fourth wave
		// (4000 - 2500).
		name: "hot node, idle node in another rack",
		nodes: []NodeLoad{
			{Name: "h", Rack: "r1", Slots: 1, Running: 1, Queued: 5, TaskMillis: 1000},
			{Name: "o", Rack: "r2", Slots: 1, TaskMillis: 1000},
		},
		p:    handParams(2500),
		node: map[string]int64{"h": 4000, "o": 1500}, rack: map[string]int64{"r1": 4000, "r2": 1500},
		cluster: 1500, cost: 12000, local: 3, cx: 2,
	}, {
		// Nothing queued: each price is the next wave's wait. a runs two
		// on two slots (the next task waits a wave of 2 s: 2000); b has a
		// free slot; no task has finished on c, so the mean of the
		// measured ones (1250 ms) prices its full slots.
		name: "idle fleet",
		nodes: []NodeLoad{
			{Name: "a", Rack: "r", Slots: 2, Running: 2, TaskMillis: 2000},
			{Name: "b", Rack: "r", Slots: 1, TaskMillis: 500},
			{Name: "c", Rack: "s", Slots: 3, Running: 3},
		},
		p:    handParams(2500),
		node: map[string]int64{"a": 2000, "b": 0, "c": 1250}, rack: map[string]int64{"r": 0, "s": 1250},
		cluster: 0,
	}, {
		// z has no slots: its two tasks must move, to m in its rack
		// (1500, 1500 + 1000) rather than across the core (2500 + ...).
		// z gets no price; m's next task waits its third wave (2000), or
		// sends one of z's across the core to o's second wave (-1500 +
		// 2500 + 1000): a tie.
		name: "node without slots",
		nodes: []NodeLoad{
			{Name: "z", Rack: "r1", Queued: 2},
			{Name: "m", Rack: "r1", Slots: 1, TaskMillis: 1000},
			{Name: "o", Rack: "r2", Slots: 1, Running: 1, TaskMillis: 1000},
		},
		p:    handParams(2500),
		node: map[string]int64{"m": 2000, "o": 1000}, rack: map[string]int64{"r1": 2000, "r2": 1000},
		cluster: 1000, cost: 4000, inRack: 2,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Compute(tt.nodes, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(out.Prices.Node, tt.node) || !maps.Equal(out.Prices.Rack, tt.rack) || out.Prices.Cluster != tt.cluster {
				t.Fatalf("prices: nodes %v racks %v cluster %d; want %v %v %d", out.Prices.Node, out.Prices.Rack, out.Prices.Cluster, tt.node, tt.rack, tt.cluster)
			}
			if out.Cost != tt.cost || out.Local != tt.local || out.Rack != tt.inRack || out.Core != tt.cx {
				t.Fatalf("cost %d, local/rack/core %d/%d/%d; want %d, %d/%d/%d", out.Cost, out.Local, out.Rack, out.Core, tt.cost, tt.local, tt.inRack, tt.cx)
			}
			if out.Prices.RackPerGB != tt.p.RackPerGB || out.Prices.CorePerGB != tt.p.CorePerGB {
				t.Fatalf("transfer prices %d/%d", out.Prices.RackPerGB, out.Prices.CorePerGB)
			}
		})
	}
}

// TestEmptySnapshot: no nodes, no prices, no error.
func TestEmptySnapshot(t *testing.T) {
	out, err := Compute(nil, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Prices.Node) != 0 || len(out.Prices.Rack) != 0 || out.Prices.Cluster != 0 || out.Cost != 0 {
		t.Fatalf("empty snapshot priced: %+v", out)
	}
}

func TestBuildRefuses(t *testing.T) {
	p := DefaultParams()
	tests := []struct {
		name  string
		nodes []NodeLoad
		p     Params
		want  error
	}{
		{"duplicate node", []NodeLoad{{Name: "a", Slots: 1}, {Name: "a", Slots: 2}}, p, nil},
		{"negative queue", []NodeLoad{{Name: "a", Slots: 1, Queued: -1}}, p, nil},
		{"no capacity", []NodeLoad{{Name: "a", Queued: 3}}, p, ErrNoCapacity},
		{"zero waves", []NodeLoad{{Name: "a", Slots: 1}}, Params{MaxWaves: 0}, nil},
		{"negative weight", []NodeLoad{{Name: "a", Slots: 1}}, Params{MaxWaves: 1, RackPerGB: -1}, nil},
		{"too much work", []NodeLoad{{Name: "a", Slots: 1, Queued: 3 * maxQueued}}, p, nil},
		{"too many slots", []NodeLoad{{Name: "a", Slots: maxSlots + 1}}, p, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.nodes, tt.p)
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			t.Log(err)
		})
	}
}

// TestWaveArcs: a node's wave arcs hold its free slots, then a full
// wave each, at k times its wave cost, up to one task beyond the queued
// work, the last uncapacitated.
func TestWaveArcs(t *testing.T) {
	g, err := Build([]NodeLoad{{Name: "a", Slots: 3, Running: 4, Queued: 5, TaskMillis: 200}}, handParams(2500))
	if err != nil {
		t.Fatal(err)
	}
	type wave struct{ cap, cost int64 }
	var got []wave
	for i := range g.Net.NumArcs() {
		if a := g.Net.Arc(i); a.From == g.Comp[0] && a.To == g.S {
			got = append(got, wave{a.Upper, a.Cost})
		}
	}
	// 4 running on 3 slots: wave 1 has 2 places left, wave 2 three, and
	// wave 3 would make 5 + 1 places: it is the last.
	want := []wave{{2, 200}, {3, 400}, {flow.Infinity, 600}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("waves %v, want %v", got, want)
	}
}

// TestProbeRatio: with d reservations per task, a node's queued
// reservations stand for ⌈queued/d⌉ tasks.
func TestProbeRatio(t *testing.T) {
	for _, tc := range []struct {
		ratio        float64
		queued, want int64
	}{{0, 5, 5}, {1, 5, 5}, {2, 5, 3}, {2, 4, 2}, {1.5, 7, 5}, {3, 1, 1}} {
		p := handParams(2500)
		p.ProbeRatio = tc.ratio
		g, err := Build([]NodeLoad{{Name: "a", Slots: 1, Queued: int(tc.queued)}}, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Net.Supply(g.Demand[0]); got != tc.want {
			t.Errorf("ratio %v: %d reservations make %d tasks, want %d", tc.ratio, tc.queued, got, tc.want)
		}
	}
	p := handParams(2500)
	p.ProbeRatio = 0.5
	if err := p.Validate(); err == nil {
		t.Error("probe ratio 0.5 accepted")
	}
}

// randomSnapshot draws a small fleet: 1-8 nodes in 1-3 racks, a few
// without slots or measurements, some hot.
func randomSnapshot(rng *rand.Rand) ([]NodeLoad, Params) {
	n := 1 + rng.IntN(8)
	racks := 1 + rng.IntN(3)
	nodes := make([]NodeLoad, n)
	for i := range nodes {
		l := NodeLoad{Name: fmt.Sprintf("n%d", i), Rack: fmt.Sprintf("r%d", rng.IntN(racks)), Slots: rng.IntN(5)}
		if rng.IntN(6) == 0 {
			l.Slots = 0
		}
		l.Running = rng.IntN(2*l.Slots + 1)
		l.Queued = rng.IntN(4)
		if rng.IntN(3) == 0 {
			l.Queued += rng.IntN(15)
		}
		if rng.IntN(4) != 0 {
			l.TaskMillis = 1 + rng.Int64N(3000)
		}
		nodes[i] = l
	}
	nodes[rng.IntN(n)].Slots = 1 + rng.IntN(4) // someone can work
	p := Params{WaitPerSecond: rng.Int64N(2000), RackPerGB: rng.Int64N(3000), CorePerGB: rng.Int64N(6000),
		InputBytes: rng.Int64N(4 * GB), MaxWaves: 1 + rng.IntN(6), DefaultTaskMillis: rng.Int64N(2000)}
	if rng.IntN(2) == 0 {
		// Enough waves that the cost limit (ξ·input plus the fill
		// level), not MaxWaves, ends them.
		p.MaxWaves = 64
	}
	return nodes, p
}

// TestPricesAreMarginalCosts checks every price against an honest
// oracle: re-solve with one more unit of supply at the price's node (and
// one more of demand at the sink) and compare the optimum's growth.
func TestPricesAreMarginalCosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	for iter := range 300 {
		nodes, p := randomSnapshot(rng)
		g, err := Build(nodes, p)
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		out, err := g.Solve()
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		marginal := func(v int) int64 {
			h := g.Net.Clone()
			h.SetSupply(v, h.Supply(v)+1)
			h.SetSupply(g.S, h.Supply(g.S)-1)
			sol, err := flow.Solve(h)
			if err != nil {
				t.Fatalf("iter %d: oracle at node %d: %v", iter, v, err)
			}
			if err := flow.Verify(h, sol); err != nil {
				t.Fatalf("iter %d: oracle solution: %v", iter, err)
			}
			return sol.Cost - out.Cost
		}
		check := func(what string, v int, got int64, ok bool) {
			if !ok {
				t.Fatalf("iter %d: %s has no price (%+v)", iter, what, nodes)
			}
			if want := marginal(v); got != want {
				t.Fatalf("iter %d: price of %s %d, marginal cost %d\nnodes %+v\nparams %+v", iter, what, got, want, nodes, p)
			}
			if got < 0 {
				t.Fatalf("iter %d: negative price %d of %s", iter, got, what)
			}
		}
		for i, l := range g.Loads {
			got, ok := out.Prices.Node[l.Name]
			if g.Comp[i] < 0 {
				if ok {
					t.Fatalf("iter %d: node %s without slots priced", iter, l.Name)
				}
				continue
			}
			check("node "+l.Name, g.Comp[i], got, ok)
		}
		for i, r := range g.Racks {
			got, ok := out.Prices.Rack[r]
			hasSlots := false
			for _, l := range g.Loads {
				hasSlots = hasSlots || l.Rack == r && l.Slots > 0
			}
			if !hasSlots {
				if ok {
					t.Fatalf("iter %d: rack %s without slots priced", iter, r)
				}
				continue
			}
			check("rack "+r, g.RackNode[i], got, ok)
		}
		check("cluster", g.X, out.Prices.Cluster, true)
		// The aggregators' structure: a rack is as cheap as its cheapest
		// node, the cluster as its cheapest rack; a node whose own queued
		// work stays on it is at most ψ·input above its rack and ξ·input
		// above the cluster.
		sol, err := flow.Solve(g.Net)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range g.Loads {
			np, ok := out.Prices.Node[l.Name]
			if !ok {
				continue
			}
			if rp := out.Prices.Rack[l.Rack]; rp > np {
				t.Fatalf("iter %d: rack %s price %d above its node %s's %d", iter, l.Rack, rp, l.Name, np)
			}
			if g.localArc[i] >= 0 && sol.Flow[g.localArc[i]] > 0 {
				if np > out.Prices.Rack[l.Rack]+p.RackCost() || np > out.Prices.Cluster+p.CoreCost() {
					t.Fatalf("iter %d: node %s price %d above rack %d + %d or cluster %d + %d", iter, l.Name, np,
						out.Prices.Rack[l.Rack], p.RackCost(), out.Prices.Cluster, p.CoreCost())
				}
			}
		}
		for r, rp := range out.Prices.Rack {
			if out.Prices.Cluster > rp {
				t.Fatalf("iter %d: cluster price %d above rack %s's %d", iter, out.Prices.Cluster, r, rp)
			}
		}
		if q := out.Local + out.Rack + out.Core; q != g.Net.Supply(g.S)*-1 {
			t.Fatalf("iter %d: %d tasks placed of %d queued", iter, q, -g.Net.Supply(g.S))
		}
	}
}

// TestBuildIsOrderIndependent: the same snapshot in another order gives
// the same prices.
func TestBuildIsOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 50 {
		nodes, p := randomSnapshot(rng)
		a, err := Compute(nodes, p)
		if err != nil {
			t.Fatal(err)
		}
		rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		b, err := Compute(nodes, p)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(a.Prices.Node, b.Prices.Node) || !maps.Equal(a.Prices.Rack, b.Prices.Rack) || a.Prices.Cluster != b.Prices.Cluster || a.Cost != b.Cost {
			t.Fatalf("order changed the outcome: %+v vs %+v", a, b)
		}
	}
}
