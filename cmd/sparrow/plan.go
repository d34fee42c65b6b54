package main

import (
	"encoding/json"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/graphrun"
	"github.com/sparrowfleet/sparrow/bench/planreport"
	"github.com/sparrowfleet/sparrow/core/planner"
)

func init() { rootCmd.AddCommand(newPlanCmd()) }

func newPlanCmd() *cobra.Command {
	var (
		o                planreport.Options
		live             graphrun.Config
		problem, example string
		dump, asLive     bool
	)
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "plan a task graph on a small heterogeneous cluster (branch and bound over performance models)",
		Long: `plan reads a problem — a job's task graph, the machines' profiles and a
performance model per task type (JSON, see core/planner.Problem) — and prints
the plan of least predicted makespan that branch and bound finds within its
budget, next to Dryad's greedy schedule, as JSON on stdout.

  sparrow plan --example join                # the ETH report's Join on Frank
  sparrow plan --example join --dump         # print that problem's JSON
  sparrow plan --problem job.json --time-limit 1s
  sparrow plan --example join --live         # carry plan and greedy out on a loopback fleet

Applications submit task graphs to a running fleet with the client library:
client.LiveGraphNodes reads the node monitors' profiles (sparrow nodemonitor
--profile) from gossip, Frontend.NewGraphRun plans over them and Wait submits
each task to its planned node (README, docs/PLANNER.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := planreport.Load(example, problem, o.Plot)
			if err != nil {
				return err
			}
			var out any = p
			switch {
			case dump:
			case asLive:
				// Carry the plan and Dryad's greedy schedule out on an
				// in-process fleet advertising the machines' profiles.
				ctx, cancel := benchContext(cmd, false)
				defer cancel()
				live.Problem, live.PlanTime, live.Progress, live.Log = p, o.TimeLimit, lines(os.Stderr), zerolog.Nop()
				out, err = graphrun.Measure(ctx, live)
			default:
				o.Progress = os.Stderr
				out, err = planreport.Solve(p, o)
			}
			if err != nil {
				return err
			}
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&problem, "problem", "", "problem JSON file (graph, machines, models)")
	fl.StringVar(&example, "example", "", `built-in problem instead of --problem: "join" (ETH TR-756's Join on the Frank cluster)`)
	fl.BoolVar(&dump, "dump", false, "print the problem as JSON and exit (a template for --problem)")
	fl.Int64Var(&o.MaxNodes, "max-nodes", planner.DefaultMaxNodes, "search budget in nodes")
	fl.DurationVar(&o.TimeLimit, "time-limit", 10*time.Second, "wall-clock limit for the search (0: none)")
	fl.StringVar(&o.Plot, "plot", "", "draw the plan and the greedy schedule as a Gantt chart to this .svg or .png file")
	fl.BoolVar(&o.AssignmentOnly, "assignments-only", false, "search machine assignments only, each machine running its ready tasks in priority order (the report's space; the baseline); by default the search also decides each machine's order")
	fl.BoolVar(&o.Exhaustive, "exhaustive", false, "also evaluate every assignment (machines^tasks, at most 10^7) and report min/median/max")
	fl.BoolVar(&asLive, "live", false, "run the plan and the greedy schedule on an in-process loopback fleet (one node monitor per machine, advertising its profile) and print measured makespans next to predicted ones")
	fl.Float64Var(&live.Scale, "live-scale", 0.01, "with --live: wall-clock seconds per model second (each task sleeps its predicted duration times this)")
	fl.IntVar(&live.Runs, "live-runs", 3, "with --live: runs of each schedule")
	return cmd
}
