package procs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/internal/stats"
)

// The workload is driven by one `sparrow drive` process per scheduler:
// a frontend submits to one scheduler at a time (the others are its
// failover list), so with a single driver every scheduler but the first
// would sit idle. Driver i submits its share of the jobs, at its share of
// the rate, to scheduler i first; their summaries are merged, with exact
// latency percentiles from the drivers' raw samples.

// drive runs the drivers to completion and returns their merged summary,
// each driver's own (without its samples), their CPU time summed and the
// largest peak RSS.
func drive(ctx context.Context, cfg Config, scheds []string) (driver.Summary, []driver.Summary, time.Duration, int64, error) {
	n := len(scheds)
	sums := make([]driver.Summary, n)
	cpus := make([]time.Duration, n)
	rsss := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], cpus[i], rsss[i], errs[i] = driveOne(ctx, cfg, scheds, i)
		}()
	}
	wg.Wait()
	var cpu time.Duration
	var rss int64
	for i := range n {
		cpu += cpus[i]
		rss = max(rss, rsss[i])
	}
	if err := errors.Join(errs...); err != nil {
		return driver.Summary{}, nil, cpu, rss, err
	}
	merged := mergeDrives(sums)
	for i := range sums {
		sums[i].Samples = nil
	}
	return merged, sums, cpu, rss, nil
}

// share splits total into n parts differing by at most one; part i.
func share(total, n, i int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return s
}

// driveOne runs driver i of len(scheds), with scheduler i first in its
// failover order, and returns its summary and its own CPU time and peak
// RSS (the frontend's cost).
func driveOne(ctx context.Context, cfg Config, scheds []string, i int) (driver.Summary, time.Duration, int64, error) {
	var sum driver.Summary
	n := len(scheds)
	order := append(append([]string(nil), scheds[i:]...), scheds[:i]...)
	args := []string{"drive", "--json", "--samples", "--log-level", "warn",
		"--schedulers", strings.Join(order, ","),
		"--listen", fmt.Sprintf("%s.3.%d:50201", cfg.Net, i+1),
		"--jobs", strconv.Itoa(share(cfg.Jobs, n, i)), "--tasks", strconv.Itoa(cfg.Tasks),
		"--rate", strconv.FormatFloat(cfg.Rate/float64(n), 'g', -1, 64),
		"--task-duration", cfg.TaskDuration.String(),
		"--deadline", cfg.Deadline.String(), "--progress-every", "5s"}
	if cfg.FrontendTimeout > 0 {
		args = append(args, "--timeout", cfg.FrontendTimeout.String())
	}
	cmd := exec.CommandContext(ctx, cfg.Binary, args...)
	var out bytes.Buffer
	name := "drive.log"
	if n > 1 {
		name = fmt.Sprintf("drive-%d.log", i+1)
	}
	logf, err := os.Create(filepath.Join(cfg.Dir, name))
	if err != nil {
		return sum, 0, 0, fmt.Errorf("driver log: %w", err)
	}
	defer logf.Close()
	cmd.Stdout = io.MultiWriter(&out, logf)
	cmd.Stderr = logf
	runErr := cmd.Run()
	var cpu time.Duration
	var rss int64
	if st := cmd.ProcessState; st != nil {
		cpu = st.UserTime() + st.SystemTime()
		if ru, ok := st.SysUsage().(*syscallRusage); ok {
			rss = int64(ru.Maxrss) * 1024 // Linux reports kilobytes
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		return sum, cpu, rss, fmt.Errorf("driver %d summary (exit %v; see %s): %w", i+1, runErr, logf.Name(), err)
	}
	return sum, cpu, rss, nil
}

// mergeDrives sums the drivers' counts and recomputes the response and
// scheduling-delay percentiles from their samples. The percentiles of
// the affected jobs' response and of retry delays are not merged: they
// are in each driver's own summary. One summary is returned as it is.
func mergeDrives(sums []driver.Summary) driver.Summary {
	if len(sums) == 1 {
		s := sums[0]
		s.Samples = nil
		return s
	}
	m := driver.Summary{OK: true, App: sums[0].App, TasksPerJob: sums[0].TasksPerJob,
		TaskDurationMs: sums[0].TaskDurationMs, RetryPolicy: sums[0].RetryPolicy, ResubmittedBy: map[string]int{}}
	var ids, frontends, errs []string
	var resp, delay []float64
	for i, s := range sums {
		ids = append(ids, s.RunID)
		frontends = append(frontends, s.Frontend)
		m.Schedulers = append(m.Schedulers, s.Schedulers[0])
		m.RateJobsPerSec += s.RateJobsPerSec
		m.JobsSubmitted += s.JobsSubmitted
		m.TasksSubmitted += s.TasksSubmitted
		m.JobsCompleted += s.JobsCompleted
		m.TasksCompleted += s.TasksCompleted
		m.AttemptsSubmitted += s.AttemptsSubmitted
		m.AttemptTasks += s.AttemptTasks
		m.OKReports += s.OKReports
		m.LostReports += s.LostReports
		m.FailedReports += s.FailedReports
		m.OtherReports += s.OtherReports
		m.LateOKReports += s.LateOKReports
		m.DuplicateOKReports += s.DuplicateOKReports
		m.StaleReports += s.StaleReports
		m.UnknownReports += s.UnknownReports
		m.ResubmittedJobs += s.ResubmittedJobs
		m.ResubmittedTasks += s.ResubmittedTasks
		for k, v := range s.ResubmittedBy {
			m.ResubmittedBy[k] += v
		}
		m.SubmitErrors += s.SubmitErrors
		m.BackpressureWaits += s.BackpressureWaits
		m.BackpressureWaitS += s.BackpressureWaitS
		m.BusyRetries += s.BusyRetries
		m.Failovers = append(m.Failovers, s.Failovers...)
		m.AffectedJobs += s.AffectedJobs
		m.AffectedCompleted += s.AffectedCompleted
		m.RetriesDelayed += s.RetriesDelayed
		m.RetryAfterHonoured += s.RetryAfterHonoured
		m.RetryBudgetExhausted = m.RetryBudgetExhausted || s.RetryBudgetExhausted
		m.JobsFailedByBudget += s.JobsFailedByBudget
		m.TasksFailedByBudget += s.TasksFailedByBudget
		m.DeadlineHit = m.DeadlineHit || s.DeadlineHit
		m.ElapsedS = max(m.ElapsedS, s.ElapsedS)
		if !s.OK {
			m.OK = false
			errs = append(errs, fmt.Sprintf("driver %d: %s", i+1, s.Error))
		}
		if s.Samples != nil {
			resp = append(resp, s.Samples.ResponseMs...)
			delay = append(delay, s.Samples.SchedDelayMs...)
		}
	}
	m.RunID = strings.Join(ids, ",")
	m.Frontend = strings.Join(frontends, ",")
	m.Error = strings.Join(errs, "; ")
	m.ResponseMs = stats.Summarize(resp)
	m.SchedDelayMs = stats.Summarize(delay)
	return m
}
