package jobtrace

import (
	"encoding/csv"
	"io"
	"strconv"
)

// JobOutcome is one job's outcome in a replay, for per-job comparisons of
// runs (a simulation beside a live run of the same trace, one policy
// beside another): the same trace gives the same Job numbers in every
// run.
type JobOutcome struct {
	Job      int     // ordinal of the job in the trace, from 0
	Class    Class   // by its mean task duration and the cutoff
	MeanTask float64 // seconds, as in the trace (before any time scale)
	Arrival  float64 // seconds from the run's start
	Response float64 // seconds, arrival to last task's end
}

// JobsHeader is the header row of WriteJobs's CSV.
var JobsHeader = []string{"run", "job", "class", "mean_task_s", "arrival_s", "response_s"}

// WriteJobs writes jobs as CSV rows under the columns of JobsHeader, each
// naming the run run, after the header row when header is true.
func WriteJobs(w io.Writer, run string, jobs []JobOutcome, header bool) error {
	cw := csv.NewWriter(w)
	if header {
		if err := cw.Write(JobsHeader); err != nil {
			return err
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, j := range jobs {
		if err := cw.Write([]string{run, strconv.Itoa(j.Job), j.Class.String(), f(j.MeanTask), f(j.Arrival), f(j.Response)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
