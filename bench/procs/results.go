package procs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/listflag"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// Results are the points of a sweep, as `sparrow bench procs` prints
// them.
type Results []Result

// WriteTable prints the table of WriteTable.
func (rs Results) WriteTable(w io.Writer) error { return WriteTable(w, rs) }

// Options are `sparrow bench procs`: Config, the rates as the
// comma-separated list the command takes (Validate parses it), where the
// results go and how they are printed.
type Options struct {
	Config
	RateList string
	// Out receives the members' logs, results.json and the plot; JSON
	// prints the results as JSON instead of the table.
	Out  string
	JSON bool

	rates []float64
}

// Validate parses RateList.
func (o *Options) Validate() (err error) {
	o.rates, err = listflag.Positive("--rates", o.RateList)
	return err
}

// Run measures every rate (RunRates) and prints the results on out.
func (o *Options) Run(ctx context.Context, out, progress io.Writer) error {
	results, err := RunRates(ctx, o.Config, o.rates, o.Out, progress)
	if err != nil {
		return err
	}
	return report.Print(out, results, report.If(o.JSON, report.JSONLine))
}

// RunRates measures cfg at each rate in turn, a fresh fleet each with its
// members' logs in dir/rate-R, and saves the results into dir
// (WriteResults). progress gets each point's notes, prefixed with the
// point.
func RunRates(ctx context.Context, cfg Config, rates []float64, dir string, progress io.Writer) (Results, error) {
	var results Results
	for i, r := range rates {
		pc := cfg
		pc.Rate = r
		pc.Dir = filepath.Join(dir, fmt.Sprintf("rate-%g", r))
		pc.Say = func(s string) { fmt.Fprintf(progress, "bench procs [%d/%d, %g jobs/s]: %s\n", i+1, len(rates), r, s) }
		res, err := Run(ctx, pc)
		if err != nil {
			return nil, fmt.Errorf("rate %g jobs/s (logs in %s): %w", r, pc.Dir, err)
		}
		results = append(results, res)
	}
	return results, WriteResults(dir, results)
}

// WriteResults saves the results as JSON and the CPU-per-task plot.
func WriteResults(dir string, results []Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results dir: %w", err)
	}
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, "results.json"), err)
	}
	r := results[0]
	sub := fmt.Sprintf("%d scheduler(s), %d node monitors x %d slots, %d-task jobs, %s gossip", r.Schedulers, r.NodeMonitors, r.SlotsPerNode, r.TasksPerJob, r.GossipProfile)
	c := Chart(results, sub)
	for _, ext := range []string{"svg", "png"} {
		if err := c.Save(filepath.Join(dir, "cpu-per-task."+ext)); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	return nil
}

// AddFlags declares `sparrow bench procs`'s flags on fs, with their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Binary, "binary", "", "sparrow binary each member runs (default: this one)")
	fs.IntVar(&o.Schedulers, "schedulers", 1, "scheduler processes, each with its own driver that submits an equal share of the jobs and of the rate to it (the other schedulers are its failover list); latency percentiles are over all drivers' samples")
	fs.IntVar(&o.NodeMonitors, "nodes", 10, "node monitor processes, each with an executor process beside it")
	fs.IntVar(&o.Slots, "slots", 8, "slots per node monitor")
	fs.IntVar(&o.Jobs, "jobs", 3000, "jobs to drive at each rate")
	fs.IntVar(&o.Tasks, "tasks", 4, "tasks per job")
	fs.StringVar(&o.RateList, "rates", "200", "comma-separated job arrival rates (jobs/s), one fresh fleet each")
	fs.DurationVar(&o.TaskDuration, "task-duration", 0, "how long each task sleeps (0: no-op tasks)")
	fs.StringVar(&o.GossipProfile, "gossip-profile", "lan", "every member's gossip timing: lan, local or wan")
	fs.StringVar(&o.Net, "net", "127.60", "first two octets of the members' loopback addresses (role r's member i is NET.r.(i+1))")
	fs.DurationVar(&o.Idle, "idle", 5*time.Second, "how long to measure the formed fleet with no work, for each role's idle CPU rate")
	fs.DurationVar(&o.Deadline, "deadline", 5*time.Minute, "give up on a drive that has not completed after this long")
	fs.DurationVar(&o.FrontendTimeout, "frontend-timeout", time.Second, "the driver's scheduler failure-detection timeout (sparrow drive --timeout): above the fleet's 100 ms default so that a scheduler stalled by a busy machine is not failed over, which would add resubmissions to every role's cost")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", time.Minute, "give up if the fleet has not formed after this long")
	fs.StringArrayVar(&o.SchedulerArgs, "scheduler-arg", nil, "extra flag for every scheduler (repeatable), e.g. --scheduler-arg=--offers")
	fs.BoolVar(&o.Pin, "pin", false, "run every scheduler on CPU 0 and the rest of the fleet (node monitors, executors, the driver) on CPU 1, to measure what one core of scheduler sustains (Linux, 2 CPUs or more)")
	fs.DurationVar(&o.Profile, "profile", 0, "if set, save a CPU profile this long of the first scheduler and node monitor, from the drive's start, into --out (go tool pprof FILE)")
	fs.StringVar(&o.Out, "out", "bin/bench-procs", "directory for members' logs, results.json and the plot")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON instead of a table")
}
