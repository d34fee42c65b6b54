package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

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

// planTask is one task of a plan in the command's JSON output.
type planTask struct {
	Task    string  `json:"task"`
	Machine string  `json:"machine"`
	Start   float64 `json:"start_s"`
	Finish  float64 `json:"finish_s"`
}

// planOutput is the command's JSON result.
type planOutput struct {
	Makespan     float64               `json:"makespan_s"`
	Greedy       float64               `json:"greedy_s"`
	Proved       bool                  `json:"proved"`
	Nodes        int64                 `json:"nodes"`
	SolveSeconds float64               `json:"solve_s"`
	Tasks        []planTask            `json:"tasks"`
	Order        map[string][]string   `json:"order"`
	Improvements []planner.Improvement `json:"improvements"`
	Exhaustive   *exhaustiveSummary    `json:"exhaustive,omitempty"`
}

type exhaustiveSummary struct {
	Assignments int     `json:"assignments"`
	Min         float64 `json:"min_s"`
	Median      float64 `json:"median_s"`
	Max         float64 `json:"max_s"`
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
	fmt.Fprintf(os.Stderr, "planning %d tasks on %d machines (budget %d nodes, %v)\n",
		len(p.Graph.Tasks), len(p.Machines), f.maxNodes, f.timeLimit)
	start := time.Now()
	opt := planner.Options{MaxNodes: f.maxNodes, AssignmentOnly: f.assignOnly}
	if f.timeLimit > 0 {
		opt.Clock = func() float64 { return time.Since(start).Seconds() }
		opt.TimeLimit = f.timeLimit.Seconds()
	}
	plan, st, err := planner.Solve(p, opt)
	if err != nil {
		return err
	}
	out := planOutput{Makespan: plan.Makespan, Greedy: st.Greedy, Proved: st.Proved, Nodes: st.Nodes,
		SolveSeconds: time.Since(start).Seconds(), Improvements: st.Improvements, Order: map[string][]string{}}
	for t, m := range plan.Machine {
		out.Tasks = append(out.Tasks, planTask{Task: p.Graph.Tasks[t].Name, Machine: p.Machines[m].Name,
			Start: plan.Start[t], Finish: plan.Finish[t]})
	}
	for m, ts := range plan.Order {
		for _, t := range ts {
			out.Order[p.Machines[m].Name] = append(out.Order[p.Machines[m].Name], p.Graph.Tasks[t].Name)
		}
	}
	fmt.Fprintf(os.Stderr, "plan %.1f s (greedy %.1f s), %d nodes, proved %v, %.3f s\n",
		plan.Makespan, st.Greedy, st.Nodes, st.Proved, out.SolveSeconds)
	if f.plot != "" {
		greedy, err := planner.Greedy(p)
		if err != nil {
			return err
		}
		chart := ganttChart(p, plan, greedy)
		if err := chart.Save(f.plot); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", f.plot)
	}
	if f.exhaustive {
		fmt.Fprintln(os.Stderr, "evaluating every assignment...")
		ex, err := planner.Exhaustive(p)
		if err != nil {
			return err
		}
		s := slices.Clone(ex.Costs)
		slices.Sort(s)
		out.Exhaustive = &exhaustiveSummary{Assignments: len(s), Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
	}
	return enc.Encode(out)
}

// ganttChart draws each machine's tasks over time, the plan just above the
// machine's row and the greedy schedule just below: one segment per task,
// squares at its start and finish. Task names go in the notes, per machine
// in run order, since the chart has no text labels.
func ganttChart(p planner.Problem, plan, greedy planner.Plan) plot.Chart {
	rows := func(pl planner.Plan, off float64) []plot.Point {
		var pts []plot.Point
		for m, ts := range pl.Order {
			for _, t := range ts {
				y := float64(m) + off
				pts = append(pts, plot.Point{X: pl.Start[t], Y: y}, plot.Point{X: pl.Finish[t], Y: y},
					plot.Point{X: math.NaN(), Y: math.NaN()})
			}
		}
		return pts
	}
	c := plot.Chart{
		Title:    fmt.Sprintf("plan %.1f s vs greedy %.1f s", plan.Makespan, greedy.Makespan),
		Subtitle: fmt.Sprintf("%d tasks on %d machines (predicted, with contention)", len(p.Graph.Tasks), len(p.Machines)),
		X:        plot.Axis{Label: "time (s)"},
		Y:        plot.Axis{Label: "machine", Min: -0.6, Max: float64(len(p.Machines)) - 0.4},
		Series: []plot.Series{
			{Name: "plan", Points: rows(plan, 0.15), Color: plot.Palette[0], Marker: plot.Square},
			{Name: "greedy", Points: rows(greedy, -0.15), Color: plot.Palette[1], Marker: plot.Square, Dashed: true},
		},
	}
	for m, mc := range p.Machines {
		c.Y.Ticks = append(c.Y.Ticks, plot.Tick{Value: float64(m), Label: mc.Name})
	}
	for _, s := range []struct {
		name string
		pl   planner.Plan
	}{{"plan", plan}, {"greedy", greedy}} {
		for m, ts := range s.pl.Order {
			names := make([]string, len(ts))
			for i, t := range ts {
				names[i] = p.Graph.Tasks[t].Name
			}
			c.Notes = append(c.Notes, fmt.Sprintf("%s %s: %s", s.name, p.Machines[m].Name, strings.Join(names, " ")))
		}
	}
	return c
}
