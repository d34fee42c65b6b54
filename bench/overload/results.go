package overload

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/listflag"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// Points are the result as `sparrow bench overload` prints it: the
// tables, or as JSON the points without their per-second samples.
type Points []Point

// WriteTable prints the tables of WriteTable.
func (ps Points) WriteTable(w io.Writer) error { return WriteTable(w, ps) }

// MarshalJSON encodes the points without their samples.
func (ps Points) MarshalJSON() ([]byte, error) { return json.Marshal(StripSamples(ps)) }

// Options are `sparrow bench overload`: Config, with the multiples as the
// comma-separated list the command takes, and the output.
type Options struct {
	Config
	// MultipleList sets Config.Multiples (Validate parses it).
	MultipleList string
	// JSON prints the points without their samples as one JSON line
	// instead of the tables.
	JSON bool
}

// Validate parses MultipleList.
func (o *Options) Validate() (err error) {
	o.Multiples, err = listflag.Positive("--multiples", o.MultipleList)
	return err
}

// Run runs the benchmark, saves what it measured into Dir (also when a
// later multiple fails), and prints the tables, or the JSON, on out.
func (o *Options) Run(ctx context.Context, out io.Writer) error {
	points, runErr := Run(ctx, o.Config)
	if len(points) > 0 {
		if err := WriteResults(o.Dir, o.Config, points); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	return report.Print(out, Points(points), report.If(o.JSON, report.JSONLine))
}

// StripSamples returns the points without their per-second samples,
// which stay in each point's point.json.
func StripSamples(points []Point) []Point {
	out := make([]Point, len(points))
	for i, p := range points {
		p.Samples = nil
		out[i] = p
	}
	return out
}

// WriteResults saves results.json (with the goals' verdicts) and
// the goodput and RSS plots.
func WriteResults(dir string, cfg Config, points []Point) error {
	doc := struct {
		Points []Point   `json:"points"`
		Goals  []Verdict `json:"goals"`
	}{StripSamples(points), Judge(points)}
	if err := writeJSON(filepath.Join(dir, "results.json"), doc); err != nil {
		return err
	}
	sub := fmt.Sprintf("%d scheduler(s), %d node monitors x %d slots, %d x %v tasks per job: capacity %.0f tasks/s; %v per load",
		cfg.Schedulers, cfg.NodeMonitors, cfg.Slots, cfg.Tasks, cfg.TaskDuration, cfg.Capacity(), cfg.Duration)
	for name, c := range map[string]interface{ Save(string) error }{
		"overload-goodput": GoodputChart(points, sub),
		"overload-rss":     RSSChart(points, sub),
	} {
		for _, ext := range []string{"svg", "png"} {
			if err := c.Save(filepath.Join(dir, name+"."+ext)); err != nil {
				return fmt.Errorf("plot: %w", err)
			}
		}
	}
	return nil
}

// AddFlags declares `sparrow bench overload`'s flags on fs, with their
// defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Binary, "binary", "", "sparrow binary each member and the driver run (default: this one)")
	fs.IntVar(&o.Schedulers, "schedulers", 1, "scheduler processes")
	fs.IntVar(&o.NodeMonitors, "nodes", 4, "node monitor processes, each with an executor process beside it")
	fs.IntVar(&o.Slots, "slots", 2, "slots per node monitor")
	fs.IntVar(&o.Tasks, "tasks", 10, "tasks per job")
	fs.DurationVar(&o.TaskDuration, "task-duration", 250*time.Millisecond, "how long each task sleeps; capacity is nodes x slots / this (the default, 32 tasks/s, keeps the driver light at 1000x: it allocates every job of a point up front, 192,000 at 1000x)")
	fs.StringVar(&o.MultipleList, "multiples", "0.5,1,2,10,1000", "comma-separated offered loads, as multiples of capacity, one fresh fleet each")
	fs.DurationVar(&o.Duration, "duration", time.Minute, "how long each multiple is offered")
	fs.DurationVar(&o.Settle, "settle", 10*time.Second, "start of the measured window, from the drive's start (goodput, RSS growth and CPU are measured from here to --duration)")
	fs.DurationVar(&o.Drain, "drain", 5*time.Second, "how long past --duration the driver may wait for accepted jobs to finish (their response times count)")
	fs.IntVar(&o.MaxQueued, "max-queued", 100, "every node monitor's --max-queued: reservations queued before it refuses more, so how soon an overload saturates the fleet")
	fs.StringArrayVar(&o.SchedulerArgs, "scheduler-arg", nil, "extra flag for every scheduler (repeatable), e.g. --scheduler-arg=--max-hold=5s")
	fs.StringArrayVar(&o.NodeMonitorArgs, "nodemonitor-arg", nil, "extra flag for every node monitor (repeatable)")
	fs.StringArrayVar(&o.DriverArgs, "driver-arg", nil, "extra flag for sparrow drive (repeatable), e.g. --driver-arg=--retry-budget=0.5")
	fs.DurationVar(&o.FrontendTimeout, "frontend-timeout", time.Second, "the driver's --timeout: its scheduler failure detection and how long a submit waits for a free connection to the scheduler before failing as busy (above the 100 ms default so that a scheduler slowed by a busy machine is not failed over)")
	fs.StringVar(&o.GossipProfile, "gossip-profile", "lan", "every member's gossip timing: lan, local or wan")
	fs.StringVar(&o.Net, "net", "127.62", "first two octets of the members' loopback addresses (role r's member i is NET.r.(i+1))")
	fs.StringVar(&o.LogLevel, "member-log-level", "info", "the daemons' --log-level; info or debug is needed to see memberlist declare a member dead")
	fs.BoolVar(&o.HeapProfiles, "heap-profiles", false, "serve Go's profiler on the daemons and save a heap profile of the first scheduler and node monitor at --settle and at --duration into each point's directory (go tool pprof -sample_index=inuse_space FILE)")
	fs.DurationVar(&o.SampleEvery, "sample-every", time.Second, "interval between samples of /proc and the members' endpoints")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", time.Minute, "give up if a fleet has not formed after this long")
	fs.StringVar(&o.Dir, "out", "bin/bench-overload", "directory for members' logs, samples, results.json and the plots")
	fs.BoolVar(&o.JSON, "json", false, "print the results (without the per-second samples) as JSON instead of tables")
}
