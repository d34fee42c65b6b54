package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/internal/workload"
)

func init() { benchCmd.AddCommand(newBenchFleetCmd()) }

func newBenchFleetCmd() *cobra.Command {
	var (
		ff     fleetFlags
		loads  string
		rates  string
		settle time.Duration
	)
	cmd := &cobra.Command{
		Use:   "fleet",
		Short: "Sweep load or arrival rate over one in-process fleet: throughput, scheduling delay, response time",
		Long: `Start one fleet in this process (real Thrift and gossip on loopback, each
member on its own 127.0.x.y address) and drive a Poisson workload through it
at each load in --loads (or each job rate in --rates, for no-op tasks), one
point after another. Prints a row per point: completed tasks/s, scheduling
delay (submit to launch) p50/p99, and job response time p50/p95/p99 next to
the ideal (the task duration). A point whose jobs are refused or left
incomplete is beyond what the fleet sustains.

Examples:
  sparrow bench fleet --schedulers 1 --nodes 50 --task-duration 0 --rates 100,300,600,1000
  sparrow bench fleet --nodes 100 --slots 4 --loads 0.25,0.8`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("log-level") {
				logLevel = "warn"
			}
			points, err := benchPoints(loads, rates, ff)
			if err != nil {
				return err
			}
			return runBenchFleet(cmd.Context(), ff, points, settle, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	ff.register(cmd.Flags())
	cmd.Flags().Lookup("duration").DefValue = "10s"
	ff.duration = 10 * time.Second
	cmd.Flags().StringVar(&loads, "loads", "0.25,0.5,0.8", "comma-separated loads to sweep (ignored with --rates)")
	cmd.Flags().StringVar(&rates, "rates", "", "comma-separated job arrival rates (jobs/s) to sweep instead of loads; needed for no-op tasks")
	cmd.Flags().DurationVar(&settle, "settle", time.Second, "pause between points so the previous one's stragglers drain")
	return cmd
}

type benchPoint struct {
	load, rate float64
}

func parseFloats(list, flag string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("%s: %q is not a positive number", flag, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no values", flag)
	}
	return out, nil
}

func benchPoints(loads, rates string, ff fleetFlags) ([]benchPoint, error) {
	if rates != "" {
		rs, err := parseFloats(rates, "--rates")
		if err != nil {
			return nil, err
		}
		var out []benchPoint
		for _, r := range rs {
			out = append(out, benchPoint{load: ff.load, rate: r})
		}
		return out, nil
	}
	if ff.taskDuration == 0 {
		return nil, fmt.Errorf("no-op tasks (--task-duration 0) have no load; sweep --rates instead")
	}
	ls, err := parseFloats(loads, "--loads")
	if err != nil {
		return nil, err
	}
	var out []benchPoint
	for _, l := range ls {
		out = append(out, benchPoint{load: l})
	}
	return out, nil
}

// benchRow is one point of the sweep, as printed with --json.
type benchRow struct {
	OfferedJobsPerSec float64 `json:"offered_jobs_per_sec"`
	fleet.Result
}

func runBenchFleet(ctx context.Context, ff fleetFlags, points []benchPoint, settle time.Duration, out, progress io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	f, err := startFleetFromFlags(ctx, ff, progress)
	if err != nil {
		return err
	}
	defer f.Close()
	var rows []benchRow
	for i, p := range points {
		if i > 0 {
			time.Sleep(settle) // spacing between measurements, not synchronisation
		}
		spec := workload.Spec{Load: p.load, Slots: f.TotalSlots(), TasksPerJob: ff.tasks, TaskDuration: ff.taskDuration}
		rate := p.rate
		if rate == 0 {
			rate = spec.JobsPerSecond()
		}
		fmt.Fprintf(progress, "point %d/%d: %.1f jobs/s of %d x %v for %v\n", i+1, len(points), rate, ff.tasks, ff.taskDuration, ff.duration)
		res, err := f.Drive(ctx, fleet.DriveConfig{
			Spec: spec, Duration: ff.duration, JobsPerSecond: p.rate, Drain: ff.drain, Seed: ff.seed + uint64(i),
		})
		if err != nil {
			return err
		}
		rows = append(rows, benchRow{OfferedJobsPerSec: rate, Result: res})
	}
	fmt.Fprintf(out, "%10s %6s %9s %8s %10s %10s %9s %9s %9s %8s\n",
		"jobs/s", "load", "tasks/s", "refused", "delay p50", "delay p99", "resp p50", "resp p95", "resp p99", "ideal")
	for _, r := range rows {
		fmt.Fprintf(out, "%10.1f %6.2f %9.1f %8d %9.2fms %9.2fms %7.1fms %7.1fms %7.1fms %6.1fms\n",
			r.OfferedJobsPerSec, r.Load, r.TasksPerSec, r.JobsRefused+r.JobsIncomplete,
			r.SchedDelayMs.P50, r.SchedDelayMs.P99, r.ResponseMs.P50, r.ResponseMs.P95, r.ResponseMs.P99, r.IdealMs)
	}
	if ff.asJSON {
		b, err := json.Marshal(rows)
		if err != nil {
			return fmt.Errorf("encode results: %w", err)
		}
		fmt.Fprintln(out, string(b))
	}
	return nil
}
