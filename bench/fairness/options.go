package fairness

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/bench/policy/live"
)

// Options are one `sparrow bench choosy` run: the experiment's Config,
// the setups to compare, each on a fresh fleet, where the results go, and
// how quiet the host must be before each setup starts.
type Options struct {
	Config
	// Setups are setup names, comma-separated.
	Setups string
	// OutDir receives fairness-mesos.json and the plots.
	OutDir string
	// MaxLoad, if above zero, makes each setup wait up to MaxLoadWait
	// for the host's 1-minute load average to fall below it.
	MaxLoad     float64
	MaxLoadWait time.Duration
	// Command is recorded in the report.
	Command string

	setups []Setup
}

// Validate parses Setups, checks Config and creates OutDir, naming the
// flag at fault.
func (o *Options) Validate() error {
	o.setups = nil
	for _, name := range strings.Split(o.Setups, ",") {
		s, err := SetupByName(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("--setups: %w", err)
		}
		o.setups = append(o.setups, s)
	}
	if err := o.Config.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return fmt.Errorf("--out-dir: %w", err)
	}
	return nil
}

// RunAll runs the validated setups in turn, each on a fresh fleet once
// the host is quiet, then prints the tables on out and writes the files;
// progress gets the notes.
func (o *Options) RunAll(ctx context.Context, out, progress io.Writer) error {
	c := o.Config
	fmt.Fprintf(progress, "choosy §7.3: 4 types x %d node monitors x %d slots, %v tasks, scale %g (%.0f s per setup), setups %s\n",
		c.NodesPerType, c.Slots, c.TaskDuration, c.Scale, 360*c.Scale, o.Setups)
	var rep Report
	for k, s := range o.setups {
		live.WaitQuiet(ctx, progress, o.MaxLoad, o.MaxLoadWait)
		r, err := Run(ctx, c, []Setup{s})
		if err != nil {
			return err
		}
		if k == 0 {
			rep = r
		} else {
			rep.Setups = append(rep.Setups, r.Setups...)
		}
	}
	rep.Command = o.Command
	return rep.Write(o.OutDir, out, progress)
}

// AddFlags declares `sparrow bench choosy`'s flags on fs, with their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.NodesPerType, "nodes-per-type", 4, "node monitors of each of the 4 machine types (the paper: 5 x 8 cores)")
	fs.IntVar(&o.Slots, "slots", 4, "slots per node monitor")
	fs.DurationVar(&o.TaskDuration, "task-duration", 200*time.Millisecond, "how long each sleep task runs")
	fs.IntVar(&o.TasksPerJob, "tasks", 8, "tasks per job")
	fs.Float64Var(&o.Backlog, "backlog", 4, "unfinished tasks each live user keeps, as a multiple of the slots it may use")
	fs.Float64Var(&o.Scale, "scale", 0.2, "run seconds per paper second (0.2: the paper's 360 s take 72 s per setup)")
	fs.StringVar(&o.Setups, "setups", "fair,choosy,cmmf-weights", "comma-separated setups to run: fair, choosy, cmmf-weights")
	fs.DurationVar(&o.Period, "period", time.Second, "coordinator period (and node monitors' report interval)")
	fs.DurationVar(&o.Bin, "bin", 500*time.Millisecond, "share measurement bin")
	fs.DurationVar(&o.Settle, "settle", 2*time.Second, "bins this soon after an arrival or departure are left out of the converged deviation")
	fs.Float64Var(&o.Tolerance, "tolerance", 0.05, "ramp-up threshold: |share - CMMF share| as a fraction of the cluster")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed for the schedulers' placement")
	fs.DurationVar(&o.SteerAfter, "steer-after", time.Second, "the scheduler's --steer-after in the choosy and cmmf-weights setups (negative: off)")
	fs.StringVar(&o.GossipProfile, "gossip-profile", "lan", "members' gossip timing: lan, local or wan")
	fs.StringVar(&o.OutDir, "out-dir", ".", "directory for fairness-mesos.json and the fairness-mesos-<setup>.svg/.png plots")
	fs.Float64Var(&o.MaxLoad, "max-load", 0, "before each setup, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&o.MaxLoadWait, "max-load-wait", 5*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
}
