package procs

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/sparrowfleet/sparrow/internal/plot"
)

// WriteTable prints each point's per-role cost and the drive's latency.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "offered tasks/s\tdone tasks/s\trole\tprocs\tCPU µs/task\tof which idle\tidle CPU ms/s\twrites/task\treads/task\tcalls served/task\tcalls made/task\tpeak RSS MiB\t")
	for _, r := range results {
		offered := r.RateJobsPerSec * float64(r.TasksPerJob)
		for i, rc := range r.Roles {
			lead := [2]string{"", ""}
			if i == 0 {
				lead = [2]string{fmt.Sprintf("%.0f", offered), fmt.Sprintf("%.0f", r.TasksPerSec)}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.0f\t\n", lead[0], lead[1], rc.Role, rc.Processes,
				rc.CPUPerTaskUs, rc.IdlePerTaskUs, rc.IdleCPUPerSecondMs, rc.WritesPerTask, rc.ReadsPerTask,
				rc.CallsServedPerTask, rc.CallsMadePerTask, rc.PeakRSSMiB)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		d := r.Drive
		fmt.Fprintf(w, "at %.0f offered tasks/s: %d of %d jobs done, %.2f task attempts per task, %d failovers; job response p50 %.2f ms, p99 %.2f ms; scheduling delay p50 %.2f ms, p99 %.2f ms (n=%d)\n",
			r.RateJobsPerSec*float64(r.TasksPerJob), d.JobsCompleted, d.JobsSubmitted, r.AttemptsPerTask(), len(d.Failovers),
			d.ResponseMs.P50, d.ResponseMs.P99, d.SchedDelayMs.P50, d.SchedDelayMs.P99, d.SchedDelayMs.N)
		for _, rc := range r.Roles {
			if rc.CallsPerTask == nil {
				continue
			}
			fmt.Fprintf(w, "  %s calls per task, served: %s; made: %s\n", rc.Role, byMethod(rc.CallsPerTask.Served), byMethod(rc.CallsPerTask.Made))
		}
	}
	return nil
}

// byMethod lists calls per task by method, most first ("none" if empty).
func byMethod(calls map[string]float64) string {
	methods := slices.Collect(maps.Keys(calls))
	if len(methods) == 0 {
		return "none"
	}
	slices.SortFunc(methods, func(a, b string) int {
		return cmp.Or(cmp.Compare(calls[b], calls[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(methods))
	for i, m := range methods {
		parts[i] = fmt.Sprintf("%s %.2f", m, calls[m])
	}
	return strings.Join(parts, ", ")
}

// AttemptsPerTask is how many task attempts the driver submitted per
// original task: 1 when nothing was resubmitted. Above 1 the per-task CPU
// figures include the retries' work.
func (r Result) AttemptsPerTask() float64 {
	if r.Drive.TasksSubmitted == 0 {
		return 0
	}
	return float64(r.Drive.AttemptTasks) / float64(r.Drive.TasksSubmitted)
}

// Chart plots each role's CPU time per task against the measured task
// rate, one line per role.
func Chart(results []Result, subtitle string) *plot.Chart {
	c := &plot.Chart{
		Title:    "CPU time per task by role, every member a separate process",
		Subtitle: subtitle,
		X:        plot.Axis{Label: "tasks completed per second"},
		Y:        plot.Axis{Label: "CPU µs per task (all processes of the role)"},
	}
	for _, role := range Roles {
		s := plot.Series{Name: string(role), Marker: plot.Circle}
		for _, r := range results {
			for _, rc := range r.Roles {
				if rc.Role == role {
					s.Points = append(s.Points, plot.Point{X: r.TasksPerSec, Y: rc.CPUPerTaskUs})
				}
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}
