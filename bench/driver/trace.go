package driver

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

// Trace is a job trace (internal/jobtrace's format) loaded for a live
// replay: Config.Trace replaces the generated workload with its jobs, each
// submitted at its arrival and each task sleeping its duration, both
// divided by Scale.
type Trace struct {
	// Name is the trace's file name, for the summary.
	Name string
	// Scale divides every duration and arrival gap (1: as recorded).
	Scale float64
	// Cutoff, in trace seconds, splits jobs into short and long by their
	// mean task duration before scaling.
	Cutoff float64
	// Estimates sends each job's mean task duration, scaled, as its
	// estimate (client.Job.TaskDuration), for schedulers run with the
	// long-task-aware policy.
	Estimates bool
	// KeepJobs keeps every job's outcome in Summary.Jobs.
	KeepJobs bool
	Jobs     []TraceJob
	// Tasks is the tasks of all Jobs; WorkS their scaled task-seconds.
	Tasks int
	WorkS float64
}

// TraceJob is one job of a Trace.
type TraceJob struct {
	// Line is the job's line in the trace file.
	Line int
	// At is the job's arrival after the first job's, scaled.
	At time.Duration
	// Durations holds each task's run time, scaled.
	Durations []time.Duration
	// MeanS is the job's mean task duration in trace seconds (unscaled):
	// what classes it short or long.
	MeanS float64
}

// SpanS is the scaled time from the first arrival to the last, in seconds.
func (t *Trace) SpanS() float64 {
	if len(t.Jobs) == 0 {
		return 0
	}
	return t.Jobs[len(t.Jobs)-1].At.Seconds()
}

// LoadTrace reads the first limit jobs of the trace r (every job if limit
// is 0), named name in errors, scaling durations and gaps by 1/scale.
// It reads them all before returning, so that a malformed line (a
// *jobtrace.ParseError naming the file, the line and the field) stops a
// run before any job is submitted. Memory is one duration per task.
func LoadTrace(r io.Reader, name string, scale, cutoff float64, limit int) (*Trace, error) {
	switch {
	case !(scale > 0) || math.IsInf(scale, 0):
		return nil, fmt.Errorf("time scale must be a finite number > 0, got %v", scale)
	case !(cutoff >= 0) || math.IsInf(cutoff, 0):
		return nil, fmt.Errorf("cutoff must be a finite number of seconds ≥ 0, got %v", cutoff)
	case limit < 0:
		return nil, fmt.Errorf("job limit %d is negative", limit)
	}
	t := &Trace{Name: name, Scale: scale, Cutoff: cutoff}
	rd := jobtrace.NewReader(r, name)
	var first float64
	for limit == 0 || len(t.Jobs) < limit {
		j, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(t.Jobs) == 0 {
			first = j.Submit
		}
		tj := TraceJob{Line: j.Line, MeanS: j.Mean(), Durations: make([]time.Duration, len(j.Durations))}
		var ok bool
		if tj.At, ok = scaled(j.Submit-first, scale); !ok {
			return nil, &jobtrace.ParseError{File: name, Line: j.Line, Field: "submit_s",
				Err: fmt.Errorf("%v s after the first job, divided by %v, is beyond a Go duration", j.Submit-first, scale)}
		}
		for i, d := range j.Durations {
			if tj.Durations[i], ok = scaled(d, scale); !ok {
				return nil, &jobtrace.ParseError{File: name, Line: j.Line, Field: fmt.Sprintf("d_%d", i+1),
					Err: fmt.Errorf("%v s divided by %v is beyond a Go duration", d, scale)}
			}
			t.WorkS += tj.Durations[i].Seconds()
		}
		t.Tasks += len(tj.Durations)
		t.Jobs = append(t.Jobs, tj)
	}
	if len(t.Jobs) == 0 {
		return nil, fmt.Errorf("%s: no jobs", name)
	}
	return t, nil
}

// scaled is s seconds divided by scale as a duration, rounded to the
// nanosecond; false if it does not fit.
func scaled(s, scale float64) (time.Duration, bool) {
	ns := math.Round(s / scale * float64(time.Second))
	if ns < 0 || ns >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(ns), true
}

// TraceInfo describes a replayed trace in a Summary.
type TraceInfo struct {
	File      string  `json:"file"`
	TimeScale float64 `json:"time_scale"`
	Jobs      int     `json:"jobs"`
	Tasks     int     `json:"tasks"`
	// WorkS and SpanS are the replay's task-seconds and arrival span
	// (scaled); Load is WorkS / (SpanS × Config.Slots), when slots are
	// given.
	WorkS float64 `json:"work_s"`
	SpanS float64 `json:"span_s"`
	Load  float64 `json:"load,omitempty"`
}

// validateTrace checks a trace run's configuration: the trace replaces
// the generated workload, so the settings that shape one must be unset.
func (c *Config) validateTrace() error {
	switch {
	case len(c.Trace.Jobs) == 0:
		return fmt.Errorf("trace %s has no jobs", c.Trace.Name)
	case c.Poisson:
		return fmt.Errorf("a trace gives the arrivals: Poisson arrivals do not apply")
	case c.Prefer.On():
		return fmt.Errorf("a trace replay takes no placement preferences")
	}
	c.Jobs = len(c.Trace.Jobs)
	return nil
}

// traceJobs are the logical jobs of a trace: each task's message is its
// scaled duration, which the sleep executor sleeps.
func traceJobs(t *Trace) []*logicalJob {
	jobs := make([]*logicalJob, 0, len(t.Jobs))
	for i, tj := range t.Jobs {
		j := &logicalJob{n: i, left: len(tj.Durations), arrival: tj.At, meanS: tj.MeanS}
		for k, d := range tj.Durations {
			j.tasks = append(j.tasks, &logicalTask{job: j, idx: k, msg: []byte(d.String()), dur: d})
		}
		jobs = append(jobs, j)
	}
	return jobs
}
