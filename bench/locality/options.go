package locality

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

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
