package locality

import (
	"time"

	"github.com/sparrowfleet/sparrow/internal/stats"
)

// JobOutcome is what one job of the trace went through in one mode, on the
// run's clock (durations since the first arrival could have happened).
type JobOutcome struct {
	// Submitted is when the frontend sent the job; Refused that no
	// scheduler took it.
	Submitted time.Duration
	Refused   bool
	Tasks     []TaskOutcome
}

// TaskOutcome is one task's launches and completion.
type TaskOutcome struct {
	// Launches counts executor launches; more than one is a task launched
	// twice.
	Launches int
	// Node is where the first launch ran, Where its locality, Input the
	// size of the block it read and Bytes the bytes it moved over the
	// network (0 when node-local).
	Node         int
	Where        Locality
	Input, Bytes int64
	// Launched is the first launch; Finished when the frontend heard the
	// task's result (Done) and Failed whether that result was a failure.
	Launched, Finished time.Duration
	Done, Failed       bool
}

// ModeStats summarises one mode's outcome. JSON names are part of the
// CLI's output.
type ModeStats struct {
	JobsSubmitted  int `json:"jobs_submitted"`
	JobsCompleted  int `json:"jobs_completed"`
	JobsRefused    int `json:"jobs_refused"`
	JobsIncomplete int `json:"jobs_incomplete"`
	TasksSubmitted int `json:"tasks_submitted"`
	TasksLaunched  int `json:"tasks_launched"`
	TasksCompleted int `json:"tasks_completed"`
	TasksFailed    int `json:"tasks_failed"`
	// DuplicateLaunches counts launches beyond each task's first.
	DuplicateLaunches int `json:"duplicate_launches"`
	// ResponseMs is submit → last task's result, over completed jobs;
	// SchedDelayMs submit → launch, over launched tasks.
	ResponseMs   stats.Summary `json:"response_ms"`
	SchedDelayMs stats.Summary `json:"sched_delay_ms"`
	// ResponseCensoredMs counts every job that was not refused, an
	// unfinished one at the end of the run (a lower bound on its
	// response): when a mode leaves jobs unfinished, ResponseMs alone
	// would flatter it.
	ResponseCensoredMs stats.Summary `json:"response_censored_ms"`
	// The fractions of launched tasks by locality; they sum to 1 when any
	// task launched.
	NodeLocal float64 `json:"node_local"`
	RackLocal float64 `json:"rack_local"`
	Elsewhere float64 `json:"elsewhere"`
	// BytesWithinRack were read through a rack switch only (rack-local);
	// BytesAcrossCore crossed the core switch (elsewhere).
	BytesWithinRack int64 `json:"bytes_within_rack"`
	BytesAcrossCore int64 `json:"bytes_across_core"`
	// CoreFraction is BytesAcrossCore over all bytes read (node-local
	// reads included), Quincy's Table 4 measure.
	CoreFraction float64 `json:"core_fraction"`
}

// Analyze summarises one mode's jobs; end is when the run stopped
// recording, for ResponseCensoredMs.
func Analyze(jobs []JobOutcome, end time.Duration) ModeStats {
	var s ModeStats
	var responses, censored, delays []float64
	var where [3]int
	var total int64
	for _, job := range jobs {
		s.JobsSubmitted++
		s.TasksSubmitted += len(job.Tasks)
		if job.Refused {
			s.JobsRefused++
			continue
		}
		done, last := 0, time.Duration(0)
		for _, t := range job.Tasks {
			if t.Launches > 0 {
				s.TasksLaunched++
				s.DuplicateLaunches += t.Launches - 1
				delays = append(delays, stats.Millis(t.Launched-job.Submitted))
				if t.Where >= NodeLocal && t.Where <= Elsewhere {
					where[t.Where]++
				}
				switch t.Where {
				case RackLocal:
					s.BytesWithinRack += t.Bytes
				case Elsewhere:
					s.BytesAcrossCore += t.Bytes
				}
				total += t.Input
			}
			if t.Done {
				done++
				s.TasksCompleted++
				if t.Failed {
					s.TasksFailed++
				}
				last = max(last, t.Finished)
			}
		}
		if done == len(job.Tasks) {
			s.JobsCompleted++
			responses = append(responses, stats.Millis(last-job.Submitted))
			censored = append(censored, stats.Millis(last-job.Submitted))
		} else {
			s.JobsIncomplete++
			censored = append(censored, stats.Millis(max(end, last)-job.Submitted))
		}
	}
	if n := where[0] + where[1] + where[2]; n > 0 {
		s.NodeLocal = float64(where[NodeLocal]) / float64(n)
		s.RackLocal = float64(where[RackLocal]) / float64(n)
		s.Elsewhere = float64(where[Elsewhere]) / float64(n)
	}
	if total > 0 {
		s.CoreFraction = float64(s.BytesAcrossCore) / float64(total)
	}
	s.ResponseMs = stats.Summarize(responses)
	s.ResponseCensoredMs = stats.Summarize(censored)
	s.SchedDelayMs = stats.Summarize(delays)
	return s
}
