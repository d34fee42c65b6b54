package constrained

import (
	"math"
	"reflect"
	"testing"

	"github.com/sparrowfleet/sparrow/core/placement"
)

func TestSortedRMSE(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, b  []float64
		total float64
		want  float64
	}{
		{"same multiset, other order", []float64{1, 3}, []float64{3, 1}, 4, 0},
		{"zero padding", []float64{2}, []float64{0, 2}, 4, 0},
		{"opposite halves", []float64{4, 0}, []float64{2, 2}, 4, 50},
		{"one of three off by one of ten", []float64{1, 2, 3}, []float64{1, 2, 4}, 10, math.Sqrt(100.0 / 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SortedRMSE(tc.a, tc.b, tc.total); math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("SortedRMSE(%v, %v, %v) = %v, want %v", tc.a, tc.b, tc.total, got, tc.want)
			}
		})
	}
	if got := SortedRMSE(nil, nil, 1); !math.IsNaN(got) {
		t.Fatalf("SortedRMSE of nothing = %v, want NaN", got)
	}
}

func TestPairRMSE(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []Share
		want float64
	}{
		{"different jobs, same sorted vector", []Share{{1, 2}}, []Share{{2, 2}}, 0},
		// x = (3, 1), y = (2, 0): sorted (1, 3) vs (0, 2), 10% each.
		{"job gone from one run", []Share{{1, 3}, {2, 1}}, []Share{{1, 2}}, 10},
		{"idle job counts", []Share{{1, 0}, {2, 4}}, []Share{{2, 4}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PairRMSE(tc.a, tc.b, 10); math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("PairRMSE = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRestrictedLeximin(t *testing.T) {
	names := []string{"A", "B"}
	for _, tc := range []struct {
		name  string
		free  []int64
		users []Waiting
		want  [][]int64
	}{
		{
			// One freed slot goes to the eligible user with the least.
			name: "one slot to the lowest", free: []int64{1, 0},
			users: []Waiting{{"a", []int{0}, 2, 5}, {"b", []int{0}, 0, 5}},
			want:  [][]int64{{0, 0}, {1, 0}},
		},
		{
			// b runs 1 and may use only A; a may use both: totals (2, 2)
			// need b to take one A and a the other A and the B.
			name: "constrained user gets its type", free: []int64{2, 1},
			users: []Waiting{{"a", []int{0, 1}, 0, 5}, {"b", []int{0}, 1, 5}},
			want:  [][]int64{{1, 1}, {1, 0}},
		},
		{
			// a wants one more task only; b, at 3, takes the other two.
			name: "demand caps", free: []int64{3, 0},
			users: []Waiting{{"a", []int{0}, 0, 1}, {"b", []int{0}, 3, 5}},
			want:  [][]int64{{1, 0}, {2, 0}},
		},
		{
			// Running tasks are not moved: b keeps 4 while a, at 0,
			// takes both free slots.
			name: "no preemption", free: []int64{0, 2},
			users: []Waiting{{"a", []int{0, 1}, 0, 9}, {"b", []int{1}, 4, 9}},
			want:  [][]int64{{0, 2}, {0, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RestrictedLeximin(names, tc.free, tc.users)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDefaultModelMatchesPaper(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Jobs = 20000
	c, err := NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := WorkloadStats(c)
	// The paper (§7.1): 38% usable on average, 40% of jobs under 20%,
	// 30% under 10%, 1.8 constraints per job.
	for _, chk := range []struct {
		name      string
		got, want float64
	}{
		{"mean usable fraction", s.MeanUsable, 0.38},
		{"jobs under 20%", s.Under20, 0.40},
		{"jobs under 10%", s.Under10, 0.30},
		{"constraints per job", s.Constraints / 10, 0.18},
	} {
		if math.Abs(chk.got-chk.want) > 0.025 {
			t.Errorf("%s = %.3f, want %.2f ± 0.025", chk.name, chk.got, chk.want)
		}
	}
}

func TestNodesFollowTheModel(t *testing.T) {
	m := DefaultModel()
	for _, n := range []int{8, 100, 1000, 1001} {
		nodes, types := m.Nodes(n)
		if len(nodes) != n || len(types) != n {
			t.Fatalf("Nodes(%d) built %d nodes", n, len(nodes))
		}
		for i, nd := range nodes {
			mt := m.Types[types[i]]
			if nd.Attrs["type"] != mt.Name {
				t.Fatalf("node %d: type attr %q, want %q", i, nd.Attrs["type"], mt.Name)
			}
			for k, c := range m.Constraints {
				has := placement.Constraint{Key: c.Key, Op: placement.OpExists}.Matches(nd)
				want := false
				for _, a := range mt.Attrs {
					want = want || a == k
				}
				if has != want {
					t.Fatalf("node %d of type %s: constraint %s matches = %v, want %v", i, mt.Name, c.Key, has, want)
				}
			}
		}
	}
	counts := m.typeCounts(1000)
	want := []int{350, 200, 150, 100, 80, 50, 40, 30}
	if !reflect.DeepEqual(counts, want) {
		t.Fatalf("typeCounts(1000) = %v, want %v", counts, want)
	}
}

// smallConfig is a quick run: 100 nodes x 2 slots, 40 jobs in 5 minutes.
func smallConfig() Config {
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Slots, cfg.Jobs, cfg.Duration, cfg.TaskMean = 100, 2, 40, 300, 5
	return cfg
}

func TestDeterministic(t *testing.T) {
	for _, p := range Policies() {
		t.Run(p.String(), func(t *testing.T) {
			var runs [2]*Trace
			for i := range runs {
				c, err := NewCluster(smallConfig())
				if err != nil {
					t.Fatal(err)
				}
				if runs[i], err = Run(c, p); err != nil {
					t.Fatal(err)
				}
			}
			if runs[0].Tasks == 0 || len(runs[0].Samples) == 0 {
				t.Fatalf("empty run: %d tasks, %d samples", runs[0].Tasks, len(runs[0].Samples))
			}
			// NaN (no job active) never equals itself: compare a marker.
			for _, r := range runs {
				for k, v := range r.IdealRMSE {
					if math.IsNaN(v) {
						r.IdealRMSE[k] = -1
					}
				}
			}
			if !reflect.DeepEqual(runs[0], runs[1]) {
				t.Fatal("two runs with the same seed differ")
			}
		})
	}
	// A different seed draws a different workload.
	a, _ := NewCluster(smallConfig())
	cfg := smallConfig()
	cfg.Seed = 2
	b, _ := NewCluster(cfg)
	if reflect.DeepEqual(a.Jobs, b.Jobs) {
		t.Fatal("seeds 1 and 2 drew the same jobs")
	}
}

// twoUsers is the paper's motivating case: 10 one-slot nodes, 2 of a
// type X only user a may use, 8 of type Y; b may use both. Both are
// backlogged with 1 s tasks. CMMF gives a both X nodes: (2, 8).
func twoUsers(t *testing.T) *Cluster {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Nodes, cfg.Slots, cfg.Jobs, cfg.Duration = 10, 1, 2, 1
	cfg.Model = Model{
		Types:       []MachineType{{Name: "X", Fraction: 0.2, Attrs: []int{0, 1}}, {Name: "Y", Fraction: 0.8, Attrs: []int{0}}},
		Constraints: []ConstraintSpec{{Key: "c0"}, {Key: "c1"}},
	}
	c, err := NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dur := func(n int) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = 1
		}
		return d
	}
	c.Jobs = []Job{
		{User: "a", Arrival: 0, Dur: dur(200), Constraints: []placement.Constraint{{Key: "c1", Op: placement.OpExists}}, Types: []int{0}},
		{User: "b", Arrival: 0, Dur: dur(2000), Types: []int{0, 1}},
	}
	return c
}

func TestConstrainedUserGetsItsCMMFShare(t *testing.T) {
	c := twoUsers(t)
	for _, tc := range []struct {
		p      Policy
		lo, hi float64 // bounds on a's mean running tasks over t in [10, 90) s
	}{
		{Offline, 2, 2},
		{ChoosyExact, 1.9, 2},
		{Choosy, 1.9, 2},
		{Fair, 0.8, 1.2}, // the X nodes alternate between a and b
	} {
		t.Run(tc.p.String(), func(t *testing.T) {
			tr, err := Run(c, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			sum, n := 0.0, 0
			for k := 10; k < 90; k++ {
				for _, s := range tr.Samples[k] {
					if s.Job == 0 {
						sum += float64(s.Running)
						n++
					}
				}
			}
			if n != 80 {
				t.Fatalf("user a active in %d of 80 samples", n)
			}
			if got := sum / float64(n); got < tc.lo || got > tc.hi {
				t.Fatalf("user a's mean running tasks = %.3f, want in [%v, %v] (CMMF: 2)", got, tc.lo, tc.hi)
			}
		})
	}
}

// Without constraints CMMF is plain max-min fairness, and Choosy should
// track the Restricted Offline allocation closely.
func TestUnconstrainedChoosyMatchesOffline(t *testing.T) {
	cfg := smallConfig()
	cfg.Model = Model{Types: []MachineType{{Name: "any", Fraction: 1, Attrs: []int{0}}}, Constraints: []ConstraintSpec{{Key: "c0"}}}
	c, err := NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range c.Jobs {
		if len(j.Constraints) != 0 {
			t.Fatalf("job %s has constraints %v", j.User, j.Constraints)
		}
	}
	ref, err := Run(c, Offline)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Policy{ChoosyExact, Choosy} {
		tr, err := Run(c, p)
		if err != nil {
			t.Fatal(err)
		}
		s := Compare(c, tr, ref)
		t.Logf("%s: RMSE vs offline mean %.3f%% p95 %.3f%%, vs ideal %.3f%%, slowdown %.3f", p, s.RMSEMean, s.RMSEP95, s.IdealRMSEMean, s.SlowdownMean)
		if s.RMSEMean > 0.5 || s.SlowdownMean > 1.1 {
			t.Errorf("%s: mean RMSE vs offline %.3f%% (want <= 0.5%%), mean slowdown %.3f (want <= 1.1)", p, s.RMSEMean, s.SlowdownMean)
		}
	}
}

func TestParsePolicies(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Policy
		err  bool
	}{
		{"all", Policies(), false},
		{"choosy", []Policy{Choosy, Offline}, false},
		{"fair,offline", []Policy{Fair, Offline}, false},
		{"choosy,choosy", nil, true},
		{"nope", nil, true},
	} {
		got, err := ParsePolicies(tc.in)
		if (err != nil) != tc.err || (!tc.err && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("ParsePolicies(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mut  func(*Config)
	}{
		{"no nodes", func(c *Config) { c.Nodes = 0 }},
		{"fewer nodes than types", func(c *Config) { c.Nodes = 3 }},
		{"alpha 1", func(c *Config) { c.ParetoAlpha = 1 }},
		{"NaN mean", func(c *Config) { c.TaskMean = math.NaN() }},
		{"probe ratio below 1", func(c *Config) { c.ProbeRatio = 0.5 }},
		{"zero period", func(c *Config) { c.Period = 0 }},
	} {
		cfg := DefaultConfig()
		tc.mut(&cfg)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", tc.name, cfg)
		}
	}
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
}
