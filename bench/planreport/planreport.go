package planreport

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/core/planner"
	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/internal/stats"
)

// Task is one task of a plan in the report.
type Task struct {
	Task    string  `json:"task"`
	Machine string  `json:"machine"`
	Start   float64 `json:"start_s"`
	Finish  float64 `json:"finish_s"`
}

// Output is the report; its JSON form is sparrow plan's output.
type Output struct {
	Makespan     float64               `json:"makespan_s"`
	Greedy       float64               `json:"greedy_s"`
	Proved       bool                  `json:"proved"`
	Nodes        int64                 `json:"nodes"`
	SolveSeconds float64               `json:"solve_s"`
	Tasks        []Task                `json:"tasks"`
	Order        map[string][]string   `json:"order"`
	Improvements []planner.Improvement `json:"improvements"`
	Exhaustive   *ExhaustiveSummary    `json:"exhaustive,omitempty"`
}

// ExhaustiveSummary is the spread of every assignment's makespan.
type ExhaustiveSummary struct {
	Assignments int     `json:"assignments"`
	Min         float64 `json:"min_s"`
	Median      float64 `json:"median_s"`
	Max         float64 `json:"max_s"`
}

// Options bound the search and say what else to report.
type Options struct {
	// MaxNodes is the search budget in nodes; TimeLimit, if above 0,
	// bounds it in wall-clock time.
	MaxNodes  int64
	TimeLimit time.Duration
	// Plot, if set, is the file the Gantt chart of the plan and the
	// greedy schedule is written to.
	Plot string
	// Exhaustive also evaluates every assignment.
	Exhaustive bool
	// AssignmentOnly runs the baseline search, which fixes each
	// machine's order by a priority rule (planner.Options).
	AssignmentOnly bool
	// Progress receives progress lines.
	Progress io.Writer
}

// Solve plans p by branch and bound within the options' budget and
// reports the plan beside Dryad's greedy schedule.
func Solve(p planner.Problem, o Options) (Output, error) {
	var out Output
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	fmt.Fprintf(o.Progress, "planning %d tasks on %d machines (budget %d nodes, %v)\n",
		len(p.Graph.Tasks), len(p.Machines), o.MaxNodes, o.TimeLimit)
	start := time.Now()
	opt := planner.Options{MaxNodes: o.MaxNodes, AssignmentOnly: o.AssignmentOnly}
	if o.TimeLimit > 0 {
		opt.Clock = func() float64 { return time.Since(start).Seconds() }
		opt.TimeLimit = o.TimeLimit.Seconds()
	}
	plan, st, err := planner.Solve(p, opt)
	if err != nil {
		return out, err
	}
	out = Output{Makespan: plan.Makespan, Greedy: st.Greedy, Proved: st.Proved, Nodes: st.Nodes,
		SolveSeconds: time.Since(start).Seconds(), Improvements: st.Improvements, Order: map[string][]string{}}
	for t, m := range plan.Machine {
		out.Tasks = append(out.Tasks, Task{Task: p.Graph.Tasks[t].Name, Machine: p.Machines[m].Name,
			Start: plan.Start[t], Finish: plan.Finish[t]})
	}
	for m, ts := range plan.Order {
		for _, t := range ts {
			out.Order[p.Machines[m].Name] = append(out.Order[p.Machines[m].Name], p.Graph.Tasks[t].Name)
		}
	}
	fmt.Fprintf(o.Progress, "plan %.1f s (greedy %.1f s), %d nodes, proved %v, %.3f s\n",
		plan.Makespan, st.Greedy, st.Nodes, st.Proved, out.SolveSeconds)
	if o.Plot != "" {
		greedy, err := planner.Greedy(p)
		if err != nil {
			return out, err
		}
		chart := GanttChart(p, plan, greedy)
		if err := chart.Save(o.Plot); err != nil {
			return out, err
		}
		fmt.Fprintf(o.Progress, "wrote %s\n", o.Plot)
	}
	if o.Exhaustive {
		fmt.Fprintln(o.Progress, "evaluating every assignment...")
		ex, err := planner.Exhaustive(p)
		if err != nil {
			return out, err
		}
		s := slices.Clone(ex.Costs)
		slices.Sort(s)
		out.Exhaustive = &ExhaustiveSummary{Assignments: len(s), Min: s[0], Median: stats.Quantile(s, 0.5), Max: s[len(s)-1]}
	}
	return out, nil
}

// GanttChart draws each machine's tasks over time, the plan just above the
// machine's row and the greedy schedule just below: one segment per task,
// squares at its start and finish. Task names go in the notes, per machine
// in run order, since the chart has no text labels.
func GanttChart(p planner.Problem, plan, greedy planner.Plan) plot.Chart {
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
