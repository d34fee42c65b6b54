package main

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

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/internal/workload"
)

func init() { rootCmd.AddCommand(newLocalCmd()) }

// fleetFlags shape an in-process fleet and its workload; `local` and
// `bench` share them.
type fleetFlags struct {
	schedulers, nodes, slots, tasks int
	taskDuration, duration, drain   time.Duration
	load, probeRatio, jobsPerSec    float64
	queue                           string
	noCancel, singleHost, asJSON    bool
	seed                            uint64
	cpuProfile, gossipProfile       string
}

func (f *fleetFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.schedulers, "schedulers", 2, "schedulers in the fleet")
	fs.IntVar(&f.nodes, "nodes", 10, "node monitors in the fleet")
	fs.IntVar(&f.slots, "slots", 4, "slots per node monitor")
	fs.IntVar(&f.tasks, "tasks", 10, "tasks per job")
	fs.DurationVar(&f.taskDuration, "task-duration", 100*time.Millisecond, "how long each sleep task runs (0: no-op tasks; then set --jobs-per-sec)")
	fs.Float64Var(&f.load, "load", 0.8, "target fraction of slots busy; sets the Poisson job arrival rate")
	fs.Float64Var(&f.jobsPerSec, "jobs-per-sec", 0, "job arrival rate, overriding the one derived from --load")
	fs.DurationVar(&f.duration, "duration", 20*time.Second, "how long jobs keep arriving")
	fs.DurationVar(&f.drain, "drain", 30*time.Second, "longest wait for in-flight jobs after arrivals stop")
	fs.Float64Var(&f.probeRatio, "probe-ratio", 2, "probe ratio d")
	fs.StringVar(&f.queue, "queue", "fifo", "node monitors' reservation queue discipline")
	fs.BoolVar(&f.noCancel, "no-cancel", false, "do not cancel leftover reservations")
	fs.BoolVar(&f.singleHost, "single-host", false, "put every member on 127.0.0.1 instead of its own 127.0.x.y address")
	fs.Uint64Var(&f.seed, "seed", 1, "seed for arrivals and placement")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as one JSON object on the last line")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run (fleet and driver) to this file")
	fs.StringVar(&f.gossipProfile, "gossip-profile", "local", "members' gossip timing: local (fast convergence and failure detection), lan (lighter, but slower to converge) or wan")
}

func (f *fleetFlags) validate() error {
	switch {
	case f.schedulers < 1:
		return fmt.Errorf("--schedulers must be at least 1")
	case f.nodes < 1:
		return fmt.Errorf("--nodes must be at least 1")
	case f.slots < 1:
		return fmt.Errorf("--slots must be at least 1")
	case f.duration <= 0:
		return fmt.Errorf("--duration must be positive")
	}
	return nil
}

func newLocalCmd() *cobra.Command {
	var ff fleetFlags
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run an embedded fleet on loopback and drive a synthetic workload through it",
		Long: `Start a whole fleet in this process — schedulers, node monitors and sleep
executors, over real Thrift and real gossip, each on its own 127.0.x.y
address — drive Poisson arrivals of jobs through it, and print a summary:
jobs and tasks completed, job response time next to the ideal, scheduling
delay (submit to launch) and throughput.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("log-level") {
				logLevel = "warn"
			}
			if ff.taskDuration == 0 && ff.jobsPerSec <= 0 {
				return fmt.Errorf("no-op tasks (--task-duration 0) need --jobs-per-sec")
			}
			res, err := runFleet(cmd.Context(), ff, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return printResult(cmd.OutOrStdout(), ff, res)
		},
	}
	ff.register(cmd.Flags())
	return cmd
}

// startFleetFromFlags validates the flags and starts the fleet they
// describe, with the CPU profile (if asked for) running until the fleet
// closes.
func startFleetFromFlags(ctx context.Context, ff fleetFlags, progress io.Writer) (*fleetRun, error) {
	if err := ff.validate(); err != nil {
		return nil, err
	}
	log, err := newLogger()
	if err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	t0 := time.Now()
	f, err := fleet.Start(startCtx, fleet.Config{
		Schedulers: ff.schedulers, NodeMonitors: ff.nodes, Slots: ff.slots,
		ProbeRatio: ff.probeRatio, NoCancel: ff.noCancel, Queue: ff.queue,
		SingleHost: ff.singleHost, Seed: ff.seed, GossipProfile: ff.gossipProfile, Log: log,
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "fleet up in %v: %s\n", time.Since(t0).Round(time.Millisecond), f.Describe())
	run := &fleetRun{Fleet: f}
	if ff.cpuProfile != "" {
		out, err := os.Create(ff.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(out)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		run.profile = out
	}
	return run, nil
}

// fleetRun is a started fleet and the CPU profile recording it.
type fleetRun struct {
	*fleet.Fleet
	profile *os.File
}

// Close stops the profile, then the fleet.
func (r *fleetRun) Close() error {
	if r.profile != nil {
		pprof.StopCPUProfile()
		r.profile.Close()
	}
	return r.Fleet.Close()
}

// runFleet starts a fleet, drives the workload and tears the fleet down.
func runFleet(ctx context.Context, ff fleetFlags, progress io.Writer) (fleet.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	f, err := startFleetFromFlags(ctx, ff, progress)
	if err != nil {
		return fleet.Result{}, err
	}
	defer f.Close()
	spec := workload.Spec{Load: ff.load, Slots: f.TotalSlots(), TasksPerJob: ff.tasks, TaskDuration: ff.taskDuration}
	rate := ff.jobsPerSec
	if rate <= 0 {
		rate = spec.JobsPerSecond()
	}
	fmt.Fprintf(progress, "workload: jobs of %d tasks x %v, %.1f jobs/s (load %.2f), for %v\n",
		ff.tasks, ff.taskDuration, rate, ff.load, ff.duration)
	return f.Drive(ctx, fleet.DriveConfig{
		Spec: spec, Duration: ff.duration, JobsPerSecond: ff.jobsPerSec, Drain: ff.drain, Seed: ff.seed,
		Progress: func(p fleet.Progress) {
			fmt.Fprintf(progress, "  %5.1fs  submitted %6d  completed %6d  in flight %4d\n",
				p.Elapsed.Seconds(), p.Submitted, p.Completed, p.InFlight)
		},
	})
}

func printResult(w io.Writer, ff fleetFlags, r fleet.Result) error {
	fmt.Fprintf(w, "sparrow local: %d schedulers, %d node monitors x %d slots\n", r.Schedulers, r.NodeMonitors, r.SlotsPerNode)
	fmt.Fprintf(w, "  jobs completed    %d of %d submitted (%d refused, %d incomplete)\n",
		r.JobsCompleted, r.JobsSubmitted, r.JobsRefused, r.JobsIncomplete)
	fmt.Fprintf(w, "  tasks completed   %d (%d failed)\n", r.TasksCompleted, r.TasksFailed)
	fmt.Fprintf(w, "  response time     p50 %.1f ms  p95 %.1f ms  p99 %.1f ms  (ideal %.1f ms)\n",
		r.ResponseMs.P50, r.ResponseMs.P95, r.ResponseMs.P99, r.IdealMs)
	fmt.Fprintf(w, "  scheduling delay  p50 %.2f ms  p99 %.2f ms  (submit -> launch)\n", r.SchedDelayMs.P50, r.SchedDelayMs.P99)
	fmt.Fprintf(w, "  throughput        %.1f tasks/s\n", r.TasksPerSec)
	if ff.asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode result: %w", err)
		}
		fmt.Fprintln(w, string(b))
	}
	return nil
}
