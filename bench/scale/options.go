package scale

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/listflag"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// Options are `sparrow bench scale`: Config, the sizes as the
// comma-separated list the command takes (Validate parses it), and where
// results go.
type Options struct {
	Config
	SizeList string
	// Out receives results.json, the plots and any profiles; JSON prints
	// the results as JSON instead of the table.
	Out     string
	JSON    bool
	Profile bool
}

// Validate parses SizeList and checks the rest.
func (o *Options) Validate() error {
	sizes, err := listflag.Positive("--nodes", o.SizeList)
	if err != nil {
		return err
	}
	o.Sizes = o.Sizes[:0]
	for _, s := range sizes {
		if s != float64(int(s)) {
			return fmt.Errorf("--nodes %g: want whole numbers", s)
		}
		o.Sizes = append(o.Sizes, int(s))
	}
	if o.Profile {
		o.IdleProfile = func(n int) string { return filepath.Join(o.Out, fmt.Sprintf("idle-%d.pprof", n)) }
	}
	return o.Config.Validate()
}

// Run measures every size, saves the results into Out and prints them.
func (o *Options) Run(ctx context.Context, out, progress io.Writer) error {
	var mu sync.Mutex
	o.Say = func(s string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(progress, s)
	}
	rs, err := Run(ctx, o.Config)
	if err != nil {
		return err
	}
	if err := rs.Save(o.Out); err != nil {
		return err
	}
	fmt.Fprintf(progress, "results and plots in %s\n", o.Out)
	return report.Print(out, rs, report.If(o.JSON, report.IndentedJSON))
}

// AddFlags declares the command's flags on fs, with their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.SizeList, "nodes", "100,300,1000", "comma-separated node monitor counts, one fresh fleet each")
	fs.IntVar(&o.Schedulers, "schedulers", 3, "schedulers in every fleet")
	fs.IntVar(&o.Slots, "slots", 1, "slots per node monitor")
	fs.IntVar(&o.Procs, "procs", 0, fmt.Sprintf("processes hosting the node monitors: 1 keeps them in this process with the schedulers; more starts that many child processes, each with a contiguous slice; 0 picks enough that none holds more than %d", maxPerProcess))
	fs.StringVar(&o.GossipProfile, "gossip-profile", "lan", "every member's gossip timing: lan, local or wan")
	fs.Float64Var(&o.StartRate, "start-rate", 0, "node monitors started per second across the fleet; 0 starts each process's one after another as fast as they come up. On a machine too small for the fleet, pacing the start keeps the joins' gossip, which every member relays, within its CPU")
	fs.DurationVar(&o.Idle, "idle", 10*time.Second, "window with no work over which gossip traffic and idle CPU per member are measured")
	fs.DurationVar(&o.Settle, "settle", 30*time.Second, "how long to leave the formed fleet before the idle window, so that the formation's gossip has drained")
	fs.Float64Var(&o.JobsPerSec, "jobs-per-sec", 20, "job arrival rate of the drive that measures scheduling delay and CPU per task")
	fs.IntVar(&o.Tasks, "tasks", 4, "tasks per job in the drive")
	fs.DurationVar(&o.TaskDuration, "task-duration", 10*time.Millisecond, "how long each task sleeps")
	fs.DurationVar(&o.Warmup, "warmup", 0, "drive the fleet this long, unmeasured, before the measured drive, so that every scheduler holds the connections to node monitors a running fleet holds (its first call to each dials it)")
	fs.DurationVar(&o.Drive, "drive", 10*time.Second, "how long jobs arrive in the drive")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 5*time.Minute, "give up on a fleet that has not formed after this long")
	fs.DurationVar(&o.KillTimeout, "kill-timeout", time.Minute, "give up if a scheduler still offers a killed node monitor after this long")
	fs.BoolVar(&o.Profile, "profile", false, "write a CPU profile of each size's idle window into --out: this process's as idle-N.pprof and, with --procs above 1, each child's as idle-N-child-K.pprof (go tool pprof FILE)")
	fs.StringVar(&o.Out, "out", "bin/bench-scale", "directory for results.json, the plots and profiles")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON instead of the table")
}
