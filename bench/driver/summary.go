package driver

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

// WriteSummary prints s as sparrow drive does: as a few aligned lines,
// with a trace's response-time table when one was replayed, or as one
// JSON object on one line.
func WriteSummary(w io.Writer, s Summary, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("encode summary: %w", err)
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	status := "ok"
	if !s.OK {
		status = "NOT OK: " + s.Error
	}
	fmt.Fprintf(w, "sparrow drive %s: %s\n", s.RunID, status)
	fmt.Fprintf(w, "  jobs completed     %d of %d (%d tasks of %d)\n", s.JobsCompleted, s.JobsSubmitted, s.TasksCompleted, s.TasksSubmitted)
	fmt.Fprintf(w, "  reports            %d ok (%d late, %d duplicate), %d lost, %d failed, %d stale\n",
		s.OKReports, s.LateOKReports, s.DuplicateOKReports, s.LostReports, s.FailedReports, s.StaleReports)
	fmt.Fprintf(w, "  resubmitted        %d jobs, %d tasks %v; %d submit errors\n", s.ResubmittedJobs, s.ResubmittedTasks, s.ResubmittedBy, s.SubmitErrors)
	fmt.Fprintf(w, "  retry backoff      %d delayed (p50 %.1f ms, max %.1f ms), %d waited a suggested delay\n",
		s.RetriesDelayed, s.RetryDelayMs.P50, s.RetryDelayMs.Max, s.RetryAfterHonoured)
	if s.RetryBudgetExhausted {
		fmt.Fprintf(w, "  retry budget       EXHAUSTED at %s: %d jobs (%d tasks) failed instead of resubmitted\n",
			s.RetryBudgetExhaustedAt, s.JobsFailedByBudget, s.TasksFailedByBudget)
	}
	for _, f := range s.Failovers {
		fmt.Fprintf(w, "  failover           %s -> %s at %s, reconnected in %.1f ms, %d jobs in flight, relaunched %.1f ms later\n",
			f.From, f.To, f.DetectedAt, f.ReconnectMs, f.InFlightJobs, f.RelaunchTookMs)
	}
	if s.FirstLostAt != "" {
		fmt.Fprintf(w, "  lost reports       first %s, last %s\n", s.FirstLostAt, s.LastLostAt)
	}
	fmt.Fprintf(w, "  affected jobs      %d (%d completed, last at %s)\n", s.AffectedJobs, s.AffectedCompleted, s.LastAffectedDoneAt)
	if p := s.Preferences; p != nil {
		fmt.Fprintf(w, "  preferences        %d nodes in %d racks, %d blocks x %d replicas, Zipf %g (hottest block %.1f%% of tasks), delay threshold %g ms\n",
			p.Nodes, p.Racks, p.Blocks, p.Replicas, p.Zipf, 100*p.HottestBlockShare, p.DelayThresholdMs)
	}
	fmt.Fprintf(w, "  response time      p50 %.1f ms  p99 %.1f ms  max %.1f ms\n", s.ResponseMs.P50, s.ResponseMs.P99, s.ResponseMs.Max)
	fmt.Fprintf(w, "  elapsed            %.1f s\n", s.ElapsedS)
	if s.Trace != nil && s.Result != nil {
		fmt.Fprintf(w, "  trace              %s: %d jobs, %d tasks, time scale %g, cutoff %g s, load %.3g\n",
			s.Trace.File, s.Trace.Jobs, s.Trace.Tasks, s.Trace.TimeScale, s.Result.Cutoff, s.Trace.Load)
		return jobtrace.WriteTable(w, []jobtrace.Named{{Name: "live", Result: *s.Result}}, "")
	}
	return nil
}
