package racksim

import (
	"slices"
	"testing"
)

func TestExperiments(t *testing.T) {
	all, err := ParseExperiments("all")
	if err != nil || !slices.Equal(all, Experiments) {
		t.Fatalf("all = %v, %v", all, err)
	}
	two, err := ParseExperiments("table4,table2")
	if err != nil || !slices.Equal(two, []Experiment{Table4, Table2}) {
		t.Errorf("table4,table2 = %v, %v", two, err)
	}
	if _, err := ParseExperiments("table3"); err == nil {
		t.Errorf("table3 accepted")
	}
	base := DefaultConfig()
	tests := []struct {
		name         string
		cfg          Config
		policy       Policy
		k            int
		uplink       float64
		noPrimeLarge bool
	}{
		{"table2 G", Table2.Config(base, G, 2), G, 1, 6 * Gbit, false},
		{"fig6 QF", Fig6.Config(base, QF, 2), QF, 10, 6 * Gbit, false},
		{"table4 GFP", Table4.Config(base, GFP, 2), GFP, 10, 1 * Gbit, true},
		{"fig6 ideal", Fig6.IdealConfig(base, 2), QP, 1, 6 * Gbit, false},
		{"table4 ideal", Table4.IdealConfig(base, 2), QFPX, 1, 1 * Gbit, true},
	}
	for _, tc := range tests {
		c := tc.cfg
		if c.Policy != tc.policy || c.K != tc.k || c.Uplink != tc.uplink || c.NoPrimeLarge != tc.noPrimeLarge || c.Seed != 2 {
			t.Errorf("%s: policy %s K %d uplink %g noPrimeLarge %v seed %d", tc.name, c.Policy, c.K, c.Uplink, c.NoPrimeLarge, c.Seed)
		}
	}
	if got := Fig6.Policies(false); len(got) != 7 || slices.Contains(got, GFH) {
		t.Errorf("fig6 policies %v", got)
	}
	if got := Fig6.Policies(true); !slices.Contains(got, GFH) {
		t.Errorf("fig6 policies with GFH %v", got)
	}
}

// TestSummarize checks means and sample deviations over runs.
func TestSummarize(t *testing.T) {
	mk := func(ms float64, kills int) *Result {
		return &Result{Makespan: ms, Kills: kills, Jobs: []JobResult{{Name: "a", Time: ms}}}
	}
	s := Summarize(QFP, []*Result{mk(10, 1), mk(20, 3)}, map[string]float64{"a": 10})
	if s.Mean.Makespan != 15 || s.Kills != 2 || s.JobTime["a"] != 15 {
		t.Errorf("mean makespan %g, kills %g, job time %g; want 15, 2, 15", s.Mean.Makespan, s.Kills, s.JobTime["a"])
	}
	if d := s.Std.Makespan - 7.0710678118654755; d > 1e-12 || d < -1e-12 {
		t.Errorf("std makespan %g, want √50", s.Std.Makespan)
	}
	// One job per run, ANP 1 and then 0.5: the runs' SNPs average 0.75.
	if d := s.Mean.SNP - (1+0.5)/2; d > 1e-12 || d < -1e-12 {
		t.Errorf("mean SNP %g, want 0.75 (mean of per-run SNPs 1 and 0.5)", s.Mean.SNP)
	}
}
