package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/listflag"
	"github.com/sparrowfleet/sparrow/internal/workload"
)

// RunConfig is an in-process fleet and the workload driven through it,
// as sparrow local and sparrow bench fleet take them.
type RunConfig struct {
	Schedulers, NodeMonitors, Slots int
	// Tasks per job, each a sleep of TaskDuration (0: no-op tasks, which
	// need JobsPerSec).
	Tasks        int
	TaskDuration time.Duration
	// Duration of the arrivals, and the longest Drain of in-flight jobs
	// after them.
	Duration, Drain time.Duration
	// Load is the target fraction of slots busy, setting the Poisson
	// arrival rate unless JobsPerSec does.
	Load, JobsPerSec float64
	ProbeRatio       float64
	Queue            string
	NoCancel         bool
	SingleHost       bool
	Seed             uint64
	// CPUProfile, if set, is the file the run's CPU profile is written to.
	CPUProfile    string
	GossipProfile string
	// HTTP serves every member's operator endpoint and dashboard
	// (Config.HTTP); the run prints where to look.
	HTTP bool
	Log  zerolog.Logger
}

// Validate names the first setting out of range, by its flag.
func (f *RunConfig) Validate() error {
	switch {
	case f.Schedulers < 1:
		return fmt.Errorf("--schedulers must be at least 1")
	case f.NodeMonitors < 1:
		return fmt.Errorf("--nodes must be at least 1")
	case f.Slots < 1:
		return fmt.Errorf("--slots must be at least 1")
	case f.Duration <= 0:
		return fmt.Errorf("--duration must be positive")
	}
	return nil
}

// startRun validates the configuration and starts the fleet it
// describes, with the CPU profile (if asked for) running until the fleet
// closes.
func startRun(ctx context.Context, ff RunConfig, progress io.Writer) (*run, error) {
	if err := ff.Validate(); err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	t0 := time.Now()
	f, err := Start(startCtx, Config{
		Schedulers: ff.Schedulers, NodeMonitors: ff.NodeMonitors, Slots: ff.Slots,
		ProbeRatio: ff.ProbeRatio, NoCancel: ff.NoCancel, Queue: ff.Queue,
		SingleHost: ff.SingleHost, Seed: ff.Seed, GossipProfile: ff.GossipProfile, HTTP: ff.HTTP, Log: ff.Log,
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "fleet up in %v: %s\n", time.Since(t0).Round(time.Millisecond), f.Describe())
	if len(f.HTTP) > 0 {
		fmt.Fprintf(progress, "dashboard: http://%s/ui/  (sparrow status --join %s)\n", f.HTTP[0].Addr(), f.Schedulers[0].Cluster.Addr())
	}
	r := &run{Fleet: f}
	if ff.CPUProfile != "" {
		out, err := os.Create(ff.CPUProfile)
		if err == nil {
			err = pprof.StartCPUProfile(out)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		r.profile = out
	}
	return r, nil
}

// run is a started fleet and the CPU profile recording it.
type run struct {
	*Fleet
	profile *os.File
}

// Close stops the profile, then the fleet.
func (r *run) Close() error {
	if r.profile != nil {
		pprof.StopCPUProfile()
		r.profile.Close()
	}
	return r.Fleet.Close()
}

// RunWorkload starts the fleet, drives the workload through it until
// ctx ends or SIGINT or SIGTERM arrives, and tears the fleet down.
// Progress lines go to progress.
func RunWorkload(ctx context.Context, ff RunConfig, progress io.Writer) (Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	f, err := startRun(ctx, ff, progress)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	spec := workload.Spec{Load: ff.Load, Slots: f.TotalSlots(), TasksPerJob: ff.Tasks, TaskDuration: ff.TaskDuration}
	rate := ff.JobsPerSec
	if rate <= 0 {
		rate = spec.JobsPerSecond()
	}
	fmt.Fprintf(progress, "workload: jobs of %d tasks x %v, %.1f jobs/s (load %.2f), for %v\n",
		ff.Tasks, ff.TaskDuration, rate, ff.Load, ff.Duration)
	return f.Drive(ctx, DriveConfig{
		Spec: spec, Duration: ff.Duration, JobsPerSecond: ff.JobsPerSec, Drain: ff.Drain, Seed: ff.Seed,
		Progress: func(p Progress) {
			fmt.Fprintf(progress, "  %5.1fs  submitted %6d  completed %6d  in flight %4d\n",
				p.Elapsed.Seconds(), p.Submitted, p.Completed, p.InFlight)
		},
	})
}

// WriteResult prints r as sparrow local does, and with asJSON also as one
// JSON object on the last line.
func WriteResult(w io.Writer, r Result, asJSON bool) error {
	fmt.Fprintf(w, "sparrow local: %d schedulers, %d node monitors x %d slots\n", r.Schedulers, r.NodeMonitors, r.SlotsPerNode)
	fmt.Fprintf(w, "  jobs completed    %d of %d submitted (%d refused, %d incomplete)\n",
		r.JobsCompleted, r.JobsSubmitted, r.JobsRefused, r.JobsIncomplete)
	fmt.Fprintf(w, "  tasks completed   %d (%d failed)\n", r.TasksCompleted, r.TasksFailed)
	fmt.Fprintf(w, "  response time     p50 %.1f ms  p95 %.1f ms  p99 %.1f ms  (ideal %.1f ms)\n",
		r.ResponseMs.P50, r.ResponseMs.P95, r.ResponseMs.P99, r.IdealMs)
	fmt.Fprintf(w, "  scheduling delay  p50 %.2f ms  p99 %.2f ms  (submit -> launch)\n", r.SchedDelayMs.P50, r.SchedDelayMs.P99)
	fmt.Fprintf(w, "  throughput        %.1f tasks/s\n", r.TasksPerSec)
	if asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode result: %w", err)
		}
		fmt.Fprintln(w, string(b))
	}
	return nil
}

// SweepPoint is one point of a sweep: a load, or a job rate (Rate > 0).
type SweepPoint struct{ Load, Rate float64 }

// SweepPoints lists the sweep's points from the --loads and --rates flag
// values: each job rate of rates at c's load, or if rates is empty each
// load of loads.
func SweepPoints(loads, rates string, c RunConfig) ([]SweepPoint, error) {
	var out []SweepPoint
	if rates != "" {
		rs, err := listflag.Positive("--rates", rates)
		for _, r := range rs {
			out = append(out, SweepPoint{Load: c.Load, Rate: r})
		}
		return out, err
	}
	if c.TaskDuration == 0 {
		return nil, fmt.Errorf("no-op tasks (--task-duration 0) have no load; sweep --rates instead")
	}
	ls, err := listflag.Positive("--loads", loads)
	for _, l := range ls {
		out = append(out, SweepPoint{Load: l})
	}
	return out, err
}

// sweepRow is one point of the sweep, as printed with --json.
type sweepRow struct {
	OfferedJobsPerSec float64 `json:"offered_jobs_per_sec"`
	Result
}

// Sweep starts one fleet and drives each point through it in turn,
// settle apart, then prints a row per point (and with asJSON the rows as
// one JSON array).
func Sweep(ctx context.Context, ff RunConfig, points []SweepPoint, settle time.Duration, asJSON bool, out, progress io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := startRun(ctx, ff, progress)
	if err != nil {
		return err
	}
	defer f.Close()
	var rows []sweepRow
	for i, p := range points {
		if i > 0 {
			time.Sleep(settle) // spacing between measurements, not synchronisation
		}
		spec := workload.Spec{Load: p.Load, Slots: f.TotalSlots(), TasksPerJob: ff.Tasks, TaskDuration: ff.TaskDuration}
		rate := p.Rate
		if rate == 0 {
			rate = spec.JobsPerSecond()
		}
		fmt.Fprintf(progress, "point %d/%d: %.1f jobs/s of %d x %v for %v\n", i+1, len(points), rate, ff.Tasks, ff.TaskDuration, ff.Duration)
		res, err := f.Drive(ctx, DriveConfig{
			Spec: spec, Duration: ff.Duration, JobsPerSecond: p.Rate, Drain: ff.Drain, Seed: ff.Seed + uint64(i),
		})
		if err != nil {
			return err
		}
		rows = append(rows, sweepRow{OfferedJobsPerSec: rate, Result: res})
	}
	fmt.Fprintf(out, "%10s %6s %9s %8s %10s %10s %9s %9s %9s %8s\n",
		"jobs/s", "load", "tasks/s", "refused", "delay p50", "delay p99", "resp p50", "resp p95", "resp p99", "ideal")
	for _, r := range rows {
		fmt.Fprintf(out, "%10.1f %6.2f %9.1f %8d %9.2fms %9.2fms %7.1fms %7.1fms %7.1fms %6.1fms\n",
			r.OfferedJobsPerSec, r.Load, r.TasksPerSec, r.JobsRefused+r.JobsIncomplete,
			r.SchedDelayMs.P50, r.SchedDelayMs.P99, r.ResponseMs.P50, r.ResponseMs.P95, r.ResponseMs.P99, r.IdealMs)
	}
	if asJSON {
		b, err := json.Marshal(rows)
		if err != nil {
			return fmt.Errorf("encode results: %w", err)
		}
		fmt.Fprintln(out, string(b))
	}
	return nil
}
