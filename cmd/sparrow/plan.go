package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/planreport"
	"github.com/sparrowfleet/sparrow/core/planner"
	"github.com/sparrowfleet/sparrow/internal/plot"
)

func init() { rootCmd.AddCommand(newPlanCmd()) }

type planFlags struct {
	problem    string
	example    string
	dump       bool
	maxNodes   int64
	timeLimit  time.Duration
	exhaustive bool
	assignOnly bool
	plot       string
	live       bool
	liveScale  float64
	liveRuns   int
}

func newPlanCmd() *cobra.Command {
	var f planFlags
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runPlan(f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.problem, "problem", "", "problem JSON file (graph, machines, models)")
	fl.StringVar(&f.example, "example", "", `built-in problem instead of --problem: "join" (ETH TR-756's Join on the Frank cluster)`)
	fl.BoolVar(&f.dump, "dump", false, "print the problem as JSON and exit (a template for --problem)")
	fl.Int64Var(&f.maxNodes, "max-nodes", planner.DefaultMaxNodes, "search budget in nodes")
	fl.DurationVar(&f.timeLimit, "time-limit", 10*time.Second, "wall-clock limit for the search (0: none)")
	fl.StringVar(&f.plot, "plot", "", "draw the plan and the greedy schedule as a Gantt chart to this .svg or .png file")
	fl.BoolVar(&f.assignOnly, "assignments-only", false, "search machine assignments only, each machine running its ready tasks in priority order (the report's space; the baseline); by default the search also decides each machine's order")
	fl.BoolVar(&f.exhaustive, "exhaustive", false, "also evaluate every assignment (machines^tasks, at most 10^7) and report min/median/max")
	fl.BoolVar(&f.live, "live", false, "run the plan and the greedy schedule on an in-process loopback fleet (one node monitor per machine, advertising its profile) and print measured makespans next to predicted ones")
	fl.Float64Var(&f.liveScale, "live-scale", 0.01, "with --live: wall-clock seconds per model second (each task sleeps its predicted duration times this)")
	fl.IntVar(&f.liveRuns, "live-runs", 3, "with --live: runs of each schedule")
	return cmd
}

func runPlan(f planFlags) error {
	var p planner.Problem
	switch {
	case f.example == "join" && f.problem == "":
		p = planner.JoinOnFrank([2]string{"F2", "F3"}, "F1")
	case f.example != "":
		return fmt.Errorf("--example %q: want join (and no --problem)", f.example)
	case f.problem != "":
		data, err := os.ReadFile(f.problem)
		if err != nil {
			return fmt.Errorf("problem: %w", err)
		}
		if p, err = planner.ParseProblem(data); err != nil {
			return fmt.Errorf("%s: %w", f.problem, err)
		}
	default:
		return fmt.Errorf("give --problem FILE or --example join")
	}
	if f.plot != "" {
		if err := plot.CheckPath(f.plot); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if f.dump {
		return enc.Encode(p)
	}
	if f.live {
		return runPlanLive(p, f, enc)
	}
	out, err := planreport.Solve(p, planreport.Options{
		MaxNodes: f.maxNodes, TimeLimit: f.timeLimit, Plot: f.plot, Exhaustive: f.exhaustive, Progress: os.Stderr,
		AssignmentOnly: f.assignOnly,
	})
	if err != nil {
		return err
	}
	return enc.Encode(out)
}
