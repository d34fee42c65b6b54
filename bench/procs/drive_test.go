package procs

import (
	"testing"

	"github.com/sparrowfleet/sparrow/bench/driver"
)

func TestShare(t *testing.T) {
	cases := []struct{ total, n, want0, want1, wantLast int }{
		{10, 1, 10, 0, 10},
		{10, 3, 4, 3, 3},
		{11, 3, 4, 4, 3},
		{2, 2, 1, 1, 1},
	}
	for _, c := range cases {
		sum := 0
		for i := range c.n {
			sum += share(c.total, c.n, i)
		}
		if sum != c.total {
			t.Errorf("share(%d, %d, ·) sums to %d", c.total, c.n, sum)
		}
		if got := share(c.total, c.n, 0); got != c.want0 {
			t.Errorf("share(%d, %d, 0) = %d, want %d", c.total, c.n, got, c.want0)
		}
		if c.n > 1 {
			if got := share(c.total, c.n, 1); got != c.want1 {
				t.Errorf("share(%d, %d, 1) = %d, want %d", c.total, c.n, got, c.want1)
			}
		}
		if got := share(c.total, c.n, c.n-1); got != c.wantLast {
			t.Errorf("share(%d, %d, last) = %d, want %d", c.total, c.n, got, c.wantLast)
		}
	}
}

// TestMergeDrives: counts add up, percentiles come from the pooled
// samples (not an average of the drivers' percentiles), and a failed
// driver fails the merge with its error named.
func TestMergeDrives(t *testing.T) {
	a := driver.Summary{OK: true, RunID: "a", Schedulers: []string{"s1", "s2"}, RateJobsPerSec: 10,
		JobsSubmitted: 2, JobsCompleted: 2, TasksSubmitted: 4, TasksCompleted: 4, AttemptTasks: 4,
		ResubmittedBy: map[string]int{"lost": 1},
		Samples:       &driver.Samples{ResponseMs: []float64{1, 2}, SchedDelayMs: []float64{1, 1, 1, 1}}}
	b := driver.Summary{OK: false, Error: "deadline passed", RunID: "b", Schedulers: []string{"s2", "s1"}, RateJobsPerSec: 10,
		JobsSubmitted: 2, JobsCompleted: 1, TasksSubmitted: 4, TasksCompleted: 2, AttemptTasks: 5,
		ResubmittedBy: map[string]int{"lost": 2, "failover": 1},
		Samples:       &driver.Samples{ResponseMs: []float64{100}, SchedDelayMs: []float64{9, 9}},
		Failovers:     []driver.FailoverRecord{{}}}
	m := mergeDrives([]driver.Summary{a, b})
	if m.OK || m.Error != "driver 2: deadline passed" {
		t.Errorf("OK %v, error %q: want not OK, driver 2's error", m.OK, m.Error)
	}
	if m.JobsSubmitted != 4 || m.JobsCompleted != 3 || m.TasksCompleted != 6 || m.AttemptTasks != 9 || m.RateJobsPerSec != 20 {
		t.Errorf("counts %+v", m)
	}
	if m.ResubmittedBy["lost"] != 3 || m.ResubmittedBy["failover"] != 1 || len(m.Failovers) != 1 {
		t.Errorf("resubmissions %v, failovers %d", m.ResubmittedBy, len(m.Failovers))
	}
	if m.SchedDelayMs.N != 6 || m.SchedDelayMs.P50 != 1 || m.SchedDelayMs.Max != 9 {
		t.Errorf("delay %+v: want 6 pooled samples, median 1, max 9", m.SchedDelayMs)
	}
	if m.ResponseMs.N != 3 || m.ResponseMs.P50 != 2 {
		t.Errorf("response %+v: want 3 pooled samples, median 2", m.ResponseMs)
	}
	if len(m.Schedulers) != 2 || m.Schedulers[0] != "s1" || m.Schedulers[1] != "s2" || m.RunID != "a,b" {
		t.Errorf("schedulers %v, run id %q", m.Schedulers, m.RunID)
	}
	one := mergeDrives([]driver.Summary{a})
	if one.Samples != nil || one.JobsSubmitted != 2 {
		t.Errorf("one driver: %+v, want its summary without samples", one)
	}
}
