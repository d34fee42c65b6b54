package live

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// The Validate methods name the command-line flags of `sparrow bench
// fairness|priority|constraints` that set the field out of range, so that
// the command can return their errors as they are.

// Validate checks the fleet and job shape every experiment shares.
func (c Common) Validate() error {
	switch {
	case c.Fleet.Schedulers < 1:
		return fmt.Errorf("--schedulers must be at least 1")
	case c.Fleet.NodeMonitors < 1:
		return fmt.Errorf("--nodes must be at least 1")
	case c.Fleet.Slots < 1:
		return fmt.Errorf("--slots must be at least 1")
	case c.TasksPerJob < 1:
		return fmt.Errorf("--tasks must be at least 1")
	case c.TaskDuration <= 0:
		return fmt.Errorf("--task-duration must be positive (the shares are measured in slot-time)")
	}
	return nil
}

// Validate parses WeightSpec into Weights, unless only Weights is set,
// and checks the Figure 11 settings other than Common.
func (o *FairnessOptions) Validate() error {
	if o.WeightSpec != "" || o.Weights == ([2]float64{}) {
		w, err := policy.ParseWeights(o.WeightSpec)
		if err != nil {
			return fmt.Errorf("--weights: %w", err)
		}
		o.Weights = w
	}
	if err := policy.CheckLoads("--user1-loads", o.User1Loads); err != nil {
		return err
	}
	if err := policy.CheckLoads("--user0-load", []float64{o.User0Load}); err != nil {
		return err
	}
	if o.Interval <= 0 || o.Bin <= 0 {
		return fmt.Errorf("--interval and --bin must be positive")
	}
	return nil
}

// Validate checks the Table 3 settings other than Common.
func (o PriorityOptions) Validate() error {
	if err := policy.CheckLoads("--lp-loads", o.LPLoads); err != nil {
		return err
	}
	if !(o.HPLoad > 0) {
		return fmt.Errorf("--hp-load must be positive")
	}
	return checkWindow(o.Duration, o.Drain, o.Warmup)
}

// Validate parses Attr into AttrKey and AttrValue, unless only they are
// set, and checks the constraints settings other than Common.
func (o *ConstraintsOptions) Validate() error {
	if o.Attr != "" || (o.AttrKey == "" && o.AttrValue == "") {
		var err error
		if o.AttrKey, o.AttrValue, err = ParseAttr(o.Attr); err != nil {
			return err
		}
	}
	if !(o.AttrFraction > 0 && o.AttrFraction <= 1) {
		return fmt.Errorf("--attr-fraction must be in (0, 1]")
	}
	if err := policy.CheckLoads("--constrained-load/--free-load", []float64{o.ConstrainedLoad, o.FreeLoad}); err != nil {
		return err
	}
	return checkWindow(o.Duration, o.Drain, o.Warmup)
}

func checkWindow(duration, drain, warmup time.Duration) error {
	if duration <= 0 || drain < 0 || warmup < 0 || warmup >= duration {
		return fmt.Errorf("--duration must be positive, --drain and --warmup not negative, and --warmup shorter than --duration")
	}
	return nil
}

// ParseAttr splits --attr's "key=value"; both must be non-empty.
func ParseAttr(s string) (key, val string, err error) {
	key, val, ok := strings.Cut(s, "=")
	if !ok || key == "" || val == "" {
		return "", "", fmt.Errorf("--attr %q: want key=value", s)
	}
	return key, val, nil
}

// NewLog returns the fleet's logger at level, writing through a LogWatch
// to out: as console lines when out is a terminal, JSON lines otherwise.
// The watch counts what the fleet says during each measurement and mutes
// its teardown.
func NewLog(out *os.File, level zerolog.Level) (zerolog.Logger, *LogWatch) {
	var w io.Writer = out
	if term.IsTerminal(int(out.Fd())) {
		w = zerolog.ConsoleWriter{Out: out, TimeFormat: time.TimeOnly}
	}
	watch := NewLogWatch(w)
	return zerolog.New(watch).Level(level).With().Timestamp().Logger(), watch
}

// WaitQuiet waits, up to maxWait, for the host's 1-minute load average
// to fall below maxLoad before a live run starts, saying so on progress;
// past maxWait it goes ahead and says that too. maxLoad <= 0 does not
// wait.
func WaitQuiet(ctx context.Context, progress io.Writer, maxLoad float64, maxWait time.Duration) {
	waited, gaveUp := WaitForLoad(ctx, maxLoad, maxWait, 10*time.Second, func(l float64, d time.Duration) {
		fmt.Fprintf(progress, "waiting for load %.1f < %.1f (%v)\n", l, maxLoad, d.Round(time.Second))
	})
	if gaveUp {
		fmt.Fprintf(progress, "load still above %.1f after %v; running anyway\n", maxLoad, waited.Round(time.Second))
	}
}

// Command is what the three experiments' commands share: the fleet and
// job shape (Common) as their flags give it, and how the report is
// printed.
type Command struct {
	Common
	// JSON ends the output with the report as one JSON line; Plot, if
	// set, receives the report's chart.
	JSON bool
	Plot string
}

// AddFlags declares the flags the experiments share on fs, with their
// defaults; nodes is --nodes's.
func (c *Command) AddFlags(fs *pflag.FlagSet, nodes int) {
	fs.IntVar(&c.Fleet.Schedulers, "schedulers", 2, "schedulers in the fleet (jobs go to them round robin)")
	fs.IntVar(&c.Fleet.NodeMonitors, "nodes", nodes, "node monitors in the fleet")
	fs.IntVar(&c.Fleet.Slots, "slots", 4, "slots per node monitor")
	fs.IntVar(&c.TasksPerJob, "tasks", 10, "tasks per job")
	fs.DurationVar(&c.TaskDuration, "task-duration", 100*time.Millisecond, "how long each sleep task runs")
	fs.Float64Var(&c.Fleet.ProbeRatio, "probe-ratio", 2, "probe ratio d")
	fs.BoolVar(&c.Fleet.SingleHost, "single-host", false, "put every member on 127.0.0.1 instead of its own 127.0.x.y address")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed for arrivals and placement")
	fs.BoolVar(&c.JSON, "json", false, "also print the results as one JSON object on the last line")
	fs.StringVar(&c.Plot, "plot", "", "write a plot to this file (.svg or .png)")
	fs.Float64Var(&c.MaxLoad, "max-load", 0, "before starting each fleet, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&c.MaxLoadWait, "max-load-wait", 10*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
}

// Validate checks Common and that Plot, if set, names a file a chart can
// be written to.
func (c *Command) Validate() error {
	if err := c.Common.Validate(); err != nil {
		return err
	}
	if c.Plot != "" {
		if err := plot.CheckPath(c.Plot); err != nil {
			return fmt.Errorf("--%w", err) // "--plot FILE: want ..."
		}
	}
	return nil
}

// Start readies Common for a run: the fleet logs at level on stderr
// (NewLog), arrivals and placement share the seed, and the progress lines
// and notes are printed on progress.
func (c *Command) Start(level zerolog.Level, stderr *os.File, progress io.Writer) {
	c.Fleet.Log, c.Fleet.Watch = NewLog(stderr, level)
	c.Fleet.Seed = c.Seed
	c.Progress = func(p Progress) { fmt.Fprintln(progress, " ", p) }
	c.Say = func(s string) { fmt.Fprintln(progress, s) }
}

// Print prints r's table on out, writes its plot (naming it on progress)
// and, with JSON, ends with r as one JSON line.
func (c *Command) Print(out, progress io.Writer, r report.Charted) error {
	return report.Write(out, progress, r, report.If(c.JSON, report.TableThenJSON), c.Plot)
}

// AddFlags declares `sparrow bench fairness`'s own flags on fs, with
// their defaults.
func (o *FairnessOptions) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Interval, "interval", 10*time.Second, "length of each step of user1's demand")
	fs.DurationVar(&o.Bin, "bin", time.Second, "share measurement bin")
	fs.StringVar(&o.WeightSpec, "weights", "1:1", "fair-share weights user0:user1")
	fs.Float64Var(&o.User0Load, "user0-load", 1, "user0's offered load, as a fraction of the fleet's slots")
	fs.Float64SliceVar(&o.User1Loads, "user1-loads", []float64{0, 0.25, 0.5, 0.25, 0}, "user1's offered load in each interval")
}

// AddFlags declares `sparrow bench priority`'s own flags on fs, with
// their defaults.
func (o *PriorityOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Float64Var(&o.HPLoad, "hp-load", 0.25, "high-priority user's offered load, as a fraction of the fleet's slots")
	fs.Float64SliceVar(&o.LPLoads, "lp-loads", []float64{0, 0.25, 0.5, 0.75, 1.75}, "low-priority loads, one fleet run each")
	fs.DurationVar(&o.Duration, "duration", 15*time.Second, "how long jobs arrive in each run")
	fs.DurationVar(&o.Drain, "drain", 5*time.Second, "longest wait for unfinished jobs after arrivals stop; what is left is reported as still queued")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "jobs submitted this early in each run are not measured")
}

// AddFlags declares `sparrow bench constraints`'s own flags on fs, with
// their defaults.
func (o *ConstraintsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Attr, "attr", "gpu=yes", "node attribute the constrained jobs require (key=value)")
	fs.Float64Var(&o.AttrFraction, "attr-fraction", 0.2, "fraction of node monitors that have the attribute (at least one)")
	fs.Float64Var(&o.ConstrainedLoad, "constrained-load", 0.5, "constrained jobs' offered load, as a fraction of the attribute nodes' slots")
	fs.Float64Var(&o.FreeLoad, "free-load", 0.5, "unconstrained jobs' offered load, as a fraction of all slots")
	fs.StringVar(&o.Queue, "queue", "fifo", "node monitors' queue discipline")
	fs.DurationVar(&o.Duration, "duration", 30*time.Second, "how long jobs arrive")
	fs.DurationVar(&o.Drain, "drain", 10*time.Second, "longest wait for unfinished jobs after arrivals stop")
	fs.DurationVar(&o.Warmup, "warmup", time.Second, "jobs submitted this early are not measured")
}
