package placement

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// mkNodes returns n nodes with distinct addresses, hosts and names, spread
// over four racks (rack "r<i%4>").
func mkNodes(n int) []Node {
	out := make([]Node, n)
	for i := range out {
		host := fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)
		out[i] = Node{
			Addr:  host + ":20502",
			Host:  host,
			Name:  fmt.Sprintf("nm-%d", i),
			Attrs: map[string]string{RackAttr: fmt.Sprintf("r%d", i%4)},
		}
	}
	return out
}

// free returns m unconstrained tasks t0..t(m-1).
func free(m int) []Task {
	out := make([]Task, m)
	for i := range out {
		out[i] = Task{ID: fmt.Sprintf("t%d", i)}
	}
	return out
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed*7+1)) }

// sumCounts checks probes are well formed (positive counts, distinct nodes in
// candidate order) and returns the total reservations and count per address.
func sumCounts(t *testing.T, nodes []Node, probes []Probe) (int, map[string]int) {
	t.Helper()
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		index[n.Addr] = i
	}
	per := make(map[string]int)
	total, last := 0, -1
	for _, p := range probes {
		i, ok := index[p.Node.Addr]
		if !ok {
			t.Fatalf("probe on %q, which is not a candidate", p.Node.Addr)
		}
		if !reflect.DeepEqual(p.Node, nodes[i]) {
			t.Fatalf("probe node %+v differs from candidate %+v", p.Node, nodes[i])
		}
		if p.Count <= 0 {
			t.Fatalf("probe on %s has count %d", p.Node.Addr, p.Count)
		}
		if _, dup := per[p.Node.Addr]; dup {
			t.Fatalf("node %s appears in two probes; they should be merged", p.Node.Addr)
		}
		if i <= last {
			t.Fatalf("probes not in candidate order: index %d after %d", i, last)
		}
		last = i
		per[p.Node.Addr] = p.Count
		total += p.Count
	}
	return total, per
}

func TestCheckProbeRatio(t *testing.T) {
	tests := []struct {
		d       float64
		wantErr string // "" means valid
	}{
		{1, ""},
		{1.0000001, ""},
		{1.1, ""},
		{2, ""},
		{99.99, ""},
		{MaxProbeRatio, ""},
		{math.NaN(), "not a finite number"},
		{math.Inf(1), "not a finite number"},
		{math.Inf(-1), "not a finite number"},
		{0, "below 1"},
		{0.999, "below 1"},
		{-2, "below 1"},
		{math.SmallestNonzeroFloat64, "below 1"},
		{100.0001, "above the maximum"},
		{1e300, "above the maximum"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.d), func(t *testing.T) {
			err := CheckProbeRatio(tt.d)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckProbeRatio(%v) = %v, want nil", tt.d, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckProbeRatio(%v) = %v, want error containing %q", tt.d, err, tt.wantErr)
			}
		})
	}
}

func TestReservations(t *testing.T) {
	tests := []struct {
		d    float64
		m    int
		want int
	}{
		{1, 0, 0},
		{2, 0, 0},
		{1, 1, 1},
		{1, 500, 500},
		{1.1, 1, 2},
		{1.1, 10, 11}, // 1.1*10 is 11.000000000000002 in floating point
		{1.1, 11, 13},
		{1.1, 500, 550},
		{1.5, 1, 2},
		{1.5, 2, 3},
		{1.5, 3, 5},
		{2, 3, 6}, // not 7 through rounding
		{2, 500, 1000},
		{3, 1, 3},
		{3, 7, 21},
		{3, 500, 1500},
		{100, 3, 300},
	}
	for _, tt := range tests {
		if got := Reservations(tt.d, tt.m); got != tt.want {
			t.Errorf("Reservations(%v, %d) = %d, want %d", tt.d, tt.m, got, tt.want)
		}
	}
	// Exhaustively, for ratios that are exact decimals num/100, ceil(d*m)
	// computed in integers.
	for _, num := range []int{100, 101, 110, 125, 150, 175, 199, 200, 250, 300, 1000} {
		d := float64(num) / 100
		for m := 1; m <= 500; m++ {
			want := (num*m + 99) / 100
			if got := Reservations(d, m); got != want {
				t.Fatalf("Reservations(%v, %d) = %d, want %d", d, m, got, want)
			}
		}
	}
}

func TestPlanBatchSamplingDistinct(t *testing.T) {
	ratios := []float64{1, 1.1, 1.5, 2, 3}
	sizes := []int{1, 2, 3, 5, 10, 17, 50, 100, 333, 500}
	for _, d := range ratios {
		for _, m := range sizes {
			want := Reservations(d, m)
			for _, n := range []int{want, want + 1, 2*want + 3, 1700} {
				if n < want {
					continue
				}
				t.Run(fmt.Sprintf("d=%v/m=%d/n=%d", d, m, n), func(t *testing.T) {
					nodes := mkNodes(n)
					var s Sampler
					probes, err := s.Plan(newRNG(uint64(n*1000+m)), nodes, free(m), d)
					if err != nil {
						t.Fatal(err)
					}
					total, per := sumCounts(t, nodes, probes)
					if total != want {
						t.Fatalf("placed %d reservations, want ceil(%v*%d) = %d", total, d, m, want)
					}
					if len(per) != want {
						t.Fatalf("used %d nodes for %d reservations; want all distinct", len(per), want)
					}
				})
			}
		}
	}
}

func TestPlanSpreadsEvenlyOverFewerNodes(t *testing.T) {
	tests := []struct {
		d    float64
		m, n int
	}{
		{1, 5, 1},
		{2, 1, 1},
		{3, 1, 2},
		{1.5, 7, 10}, // 11 reservations, 10 nodes
		{1.1, 10, 10},
		{2, 3, 4},
		{2, 500, 3},
		{2, 500, 999},
		{3, 500, 7},
		{1.1, 500, 549},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("d=%v/m=%d/n=%d", tt.d, tt.m, tt.n), func(t *testing.T) {
			want := Reservations(tt.d, tt.m)
			if want <= tt.n {
				t.Fatalf("bad case: %d reservations fit on %d nodes", want, tt.n)
			}
			nodes := mkNodes(tt.n)
			for seed := uint64(0); seed < 5; seed++ {
				var s Sampler
				probes, err := s.Plan(newRNG(seed), nodes, free(tt.m), tt.d)
				if err != nil {
					t.Fatal(err)
				}
				total, per := sumCounts(t, nodes, probes)
				if total != want {
					t.Fatalf("placed %d reservations, want %d", total, want)
				}
				if len(per) != tt.n {
					t.Fatalf("used %d of %d nodes; every node should get some", len(per), tt.n)
				}
				lo, hi := want/tt.n, (want+tt.n-1)/tt.n
				for addr, c := range per {
					if c < lo || c > hi {
						t.Fatalf("node %s got %d reservations, want %d or %d", addr, c, lo, hi)
					}
				}
			}
		})
	}
}

func TestPlanDeterministicForSeed(t *testing.T) {
	nodes := mkNodes(300)
	tasks := append(free(40), Task{ID: "c1", Racks: []string{"r1"}}, Task{ID: "c2", Nodes: []string{"nm-7", "10.0.0.9", "nm-200"}})
	run := func(seed uint64) [][]Probe {
		var s Sampler // one sampler across calls, as the scheduler keeps one
		rng := newRNG(seed)
		var out [][]Probe
		for _, n := range []int{300, 300, 50, 300, 7} {
			p, err := s.Plan(rng, nodes[:n], tasks[:min(len(tasks), 5*n)], 1.5)
			if err != nil && n > 7 {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		return out
	}
	a, b := run(42), run(42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different plans")
	}
	differs := false
	for seed := uint64(1); seed < 5 && !differs; seed++ {
		differs = !reflect.DeepEqual(a, run(42+seed))
	}
	if !differs {
		t.Fatal("different seeds always gave the same plans; is the rng used at all?")
	}
}

// chiSquare returns sum((obs-exp)^2/exp) for a uniform expectation.
func chiSquare(counts []int, expected float64) float64 {
	x := 0.0
	for _, c := range counts {
		diff := float64(c) - expected
		x += diff * diff / expected
	}
	return x
}

// The uniformity checks use fixed seeds, so they are deterministic; the
// bounds are loose (far beyond the p=1e-6 quantile) and only catch a badly
// skewed sampler, such as one that always prefers low indices.
func TestPlanUniform(t *testing.T) {
	const draws = 10000
	tests := []struct {
		name  string
		n, m  int
		d     float64
		tasks func() []Task
	}{
		{name: "batch k<n", n: 20, m: 5, d: 1},
		{name: "batch d=1.5", n: 30, m: 4, d: 1.5},
		{name: "batch remainder spread", n: 10, m: 15, d: 1}, // 1 each + 5 extra
		{name: "reused sampler k close to n", n: 12, m: 11, d: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := mkNodes(tt.n)
			idx := make(map[string]int)
			for i, n := range nodes {
				idx[n.Addr] = i
			}
			counts := make([]int, tt.n)
			var s Sampler
			rng := newRNG(7)
			want := Reservations(tt.d, tt.m)
			for range draws {
				probes, err := s.Plan(rng, nodes, free(tt.m), tt.d)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range probes {
					counts[idx[p.Node.Addr]] += p.Count
				}
			}
			exp := float64(draws*want) / float64(tt.n)
			if x := chiSquare(counts, exp); x > 3*float64(tt.n)+60 {
				t.Fatalf("chi-square %.1f over %d nodes: counts %v (expected %.0f each)", x, tt.n, counts, exp)
			}
		})
	}

	t.Run("constrained per-task over allowed nodes", func(t *testing.T) {
		nodes := mkNodes(40) // racks r0..r3, 10 nodes each
		task := Task{ID: "c", Racks: []string{"r2"}}
		counts := make(map[string]int)
		var s Sampler
		rng := newRNG(9)
		for range draws {
			probes, err := s.Plan(rng, nodes, []Task{task}, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range probes {
				counts[p.Node.Addr] += p.Count
			}
		}
		if len(counts) != 10 {
			t.Fatalf("probes reached %d nodes, want the 10 in rack r2", len(counts))
		}
		var cs []int
		for _, c := range counts {
			cs = append(cs, c)
		}
		if x := chiSquare(cs, float64(draws*2)/10); x > 90 {
			t.Fatalf("chi-square %.1f over rack r2: %v", x, counts)
		}
	})
}

func TestTaskAllows(t *testing.T) {
	n := Node{Addr: "10.0.0.1:20502", Host: "10.0.0.1", Name: "nm-a", Attrs: map[string]string{RackAttr: "r1"}}
	bare := Node{Addr: "10.0.0.2:20502", Host: "10.0.0.2"}
	tests := []struct {
		name string
		task Task
		node Node
		want bool
	}{
		{"unconstrained", Task{ID: "t"}, n, true},
		{"unconstrained bare node", Task{ID: "t"}, bare, true},
		{"by host", Task{Nodes: []string{"10.0.0.9", "10.0.0.1"}}, n, true},
		{"by name", Task{Nodes: []string{"nm-a"}}, n, true},
		{"by addr is not a host", Task{Nodes: []string{"10.0.0.1:20502"}}, n, false},
		{"other host", Task{Nodes: []string{"10.0.0.9"}}, n, false},
		{"empty name never matches", Task{Nodes: []string{""}}, bare, false},
		{"by rack", Task{Racks: []string{"r0", "r1"}}, n, true},
		{"other rack", Task{Racks: []string{"r2"}}, n, false},
		{"rack but node has no attrs", Task{Racks: []string{"r1"}}, bare, false},
		{"node or rack: rack matches", Task{Nodes: []string{"x"}, Racks: []string{"r1"}}, n, true},
		{"node or rack: node matches", Task{Nodes: []string{"nm-a"}, Racks: []string{"r9"}}, n, true},
		{"node or rack: neither", Task{Nodes: []string{"x"}, Racks: []string{"r9"}}, n, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.task.Allows(tt.node); got != tt.want {
				t.Fatalf("Allows = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlanPreferences(t *testing.T) {
	nodes := mkNodes(24) // hosts 10.0.0.1..24, names nm-0..23, racks r0..r3
	tests := []struct {
		name  string
		tasks []Task
		d     float64
		// want is the total reservation count.
		want int
		// maxPerNode, if set, bounds the count on any one node.
		maxPerNode int
	}{
		{name: "by host", tasks: []Task{{ID: "a", Nodes: []string{"10.0.0.2", "10.0.0.3", "10.0.0.4"}}}, d: 2, want: 2, maxPerNode: 1},
		{name: "by name", tasks: []Task{{ID: "a", Nodes: []string{"nm-5", "nm-6", "nm-17"}}}, d: 2, want: 2, maxPerNode: 1},
		{name: "by rack", tasks: []Task{{ID: "a", Racks: []string{"r3"}}}, d: 3, want: 3, maxPerNode: 1},
		{name: "host or rack", tasks: []Task{{ID: "a", Nodes: []string{"nm-0"}, Racks: []string{"r1"}}}, d: 2, want: 2, maxPerNode: 1},
		{name: "d=1.1 means two per task", tasks: []Task{{ID: "a", Racks: []string{"r0"}}}, d: 1.1, want: 2, maxPerNode: 1},
		{name: "fewer allowed than ceil(d) spreads", tasks: []Task{{ID: "a", Nodes: []string{"nm-1", "nm-2"}}}, d: 3, want: 3, maxPerNode: 2},
		{name: "single allowed node takes all", tasks: []Task{{ID: "a", Nodes: []string{"nm-9"}}}, d: 2, want: 2, maxPerNode: 2},
		{
			name: "several constrained tasks",
			tasks: []Task{
				{ID: "a", Nodes: []string{"nm-0", "nm-1", "nm-2"}},
				{ID: "b", Nodes: []string{"nm-2", "nm-3", "nm-4"}},
				{ID: "c", Racks: []string{"r2"}},
			},
			d: 2, want: 6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := uint64(0); seed < 50; seed++ {
				var s Sampler
				probes, err := s.Plan(newRNG(seed), nodes, tt.tasks, tt.d)
				if err != nil {
					t.Fatal(err)
				}
				total, _ := sumCounts(t, nodes, probes)
				if total != tt.want {
					t.Fatalf("seed %d: %d reservations, want %d", seed, total, tt.want)
				}
				for _, p := range probes {
					allowed := false
					for _, task := range tt.tasks {
						allowed = allowed || task.Allows(p.Node)
					}
					if !allowed {
						t.Fatalf("seed %d: probe on %s (%s, rack %s) allowed by no task", seed, p.Node.Name, p.Node.Host, p.Node.Attrs[RackAttr])
					}
					if tt.maxPerNode > 0 && p.Count > tt.maxPerNode {
						t.Fatalf("seed %d: %d reservations on %s, want at most %d", seed, p.Count, p.Node.Name, tt.maxPerNode)
					}
				}
			}
		})
	}
}

func TestPlanMixedConstrainedAndFree(t *testing.T) {
	nodes := mkNodes(100)
	tasks := append(free(10), Task{ID: "c0", Racks: []string{"r1"}}, Task{ID: "c1", Nodes: []string{"nm-3"}})
	for _, d := range []float64{1, 1.5, 2, 3} {
		var s Sampler
		probes, err := s.Plan(newRNG(3), nodes, tasks, d)
		if err != nil {
			t.Fatal(err)
		}
		total, per := sumCounts(t, nodes, probes)
		want := Reservations(d, 10) + 2*Reservations(d, 1)
		if total != want {
			t.Fatalf("d=%v: %d reservations, want ceil(d*10)+2*ceil(d) = %d", d, total, want)
		}
		// nm-3 is the only node c1 allows: it holds all of c1's reservations.
		if per[nodes[3].Addr] < Reservations(d, 1) {
			t.Fatalf("d=%v: nm-3 holds %d reservations, want at least %d for c1", d, per[nodes[3].Addr], Reservations(d, 1))
		}
	}
}

func TestPlanErrors(t *testing.T) {
	nodes := mkNodes(5)
	tests := []struct {
		name    string
		nodes   []Node
		tasks   []Task
		d       float64
		wantErr []string // substrings; nil means success
		is      error
	}{
		{name: "no tasks, no nodes", nodes: nil, tasks: nil, d: 2},
		{name: "no nodes", nodes: nil, tasks: free(1), d: 2, wantErr: []string{"no live node"}, is: ErrNoCandidates},
		{name: "bad ratio first", nodes: nodes, tasks: nil, d: math.NaN(), wantErr: []string{"finite"}},
		{name: "ratio below one", nodes: nodes, tasks: free(3), d: 0.5, wantErr: []string{"below 1"}},
		{
			name:  "constrained task with no allowed node",
			nodes: nodes,
			tasks: append(free(2), Task{ID: "needle-task", Nodes: []string{"gone-host"}, Racks: []string{"r9"}}),
			d:     2, wantErr: []string{`"needle-task"`, "gone-host", "r9"}, is: ErrNoCandidates,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sampler
			probes, err := s.Plan(newRNG(1), tt.nodes, tt.tasks, tt.d)
			if tt.wantErr == nil {
				if err != nil || probes != nil {
					t.Fatalf("Plan = %v, %v; want nothing and no error", probes, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Plan succeeded with %v, want error", probes)
			}
			for _, sub := range tt.wantErr {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("error %q does not mention %q", err, sub)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
}

// TestPicksScannedMatchSorted checks that PlanPicks's two ways of listing
// the picked nodes (sorting the touched nodes, or scanning every node's
// count when many are touched) give the same picks and leave the Sampler
// in the same state, at densities on both sides of denseScan, and that
// PlanPicks gives the same picks whichever it uses, also when it lists
// distinct picks straight from the permutation (appendDistinct).
func TestPicksScannedMatchSorted(t *testing.T) {
	tests := []struct {
		name     string
		nodes    int
		tasks    int
		d        float64
		wantScan bool // PlanPicks scans rather than sorts
	}{
		{"one task of many nodes", 1000, 1, 2, false},
		{"just below the scan density", 1024, 31, 2, false},
		{"at the scan density", 1024, 32, 2, true},
		{"Figure 3 job", 10000, 500, 2, true},
		{"all but one node", 100, 99, 1, true},
		{"as many reservations as nodes", 100, 50, 2, true},
		{"more reservations than nodes", 10, 40, 1.5, true},
		{"single node", 1, 3, 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := make([]Node, tc.nodes)
			for i := range nodes {
				nodes[i] = Node{Addr: fmt.Sprint("n", i)}
			}
			tasks := make([]Task, tc.tasks)
			for i := range tasks {
				tasks[i] = Task{ID: fmt.Sprint(i)}
			}
			var plan, sorted, scanned Sampler
			draws := Reservations(tc.d, tc.tasks)
			for round := range 5 {
				// The same draws (same stream, same permutation state)
				// into two Samplers, listed both ways, and through
				// PlanPicks into a third.
				for _, sp := range []*Sampler{&sorted, &scanned} {
					sp.resize(tc.nodes)
					rng := rand.New(rand.NewPCG(uint64(round), 1))
					sp.pick(rng, tc.nodes, draws, sp.add)
				}
				if got := len(sorted.touched)*denseScan >= tc.nodes; got != tc.wantScan {
					t.Fatalf("round %d: %d of %d nodes touched: scan %v, want %v", round, len(sorted.touched), tc.nodes, got, tc.wantScan)
				}
				a := sorted.appendSorted(nil)
				b := scanned.appendScanned(nil)
				if !slices.Equal(a, b) {
					t.Fatalf("round %d: sorted %v, scanned %v", round, a, b)
				}
				for _, sp := range []*Sampler{&sorted, &scanned} {
					if len(sp.touched) != 0 || slices.ContainsFunc(sp.cnt, func(c int32) bool { return c != 0 }) ||
						slices.ContainsFunc(sp.seen, func(w uint64) bool { return w != 0 }) {
						t.Fatalf("round %d: counts not reset", round)
					}
				}
				picks, err := plan.PlanPicks(nil, rand.New(rand.NewPCG(uint64(round), 1)), nodes, tasks, tc.d)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(picks, a) {
					t.Fatalf("round %d: PlanPicks %v, sorted listing %v", round, picks, a)
				}
			}
		})
	}
}
