package driver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// WriteSummary's text names the outcome and the lines a fault test
// reads; its JSON is the Summary on one line.
func TestWriteSummary(t *testing.T) {
	ok := Summary{OK: true, RunID: "r1", JobsSubmitted: 2, JobsCompleted: 2, TasksSubmitted: 8, TasksCompleted: 8, ElapsedS: 1.5}
	bad := Summary{RunID: "r2", Error: "retry budget exhausted", RetryBudgetExhausted: true, RetryBudgetExhaustedAt: "t0",
		JobsFailedByBudget: 3, TasksFailedByBudget: 12, FirstLostAt: "t1", LastLostAt: "t2",
		Failovers: []FailoverRecord{{From: "s1", To: "s2", DetectedAt: "t3", InFlightJobs: 4}}}
	for _, tc := range []struct {
		name string
		s    Summary
		want []string
		not  []string
	}{
		{name: "ok", s: ok, want: []string{"sparrow drive r1: ok\n", "jobs completed     2 of 2 (8 tasks of 8)", "elapsed            1.5 s"},
			not: []string{"retry budget       EXHAUSTED", "failover", "lost reports"}},
		{name: "not ok", s: bad, want: []string{"sparrow drive r2: NOT OK: retry budget exhausted\n",
			"retry budget       EXHAUSTED at t0: 3 jobs (12 tasks) failed instead of resubmitted",
			"failover           s1 -> s2 at t3", "lost reports       first t1, last t2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteSummary(&b, tc.s, false); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, b.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("text has %q:\n%s", n, b.String())
				}
			}
			b.Reset()
			if err := WriteSummary(&b, tc.s, true); err != nil {
				t.Fatal(err)
			}
			var back Summary
			if strings.Count(b.String(), "\n") != 1 || json.Unmarshal(b.Bytes(), &back) != nil || back.RunID != tc.s.RunID || back.OK != tc.s.OK {
				t.Errorf("JSON %q does not give the summary back on one line", b.String())
			}
		})
	}
}
