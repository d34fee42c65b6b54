package racksim

import (
	"slices"
	"testing"
)

func TestTable3Workload(t *testing.T) {
	ins := Table3()
	if len(ins) != 30 {
		t.Fatalf("Table 3 has %d instances, want 30", len(ins))
	}
	parts := map[string]int{}
	for _, in := range ins {
		parts[in.Name] = in.Partitions
	}
	tests := []struct {
		name              string
		partitions, tasks int
		nw                bool
	}{
		{"PrimeSmall2", 2, 2, false},
		{"PrimeSmall2000", 2000, 2000, false},
		{"PrimeLarge", 240, 240, false},
		{"Word100", 100, 101, false},
		{"DatabaseJoin40", 40, 80, true},
		{"DatabaseJoin5", 5, 80, true},
		{"Sort80", 80, 160, true},
		{"PageRank", 240, 240 * 6, true},
	}
	for _, tc := range tests {
		i := slices.IndexFunc(ins, func(in Instance) bool { return in.Name == tc.name })
		if i < 0 {
			t.Errorf("%s missing", tc.name)
			continue
		}
		in := ins[i]
		if in.Partitions != tc.partitions || in.Tasks() != tc.tasks || in.NW != tc.nw {
			t.Errorf("%s: %d partitions, %d tasks, NW %v; want %d, %d, %v", tc.name, in.Partitions, in.Tasks(), in.NW, tc.partitions, tc.tasks, tc.nw)
		}
	}
	nw := 0
	for _, in := range ins {
		if in.NW {
			nw++
		}
	}
	if nw != 6 {
		t.Errorf("%d network-bound instances, want 6 (Fig 5's rightmost six)", nw)
	}
}

func TestWorkloadOrder(t *testing.T) {
	cfg := DefaultConfig()
	a, b := Workload(&cfg), Workload(&cfg)
	if len(a) != 30 || a[0].Name != "PrimeLarge" {
		t.Fatalf("workload has %d instances starting with %s, want 30 starting with PrimeLarge", len(a), a[0].Name)
	}
	cfg2 := cfg
	cfg2.Seed = 99
	c := Workload(&cfg2)
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Name != c[i].Name {
			t.Fatalf("order differs at %d: %s, %s, %s (it must not depend on the run or the seed)", i, a[i].Name, b[i].Name, c[i].Name)
		}
	}
	cfg.NoPrimeLarge = true
	d := Workload(&cfg)
	if len(d) != 29 || slices.ContainsFunc(d, func(in Instance) bool { return in.Name == "PrimeLarge" }) {
		t.Errorf("without PrimeLarge: %d instances", len(d))
	}
	for i := range d {
		if d[i].Name != a[i+1].Name {
			t.Errorf("dropping PrimeLarge changed the order at %d: %s vs %s", i, d[i].Name, a[i+1].Name)
		}
	}
	for _, in := range a {
		for k, p := range in.Phases {
			if p.CPU <= 0 {
				t.Errorf("%s phase %d: CPU %g s after calibration", in.Name, k, p.CPU)
			}
		}
	}
}

// TestCalibration checks the closed-form fit: PrimeSmall's tasks take the
// same CPU time in every instance, whose Table 3 times the estimate
// reproduces for 500 and 2000 partitions from the wave count alone.
func TestCalibration(t *testing.T) {
	cfg := DefaultConfig()
	ins := Workload(&cfg)
	cpu := map[string]float64{}
	for _, in := range ins {
		cpu[in.Name] = in.Phases[0].CPU
	}
	// 242 free computers: 500 tasks take 3 waves, 2000 take 9; 7 s of
	// start-up and wrap-up; reading 0.4 MB from disk takes 2 ms.
	for name, waves := range map[string]float64{"PrimeSmall500": 3, "PrimeSmall2000": 9} {
		in := ins[slices.IndexFunc(ins, func(in Instance) bool { return in.Name == name })]
		want := (in.Ideal-7)/waves - 0.4*MB/cfg.Disk
		if d := cpu[name] - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: CPU %g s, want %g", name, cpu[name], want)
		}
	}
	if cpu["DatabaseJoin5"] != cpu["DatabaseJoin40"] {
		t.Errorf("DatabaseJoin5 CPU %g s, want DatabaseJoin40's %g", cpu["DatabaseJoin5"], cpu["DatabaseJoin40"])
	}
}
