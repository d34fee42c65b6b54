package fairness

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

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
