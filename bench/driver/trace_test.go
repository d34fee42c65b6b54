package driver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

func TestLoadTrace(t *testing.T) {
	const good = "10 2 1.5 1 2\n\n10.5 1 20 20\n12 3 2 2 2 2\n"
	for _, tc := range []struct {
		name   string
		trace  string
		scale  float64
		limit  int
		jobs   []TraceJob
		tasks  int
		workS  float64
		errAt  *jobtrace.ParseError // want this file, line and field
		errSub string               // or an error saying this
	}{
		{
			name: "scaled arrivals from the first job, scaled durations, unscaled means", trace: good, scale: 10,
			jobs: []TraceJob{
				{Line: 1, At: 0, Durations: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, MeanS: 1.5},
				{Line: 3, At: 50 * time.Millisecond, Durations: []time.Duration{2 * time.Second}, MeanS: 20},
				{Line: 4, At: 200 * time.Millisecond, Durations: []time.Duration{200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}, MeanS: 2},
			},
			tasks: 6, workS: 2.9,
		},
		{
			name: "a limit reads only the first jobs", trace: good + "oops\n", scale: 1, limit: 2,
			jobs: []TraceJob{
				{Line: 1, At: 0, Durations: []time.Duration{time.Second, 2 * time.Second}, MeanS: 1.5},
				{Line: 3, At: 500 * time.Millisecond, Durations: []time.Duration{20 * time.Second}, MeanS: 20},
			},
			tasks: 3, workS: 23,
		},
		{name: "a bad line after good ones stops the load", trace: good + "13 2 1 1\n", scale: 1,
			errAt: &jobtrace.ParseError{File: "t.tr", Line: 5, Field: "d_2"}},
		{name: "a wrong mean", trace: "0 2 5 1 2\n", scale: 1,
			errAt: &jobtrace.ParseError{File: "t.tr", Line: 1, Field: "mean_task_s"}},
		{name: "out of order", trace: "5 1 1 1\n4 1 1 1\n", scale: 1,
			errAt: &jobtrace.ParseError{File: "t.tr", Line: 2, Field: "submit_s"}},
		{name: "a duration beyond a Go duration once scaled", trace: "0 1 1e12 1e12\n", scale: 0.5,
			errAt: &jobtrace.ParseError{File: "t.tr", Line: 1, Field: "d_1"}},
		{name: "an arrival beyond a Go duration once scaled", trace: "0 1 1 1\n1e11 1 1 1\n", scale: 0.5,
			errAt: &jobtrace.ParseError{File: "t.tr", Line: 2, Field: "submit_s"}},
		{name: "empty", trace: "\n", scale: 1, errSub: "t.tr: no jobs"},
		{name: "zero scale", trace: good, scale: 0, errSub: "time scale"},
		{name: "negative limit", trace: good, scale: 1, limit: -1, errSub: "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := LoadTrace(strings.NewReader(tc.trace), "t.tr", tc.scale, 10, tc.limit)
			if tc.errAt != nil || tc.errSub != "" {
				var pe *jobtrace.ParseError
				switch {
				case err == nil:
					t.Fatalf("loaded %+v, want an error", tr)
				case tc.errAt != nil && (!errors.As(err, &pe) || pe.File != tc.errAt.File || pe.Line != tc.errAt.Line || pe.Field != tc.errAt.Field):
					t.Errorf("error %v, want one at %s:%d field %s", err, tc.errAt.File, tc.errAt.Line, tc.errAt.Field)
				case tc.errSub != "" && !strings.Contains(err.Error(), tc.errSub):
					t.Errorf("error %v, want one saying %q", err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Jobs) != len(tc.jobs) || tr.Tasks != tc.tasks || abs(tr.WorkS-tc.workS) > 1e-9 || tr.Cutoff != 10 || tr.Scale != tc.scale {
				t.Fatalf("loaded %d jobs, %d tasks, %v task-s (cutoff %v, scale %v); want %d, %d, %v",
					len(tr.Jobs), tr.Tasks, tr.WorkS, tr.Cutoff, tr.Scale, len(tc.jobs), tc.tasks, tc.workS)
			}
			for i, j := range tr.Jobs {
				w := tc.jobs[i]
				if j.Line != w.Line || j.At != w.At || abs(j.MeanS-w.MeanS) > 1e-9 || !slices.Equal(j.Durations, w.Durations) {
					t.Errorf("job %d: %+v, want %+v", i, j, w)
				}
			}
			if want := tc.jobs[len(tc.jobs)-1].At.Seconds(); tr.SpanS() != want {
				t.Errorf("span %v s, want %v", tr.SpanS(), want)
			}
		})
	}
}

func abs(x float64) float64 { return max(x, -x) }

// A trace replayed on a loopback fleet: every task runs its scaled
// duration (its message), each job's response time is at least its
// longest task, and the summary splits jobs into short and long by the
// cutoff, with the JSON members the CLI contract names.
func TestRunTrace(t *testing.T) {
	var mu sync.Mutex
	var msgs []string
	f := startFleet(t, fleet.Config{Schedulers: 1, NodeMonitors: 2, Slots: 2,
		Run: func(ctx context.Context, lt client.LaunchedTask) ([]byte, error) {
			at := time.Now()
			mu.Lock()
			msgs = append(msgs, string(lt.Message))
			mu.Unlock()
			if _, err := fleet.SleepTask(ctx, lt); err != nil {
				return nil, err
			}
			return LaunchBody(at), nil
		}})
	// Cutoff 10 s: jobs 1 and 3 are long. Scale 100: tasks of 10 ms to
	// 300 ms, arrivals 5 ms apart.
	const trace = "0 2 1.5 1 2\n0.5 1 20 20\n1 3 2 2 2 2\n1.5 1 30 30\n2 2 1 1 1\n"
	tr, err := LoadTrace(strings.NewReader(trace), "small.tr", 100, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	tr.KeepJobs = true
	cfg := baseConfig(f, "127.0.4.9")
	cfg.Trace, cfg.Slots = tr, 4
	cfg.Jobs, cfg.Tasks, cfg.TaskDuration = 0, 0, 0 // the trace says
	s := <-runAsync(t, cfg)
	if !s.OK {
		t.Fatalf("run not ok: %s", s.Error)
	}
	if s.JobsCompleted != 5 || s.TasksCompleted != 9 || s.Result == nil || s.Trace == nil {
		t.Fatalf("%d jobs, %d tasks completed, result %v, trace %v; want 5, 9 and both", s.JobsCompleted, s.TasksCompleted, s.Result, s.Trace)
	}
	mu.Lock()
	slices.Sort(msgs)
	got := slices.Clone(msgs)
	mu.Unlock()
	want := []string{"10ms", "10ms", "10ms", "200ms", "20ms", "20ms", "20ms", "20ms", "300ms"}
	if !slices.Equal(got, want) {
		t.Errorf("task messages %v, want %v", got, want)
	}
	r := s.Result
	if r.Short.N != 3 || r.Long.N != 2 || r.Cutoff != 10 {
		t.Errorf("short %d, long %d jobs, cutoff %v; want 3, 2, 10", r.Short.N, r.Long.N, r.Cutoff)
	}
	// Each job's response is at least its longest task: 0.2 s for the
	// long ones, 0.02 s for the short ones but the 0.01 s one.
	if r.Long.P50 < 0.2 || r.Long.P99 < 0.3 || r.Short.P50 < 0.02 || r.Short.P99 < 0.02 {
		t.Errorf("response times %+v below the jobs' longest tasks", r)
	}
	if r.SchedulingDelay.Short.N != 7 || r.SchedulingDelay.Long.N != 2 || r.Utilisation <= 0 || r.Utilisation > 1 {
		t.Errorf("scheduling delays %+v, utilisation %v: want 7 short and 2 long tasks, a fraction", r.SchedulingDelay, r.Utilisation)
	}
	if s.Trace.Jobs != 5 || s.Trace.Tasks != 9 || s.Trace.TimeScale != 100 || s.Trace.Load <= 0 {
		t.Errorf("trace info %+v", s.Trace)
	}
	// Every job's outcome, in the trace's order, agreeing with the
	// summary by class.
	wantClass := []jobtrace.Class{jobtrace.Short, jobtrace.Long, jobtrace.Short, jobtrace.Long, jobtrace.Short}
	longest := []float64{0.02, 0.2, 0.02, 0.3, 0.01}
	if len(s.Jobs) != len(wantClass) {
		t.Fatalf("%d job outcomes, want %d: %+v", len(s.Jobs), len(wantClass), s.Jobs)
	}
	var sum [2]float64
	for i, j := range s.Jobs {
		if j.Job != i || j.Class != wantClass[i] || j.Response < longest[i] || j.Arrival != float64(i)*0.005 {
			t.Errorf("job outcome %d: %+v; want job %d, %v, arrival %v s, response at least %v s", i, j, i, wantClass[i], float64(i)*0.005, longest[i])
		}
		sum[j.Class] += j.Response
	}
	if d := sum[jobtrace.Short]/3 - r.Short.Mean; d > 1e-9 || d < -1e-9 {
		t.Errorf("short jobs' outcomes average %v, summary %v", sum[jobtrace.Short]/3, r.Short.Mean)
	}
	if d := sum[jobtrace.Long]/2 - r.Long.Mean; d > 1e-9 || d < -1e-9 {
		t.Errorf("long jobs' outcomes average %v, summary %v", sum[jobtrace.Long]/2, r.Long.Mean)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"short", "long"} {
		var c map[string]float64
		if err := json.Unmarshal(m[class], &c); err != nil {
			t.Fatalf("%s: %v in %s", class, err, b)
		}
		for _, k := range []string{"n", "mean", "p50", "p90", "p99"} {
			if _, ok := c[k]; !ok {
				t.Errorf("JSON %q has no %q: %s", class, k, m[class])
			}
		}
	}
}

// FuzzLoadTrace: whatever loads has arrivals in order from 0, durations
// that are not negative, and totals that match its jobs.
func FuzzLoadTrace(f *testing.F) {
	for _, s := range []string{"0 1 1 1\n", "10 2 1.5 1 2\n11 1 3 3\n", "0 1 1e300 1e300\n", "5 1 1 1\n4 1 1 1\n", "1 0 0\n", ""} {
		f.Add(s, 1.0)
	}
	f.Fuzz(func(t *testing.T, s string, scale float64) {
		tr, err := LoadTrace(strings.NewReader(s), "f.tr", scale, 10, 0)
		if err != nil {
			return
		}
		tasks, work, last := 0, 0.0, time.Duration(0)
		for i, j := range tr.Jobs {
			if (i == 0 && j.At != 0) || j.At < last || len(j.Durations) == 0 || j.MeanS < 0 {
				t.Fatalf("job %d: %+v after %v", i, j, last)
			}
			last = j.At
			for _, d := range j.Durations {
				if d < 0 {
					t.Fatalf("job %d: negative duration %v", i, d)
				}
				work += d.Seconds()
			}
			tasks += len(j.Durations)
		}
		if tasks != tr.Tasks || abs(work-tr.WorkS) > 1e-6*max(1, work) {
			t.Fatalf("totals %d tasks, %v s; jobs hold %d, %v", tr.Tasks, tr.WorkS, tasks, work)
		}
	})
}
