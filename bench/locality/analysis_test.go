package locality

import (
	"math"
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestAnalyze(t *testing.T) {
	const mb = 1 << 20
	done := func(where Locality, launched, finished int) TaskOutcome {
		bytes := int64(0)
		if where != NodeLocal {
			bytes = 64 * mb
		}
		return TaskOutcome{Launches: 1, Where: where, Input: 64 * mb, Bytes: bytes, Launched: ms(launched), Finished: ms(finished), Done: true}
	}
	tests := []struct {
		name string
		jobs []JobOutcome
		want ModeStats
	}{
		{name: "empty", want: ModeStats{}},
		{
			name: "two jobs, one refused, one incomplete, one launched twice",
			jobs: []JobOutcome{
				{Submitted: ms(0), Tasks: []TaskOutcome{done(NodeLocal, 10, 110), done(RackLocal, 20, 170)}},
				{Submitted: ms(100), Refused: true, Tasks: []TaskOutcome{{}}},
				{Submitted: ms(200), Tasks: []TaskOutcome{done(Elsewhere, 240, 640), {}}},
				{Submitted: ms(300), Tasks: []TaskOutcome{func() TaskOutcome { d := done(NodeLocal, 300, 400); d.Launches = 2; d.Failed = true; return d }()}},
			},
			want: ModeStats{
				JobsSubmitted: 4, JobsCompleted: 2, JobsRefused: 1, JobsIncomplete: 1,
				TasksSubmitted: 6, TasksLaunched: 4, TasksCompleted: 4, TasksFailed: 1, DuplicateLaunches: 1,
				NodeLocal: 0.5, RackLocal: 0.25, Elsewhere: 0.25,
				BytesWithinRack: 64 * mb, BytesAcrossCore: 64 * mb, CoreFraction: 0.25,
			},
		},
	}
	for _, tt := range tests {
		got := Analyze(tt.jobs, ms(1000))
		// Distributions are checked below.
		got.ResponseMs, got.SchedDelayMs, got.ResponseCensoredMs = tt.want.ResponseMs, tt.want.SchedDelayMs, tt.want.ResponseCensoredMs
		if got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
	// Responses: 170 and 100 ms; delays 10, 20, 40, 0 ms (nearest rank).
	s := Analyze(tests[1].jobs, ms(1000))
	if r := s.ResponseMs; r.N != 2 || r.P50 != 100 || r.P99 != 170 || r.Max != 170 {
		t.Errorf("response %+v", r)
	}
	// Censored: 170, 100 and the unfinished job at 1000 - 200 = 800 ms.
	if r := s.ResponseCensoredMs; r.N != 3 || r.P50 != 170 || r.Max != 800 {
		t.Errorf("censored response %+v", r)
	}
	if d := s.SchedDelayMs; d.N != 4 || d.P50 != 10 || d.P99 != 40 || math.Abs(d.Mean-17.5) > 1e-9 {
		t.Errorf("delay %+v", d)
	}
}

// TestPercentilesNearestRank pins the percentile rule the report uses.
func TestPercentilesNearestRank(t *testing.T) {
	tests := []struct {
		n        int // responses 1..n ms
		p50, p99 float64
	}{{1, 1, 1}, {2, 1, 2}, {100, 50, 99}, {1000, 500, 990}}
	for _, tt := range tests {
		var jobs []JobOutcome
		for i := 1; i <= tt.n; i++ {
			jobs = append(jobs, JobOutcome{Tasks: []TaskOutcome{{Launches: 1, Done: true, Finished: ms(i)}}})
		}
		r := Analyze(jobs, 0).ResponseMs
		if r.P50 != tt.p50 || r.P99 != tt.p99 {
			t.Errorf("n=%d: p50 %g p99 %g, want %g %g", tt.n, r.P50, r.P99, tt.p50, tt.p99)
		}
	}
}
