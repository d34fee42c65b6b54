package policy

import (
	"slices"

	"github.com/sparrowfleet/sparrow/internal/stats"
)

// Group is one stream's (user's or job class's) outcome in a bounded run.
type Group struct {
	Name string `json:"name"`
	// Load is the offered load (the peak, if it varies), as a fraction of
	// the capacity the stream's load is relative to (see the experiment).
	Load      float64 `json:"load"`
	Submitted int     `json:"jobs_submitted"`
	Completed int     `json:"jobs_completed"`
	Refused   int     `json:"jobs_refused"`
	// Incomplete jobs were submitted but had not finished when the window
	// closed; TasksUnlaunched of their tasks had not even started (they
	// were still queued as reservations).
	Incomplete      int `json:"jobs_incomplete"`
	TasksLaunched   int `json:"tasks_launched"`
	TasksUnlaunched int `json:"tasks_unlaunched"`
	TasksFailed     int `json:"tasks_failed"`
	// Measured counts the jobs whose response times are summarised: those
	// submitted after the warm-up.
	Measured int `json:"jobs_measured"`
	// Response summarises the response times (submit to last task
	// message, ms) of the measured jobs that completed in the window.
	Response stats.Summary `json:"response_ms"`
	// LowerBound summarises every measured job, counting an incomplete one
	// as finishing when the window closed: the true percentiles are at
	// least these. Equal to Response when nothing was left incomplete.
	LowerBound stats.Summary `json:"response_lower_bound_ms"`
	// Samples are the completed jobs' response times, sorted (for plots).
	Samples []float64 `json:"-"`
}

// Summarize fills Response, LowerBound and Samples from the completed
// jobs' response times and the incomplete ones' ages at the window's
// close (both ms). The slices are not modified.
func (g *Group) Summarize(completed, unfinishedAges []float64) {
	g.Samples = slices.Clone(completed)
	g.Response = stats.Summarize(g.Samples) // sorts g.Samples
	g.Measured = len(completed) + len(unfinishedAges)
	all := append(slices.Clone(completed), unfinishedAges...)
	g.LowerBound = stats.Summarize(all)
}

// CDF returns (value, fraction <= value) points of sorted samples, at most
// max points (evenly spaced in rank) plus the last.
func CDF(sorted []float64, maxPoints int) [][2]float64 {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	step := 1
	if maxPoints > 0 && n > maxPoints {
		step = (n + maxPoints - 1) / maxPoints
	}
	var out [][2]float64
	for i := 0; i < n; i += step {
		out = append(out, [2]float64{sorted[i], float64(i+1) / float64(n)})
	}
	if last := out[len(out)-1]; last[1] != 1 {
		out = append(out, [2]float64{sorted[n-1], 1})
	}
	return out
}
