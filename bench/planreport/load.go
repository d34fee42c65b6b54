package planreport

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/bench/graphrun"
	"github.com/sparrowfleet/sparrow/core/planner"
	"github.com/sparrowfleet/sparrow/internal/plot"
)

// Load returns the problem `sparrow plan` is given: the built-in example
// ("join": the ETH report's Join on the Frank cluster) or the one in the
// JSON file, and checks that plotPath, if set, names a file a chart can
// be written to. Its errors name the command's flags.
func Load(example, file, plotPath string) (planner.Problem, error) {
	var p planner.Problem
	switch {
	case example == "join" && file == "":
		p = planner.JoinOnFrank([2]string{"F2", "F3"}, "F1")
	case example != "":
		return p, fmt.Errorf("--example %q: want join (and no --problem)", example)
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return p, fmt.Errorf("problem: %w", err)
		}
		if p, err = planner.ParseProblem(data); err != nil {
			return p, fmt.Errorf("%s: %w", file, err)
		}
	default:
		return p, fmt.Errorf("give --problem FILE or --example join")
	}
	if plotPath != "" {
		if err := plot.CheckPath(plotPath); err != nil {
			return p, err
		}
	}
	return p, nil
}

// Command is `sparrow plan`: the problem (Load), and what to do with it:
// print it (Dump), carry the plan and the greedy schedule out on a live
// fleet (Live, graphrun.Measure), or plan it (Solve, with Options).
type Command struct {
	Options
	Problem, Example string
	Dump, Live       bool
	// LiveScale and LiveRuns are graphrun.Config's Scale and Runs.
	LiveScale float64
	LiveRuns  int
}

// AddFlags declares `sparrow plan`'s flags on fs, with their defaults.
func (c *Command) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Problem, "problem", "", "problem JSON file (graph, machines, models)")
	fs.StringVar(&c.Example, "example", "", `built-in problem instead of --problem: "join" (ETH TR-756's Join on the Frank cluster)`)
	fs.BoolVar(&c.Dump, "dump", false, "print the problem as JSON and exit (a template for --problem)")
	fs.Int64Var(&c.MaxNodes, "max-nodes", planner.DefaultMaxNodes, "search budget in nodes")
	fs.DurationVar(&c.TimeLimit, "time-limit", 10*time.Second, "wall-clock limit for the search (0: none)")
	fs.StringVar(&c.Plot, "plot", "", "draw the plan and the greedy schedule as a Gantt chart to this .svg or .png file")
	fs.BoolVar(&c.AssignmentOnly, "assignments-only", false, "search machine assignments only, each machine running its ready tasks in priority order (the report's space; the baseline); by default the search also decides each machine's order")
	fs.BoolVar(&c.Exhaustive, "exhaustive", false, "also evaluate every assignment (machines^tasks, at most 10^7) and report min/median/max")
	fs.BoolVar(&c.Live, "live", false, "run the plan and the greedy schedule on an in-process loopback fleet (one node monitor per machine, advertising its profile) and print measured makespans next to predicted ones")
	fs.Float64Var(&c.LiveScale, "live-scale", 0.01, "with --live: wall-clock seconds per model second (each task sleeps its predicted duration times this)")
	fs.IntVar(&c.LiveRuns, "live-runs", 3, "with --live: runs of each schedule")
}

// Run loads the problem and prints it, the live measurement or the plan
// as indented JSON on out, with progress lines on progress.
func (c *Command) Run(ctx context.Context, out, progress io.Writer) error {
	p, err := Load(c.Example, c.Problem, c.Plot)
	if err != nil {
		return err
	}
	var res any = p
	switch {
	case c.Dump:
	case c.Live:
		res, err = graphrun.Measure(ctx, graphrun.Config{
			Problem: p, Scale: c.LiveScale, Runs: c.LiveRuns, PlanTime: c.TimeLimit,
			Progress: func(s string) { fmt.Fprintln(progress, s) },
			Log:      zerolog.Nop(),
		})
	default:
		c.Progress = progress
		res, err = Solve(p, c.Options)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
