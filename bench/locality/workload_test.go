package locality

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func TestTopologyRacks(t *testing.T) {
	tests := []struct {
		topo  Topology
		sizes []int
	}{
		{Topology{Nodes: 40, Racks: 4}, []int{10, 10, 10, 10}},
		{Topology{Nodes: 8, Racks: 2}, []int{4, 4}},
		{Topology{Nodes: 10, Racks: 3}, []int{4, 3, 3}},
	}
	for _, tt := range tests {
		seen := 0
		for r, want := range tt.sizes {
			nodes := tt.topo.RackNodes(r)
			if len(nodes) != want {
				t.Errorf("%+v rack %d: %d nodes, want %d", tt.topo, r, len(nodes), want)
			}
			for _, n := range nodes {
				if tt.topo.RackOf(n) != r {
					t.Errorf("%+v: node %d listed in rack %d but RackOf says %d", tt.topo, n, r, tt.topo.RackOf(n))
				}
			}
			seen += len(nodes)
		}
		if seen != tt.topo.Nodes {
			t.Errorf("%+v: racks hold %d nodes", tt.topo, seen)
		}
	}
	for _, bad := range []Topology{{Nodes: 8, Racks: 1}, {Nodes: 3, Racks: 2}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

// TestPlaceReplicas checks HDFS's rule on many draws: three distinct nodes,
// the second and third in one rack other than the first's, and every node
// used.
func TestPlaceReplicas(t *testing.T) {
	for _, topo := range []Topology{{Nodes: 40, Racks: 4}, {Nodes: 4, Racks: 2}, {Nodes: 9, Racks: 3}} {
		rng := rand.New(rand.NewPCG(1, 2))
		used := make([]bool, topo.Nodes)
		for range 2000 {
			r := PlaceReplicas(rng, topo)
			if r[0] == r[1] || r[1] == r[2] || r[0] == r[2] {
				t.Fatalf("%+v: replicas %v not distinct", topo, r)
			}
			if topo.RackOf(r[1]) != topo.RackOf(r[2]) || topo.RackOf(r[0]) == topo.RackOf(r[1]) {
				t.Fatalf("%+v: replicas %v in racks %d, %d, %d", topo, r, topo.RackOf(r[0]), topo.RackOf(r[1]), topo.RackOf(r[2]))
			}
			for _, n := range r {
				if n < 0 || n >= topo.Nodes {
					t.Fatalf("%+v: replica %d out of range", topo, n)
				}
				used[n] = true
			}
		}
		for n, u := range used {
			if !u {
				t.Errorf("%+v: node %d never holds a replica", topo, n)
			}
		}
	}
}

// TestZipf checks the tabulated law against its formula and the draws'
// frequencies against the law.
func TestZipf(t *testing.T) {
	tests := []struct {
		n int
		s float64
	}{{1, 1.1}, {5, 0}, {10, 1}, {400, 1.1}, {400, 2}}
	for _, tt := range tests {
		z, err := NewZipf(tt.n, tt.s)
		if err != nil {
			t.Fatal(err)
		}
		h := 0.0
		for k := 1; k <= tt.n; k++ {
			h += math.Pow(float64(k), -tt.s)
		}
		sum := 0.0
		for k := range tt.n {
			want := math.Pow(float64(k+1), -tt.s) / h
			if got := z.Prob(k); math.Abs(got-want) > 1e-12 {
				t.Errorf("n=%d s=%g: P(%d) = %g, want %g", tt.n, tt.s, k, got, want)
			}
			sum += z.Prob(k)
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("n=%d s=%g: probabilities sum to %g", tt.n, tt.s, sum)
		}
		// Frequencies of the first ranks within 5 standard deviations.
		rng := rand.New(rand.NewPCG(3, 4))
		const draws = 200000
		count := make([]int, tt.n)
		for range draws {
			k := z.Draw(rng)
			if k < 0 || k >= tt.n {
				t.Fatalf("n=%d: drew %d", tt.n, k)
			}
			count[k]++
		}
		for k := range min(tt.n, 5) {
			p := z.Prob(k)
			sd := math.Sqrt(draws * p * (1 - p))
			if d := math.Abs(float64(count[k]) - draws*p); d > 5*sd+1 {
				t.Errorf("n=%d s=%g: rank %d drawn %d times, want %.0f ± %.0f", tt.n, tt.s, k, count[k], draws*p, 5*sd)
			}
		}
	}
	// The experiment's skew: the hottest of 400 blocks draws about a fifth
	// of the tasks, the top 10 nearly half.
	z, _ := NewZipf(400, 1.1)
	top := 0.0
	for k := range 10 {
		top += z.Prob(k)
	}
	if p := z.Prob(0); p < 0.18 || p > 0.21 || top < 0.5 || top > 0.6 {
		t.Errorf("Zipf(400, 1.1): P(0) = %.3f, top 10 = %.3f", p, top)
	}
	for _, bad := range []struct {
		n int
		s float64
	}{{0, 1}, {10, -1}, {10, math.NaN()}, {10, math.Inf(1)}} {
		if _, err := NewZipf(bad.n, bad.s); err == nil {
			t.Errorf("NewZipf(%d, %g) accepted", bad.n, bad.s)
		}
	}
}

func testWorkload() WorkloadConfig {
	return WorkloadConfig{
		Topology: Topology{Nodes: 40, Racks: 4}, Slots: 2, Blocks: 400, BlockBytes: 64 << 20, ZipfS: 1.1,
		TasksPerJob: 10, Load: 0.7, CPU: 100 * time.Millisecond, Duration: 30 * time.Second, Seed: 42,
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	c := testWorkload()
	a, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(c)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two traces")
	}
	c.Seed++
	d, _ := Generate(c)
	if reflect.DeepEqual(a, d) {
		t.Fatal("another seed gave the same trace")
	}
}

// TestGenerateRate checks the arrivals offer the load asked for (within a
// Poisson count's 5 standard deviations), in order and within the
// duration, with every task reading a block of the catalogue.
func TestGenerateRate(t *testing.T) {
	c := testWorkload()
	tr, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	// 0.7 x 80 slots / (10 tasks x 0.1 s) = 56 jobs/s.
	if got := c.JobsPerSecond(); math.Abs(got-56) > 1e-9 {
		t.Fatalf("rate %g, want 56", got)
	}
	want := 56 * c.Duration.Seconds()
	if n := float64(len(tr.Jobs)); math.Abs(n-want) > 5*math.Sqrt(want) {
		t.Errorf("%d jobs, want %.0f", len(tr.Jobs), want)
	}
	prev := time.Duration(0)
	for i, j := range tr.Jobs {
		if j.At < prev || j.At >= c.Duration {
			t.Fatalf("job %d at %v after %v (duration %v)", i, j.At, prev, c.Duration)
		}
		prev = j.At
		if len(j.Blocks) != c.TasksPerJob {
			t.Fatalf("job %d has %d tasks", i, len(j.Blocks))
		}
		for _, b := range j.Blocks {
			if b < 0 || b >= c.Blocks {
				t.Fatalf("job %d reads block %d", i, b)
			}
		}
	}
	if len(tr.Blocks) != c.Blocks {
		t.Fatalf("%d blocks", len(tr.Blocks))
	}
	bad := c
	bad.Load = 0
	if _, err := Generate(bad); err == nil {
		t.Error("load 0 accepted")
	}
}

func TestClassifyAndReadTime(t *testing.T) {
	topo := Topology{Nodes: 40, Racks: 4} // racks of 10: 0-9, 10-19, ...
	replicas := [3]int{3, 25, 27}
	m := ReadModel{RackBandwidth: DefaultRackBandwidth, CoreBandwidth: DefaultCoreBandwidth}
	tests := []struct {
		node int
		want Locality
		read time.Duration
	}{
		{3, NodeLocal, 0},
		{25, NodeLocal, 0},
		{0, RackLocal, 100 * time.Millisecond},
		{29, RackLocal, 100 * time.Millisecond},
		{10, Elsewhere, 600 * time.Millisecond},
		{39, Elsewhere, 600 * time.Millisecond},
	}
	for _, tt := range tests {
		got := Classify(topo, tt.node, replicas)
		if got != tt.want {
			t.Errorf("node %d: %v, want %v", tt.node, got, tt.want)
		}
		if d := m.ReadTime(64<<20, got); (d - tt.read).Abs() > time.Microsecond {
			t.Errorf("node %d: read %v, want %v", tt.node, d, tt.read)
		}
	}
	if (ReadModel{RackBandwidth: 1}).Validate() == nil {
		t.Error("zero core bandwidth validated")
	}
}

func TestTaskInputRoundTrip(t *testing.T) {
	in := TaskInput{Block: 17, Bytes: 64 << 20, Replicas: [3]int{3, 25, 27}, CPU: 100 * time.Millisecond}
	got, err := ParseTaskInput(in.Encode())
	if err != nil || got != in {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "block=1", "block=1 bytes=2 replicas=1,2 cpu=1s", "block=x bytes=2 replicas=1,2,3 cpu=1s",
		"block=1 bytes=2 replicas=1,2,3 cpu=1s extra=1", "block=1 bytes=2 replicas=1,2,3 cpu"} {
		if _, err := ParseTaskInput([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
