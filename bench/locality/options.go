package locality

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

// Options are one `sparrow bench locality` run: the experiment's Config,
// the sizes and bandwidths in the units the command takes them, the modes
// to compare, each on a fresh fleet, where the results go, and how quiet
// the host must be before each mode starts.
type Options struct {
	Config
	// BlockMiB is every block's size; RackMiBps and CoreMiBps the read
	// bandwidths within a rack and across the core (Validate sets
	// Workload.BlockBytes and Read from them).
	BlockMiB, RackMiBps, CoreMiBps float64
	// Modes are mode names, comma-separated.
	Modes string
	// OutDir receives locality.json and the plots; JSON prints the report
	// as JSON instead of the table.
	OutDir string
	JSON   bool
	// Reference adds the centralized Quincy reference (RunReference).
	Reference bool
	// MaxLoad, if above zero, makes each mode wait up to MaxLoadWait for
	// the host's 1-minute load average to fall below it.
	MaxLoad     float64
	MaxLoadWait time.Duration
	// Command is recorded in the report.
	Command string

	modes []Mode
}

// Validate parses Modes, checks the settings, naming the flags at fault,
// fills Workload.BlockBytes and Read and creates OutDir.
func (o *Options) Validate() error {
	o.modes = nil
	for _, name := range strings.Split(o.Modes, ",") {
		m, err := ModeByName(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("--modes: %w", err)
		}
		o.modes = append(o.modes, m)
	}
	w := &o.Workload
	switch {
	case w.Topology.Nodes < 1 || w.Topology.Racks < 1 || w.Slots < 1 || o.Schedulers < 1:
		return fmt.Errorf("--nodes, --racks, --slots and --schedulers must be at least 1")
	case w.Blocks < 1 || w.TasksPerJob < 1 || !(o.BlockMiB > 0):
		return fmt.Errorf("--blocks and --tasks must be at least 1, --block-mib positive")
	case !(w.ZipfS >= 0) || !(w.Load > 0):
		return fmt.Errorf("--zipf must be at least 0 and --load positive")
	case w.CPU <= 0 || w.Duration <= 0 || o.DelayThreshold < 0 || o.Period <= 0 || o.Drain <= 0:
		return fmt.Errorf("--cpu, --duration, --period and --drain must be positive, --delay-threshold not negative")
	case !(o.RackMiBps > 0) || !(o.CoreMiBps > 0):
		return fmt.Errorf("--rack-mibps and --core-mibps must be positive")
	case !(o.RackCost > 0) || !(o.CoreCost > 0) || o.RackCost > 1e6 || o.CoreCost > 1e6:
		return fmt.Errorf("--rack-cost and --core-cost must be in (0, 1e6]")
	}
	w.BlockBytes = int64(o.BlockMiB * (1 << 20))
	o.Read = ReadModel{RackBandwidth: o.RackMiBps * (1 << 20), CoreBandwidth: o.CoreMiBps * (1 << 20)}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return fmt.Errorf("--out-dir: %w", err)
	}
	return nil
}

// RunAll runs the validated modes in turn, each on a fresh fleet once the
// host is quiet, then the reference if asked, and prints and writes the
// report; progress gets the notes.
func (o *Options) RunAll(ctx context.Context, out, progress io.Writer) error {
	c, w := o.Config, o.Workload
	fmt.Fprintf(progress, "locality: %d node monitors x %d slots in %d racks, %d blocks, Zipf %g, load %g, %v per mode, modes %s\n",
		w.Topology.Nodes, w.Slots, w.Topology.Racks, w.Blocks, w.ZipfS, w.Load, w.Duration, o.Modes)
	var rep Report
	for k, m := range o.modes {
		live.WaitQuiet(ctx, progress, o.MaxLoad, o.MaxLoadWait)
		r, err := Run(ctx, c, []Mode{m})
		if err != nil {
			return err
		}
		if k == 0 {
			rep = r
		} else {
			rep.Modes = append(rep.Modes, r.Modes...)
		}
	}
	if o.Reference {
		ref, err := RunReference(c)
		if err != nil {
			return fmt.Errorf("reference: %w", err)
		}
		rep.Reference = &ref
	}
	rep.Command = o.Command
	return rep.Write(o.OutDir, o.JSON, out, progress)
}

// AddFlags declares `sparrow bench locality`'s flags on fs, with their
// defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	w := &o.Workload
	fs.IntVar(&w.Topology.Nodes, "nodes", 40, "node monitors")
	fs.IntVar(&w.Topology.Racks, "racks", 4, "racks the node monitors are split into (node attribute \"rack\")")
	fs.IntVar(&w.Slots, "slots", 1, "slots per node monitor")
	fs.IntVar(&o.Schedulers, "schedulers", 1, "schedulers; jobs go to their frontends in turn")
	fs.IntVar(&w.Blocks, "blocks", 400, "input blocks in the catalogue, each with 3 replicas")
	fs.Float64Var(&o.BlockMiB, "block-mib", 64, "size of every block, MiB")
	fs.Float64Var(&w.ZipfS, "zipf", 1.1, "Zipf exponent s of block popularity: P(k-th block) ∝ k^-s")
	fs.IntVar(&w.TasksPerJob, "tasks", 10, "tasks per job, each reading one block")
	fs.Float64Var(&w.Load, "load", 0.7, "offered load as a fraction of all slots, counting each task at --cpu")
	fs.DurationVar(&w.CPU, "cpu", 200*time.Millisecond, "each task's CPU time (its whole run time when node-local)")
	fs.DurationVar(&w.Duration, "duration", 60*time.Second, "how long jobs arrive, per mode")
	fs.Float64Var(&o.RackMiBps, "rack-mibps", 64/0.100, "bandwidth of a read within a rack, MiB/s (scaled down: 64 MiB in 100 ms)")
	fs.Float64Var(&o.CoreMiBps, "core-mibps", 64/0.600, "bandwidth of a read across the core switch, MiB/s (scaled down: 64 MiB in 600 ms)")
	fs.DurationVar(&o.DelayThreshold, "delay-threshold", 0, "the relaxing modes' delayThreshold (0: 3 x --cpu)")
	fs.Float64Var(&o.RackCost, "rack-cost", 1, "ψ: cost of moving a GB across a rack switch, in Quincy's units (ω = 0.5 per second of waiting), for the prices and the reference; 0.745 matches the default read model")
	fs.Float64Var(&o.CoreCost, "core-cost", 2, "ξ: cost of moving a GB across the core switch, in Quincy's units, for the prices and the reference; 4.47 matches the default read model")
	fs.DurationVar(&o.Period, "period", time.Second, "coordinator period and node monitors' report interval (guided mode)")
	fs.DurationVar(&o.Drain, "drain", 30*time.Second, "longest wait for unfinished jobs after the last arrival")
	fs.StringVar(&o.Modes, "modes", "strict,delay,guided", "comma-separated modes to run: strict, delay, guided")
	fs.Uint64Var(&w.Seed, "seed", 1, "seed of the trace (replicas, arrivals, blocks); the same for every mode")
	fs.Uint64Var(&o.Seed, "sched-seed", 1, "seed of the schedulers' sampling")
	fs.StringVar(&o.GossipProfile, "gossip-profile", "lan", "members' gossip timing: lan, local or wan")
	fs.StringVar(&o.OutDir, "out-dir", ".", "directory for locality.json and the locality-fractions and locality-response plots")
	fs.BoolVar(&o.JSON, "json", false, "print the JSON report on stdout instead of the table")
	fs.BoolVar(&o.Reference, "reference", true, "also schedule the trace offline with centralized Quincy (policy Q) as the reference")
	fs.Float64Var(&o.MaxLoad, "max-load", 0, "before each mode, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&o.MaxLoadWait, "max-load-wait", 5*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
}
