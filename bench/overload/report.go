package overload

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/sparrowfleet/sparrow/bench/procs"
	"github.com/sparrowfleet/sparrow/internal/plot"
)

// WriteTable prints the points (load and goodput, then memory by role)
// and the goals' verdicts.
func WriteTable(w io.Writer, points []Point) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\toffered tasks/s\tarrived tasks/s\tgoodput tasks/s\tof capacity\tbusy slots\tqueued\tsubmit errors\trefused saturated\tattempts/task\tattempts/done task\taccepted/done task\tjobs done\tresponse p50 ms\tp99 ms\tdeclared dead\t")
	for _, p := range points {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.1f\t%.1f%%\t%.1f\t%.0f\t%d\t%d\t%.3f\t%.2f\t%.3f\t%d/%d\t%.0f\t%.0f\t%d\t\n",
			FormatMultiple(p.Multiple), p.OfferedTasksPerS, p.ArrivedTasksPerS, p.GoodputTasksPerS, p.GoodputPct, p.BusySlots, p.QueuedReservations,
			p.SubmitErrors, p.Refusals, p.AttemptsPerTask, p.AttemptsPerCompleted, p.AcceptedPerCompleted,
			p.JobsCompleted, p.JobsSubmitted, p.ResponseP50Ms, p.ResponseP99Ms, len(p.Gossip.DeclaredDead))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "load\trole\tprocs\tpeak RSS MiB\tRSS at settle\tRSS at end\tgrowth MiB\tmax rise MiB\theap MiB settle→end\tgoroutines settle→end\tconns settle→end\tCPU ms/s\t")
	for _, p := range points {
		for i, r := range p.Roles {
			lead := ""
			if i == 0 {
				lead = FormatMultiple(p.Multiple)
			}
			heap, gor, conns := "", "", ""
			if r.HeapEndMiB > 0 {
				heap = fmt.Sprintf("%.1f→%.1f", r.HeapStartMiB, r.HeapEndMiB)
				gor = fmt.Sprintf("%d→%d", r.GoroutinesStart, r.GoroutinesEnd)
				conns = fmt.Sprintf("%d→%d", r.ConnsStart, r.ConnsEnd)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t%.0f\t\n", lead, r.Role, r.Processes,
				r.PeakRSSMiB, r.StartRSSMiB, r.EndRSSMiB, r.GrowthMiB, r.MaxRiseMiB, heap, gor, conns, r.CPUMsPerS)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, v := range Judge(points) {
		met := "NOT MET"
		if v.Met {
			met = "met"
		}
		fmt.Fprintf(w, "%s: %s (%s)\n", v.Goal, met, v.Measured)
	}
	return nil
}

// GoodputChart plots goodput as a percentage of capacity against the
// offered load's multiple of capacity, with the 95% goal.
func GoodputChart(points []Point, subtitle string) *plot.Chart {
	c := &plot.Chart{
		Title:    "Goodput against offered load, every member a separate process",
		Subtitle: subtitle,
		X:        plot.Axis{Label: "offered load (multiple of capacity)", Log: true},
		Y:        plot.Axis{Label: "goodput (% of capacity)", Min: 0, Max: 110},
	}
	good := plot.Series{Name: "goodput", Marker: plot.Circle}
	goal := plot.Series{Name: fmt.Sprintf("goal: %.0f%%", GoalGoodputPct), Dashed: true}
	for _, p := range points {
		good.Points = append(good.Points, plot.Point{X: p.Multiple, Y: p.GoodputPct})
		goal.Points = append(goal.Points, plot.Point{X: p.Multiple, Y: GoalGoodputPct})
	}
	c.Series = []plot.Series{good, goal}
	return c
}

// RSSChart plots each role's peak RSS, and its growth over the window,
// against the offered load's multiple of capacity.
func RSSChart(points []Point, subtitle string) *plot.Chart {
	c := &plot.Chart{
		Title:    "Peak resident memory by role against offered load",
		Subtitle: subtitle,
		X:        plot.Axis{Label: "offered load (multiple of capacity)", Log: true},
		Y:        plot.Axis{Label: "MiB (largest process of the role)"},
	}
	for k, role := range procs.Roles {
		peak := plot.Series{Name: string(role) + " peak", Marker: plot.Circle, Color: plot.Palette[k]}
		growth := plot.Series{Name: string(role) + " growth", Marker: plot.Ring, Dashed: true, Color: plot.Palette[k]}
		for _, p := range points {
			for _, r := range p.Roles {
				if r.Role == role {
					peak.Points = append(peak.Points, plot.Point{X: p.Multiple, Y: r.PeakRSSMiB})
					growth.Points = append(growth.Points, plot.Point{X: p.Multiple, Y: r.GrowthMiB})
				}
			}
		}
		if len(peak.Points) > 0 {
			c.Series = append(c.Series, peak, growth)
		}
	}
	c.Notes = []string{"growth: RSS at the window's end", "minus at its start (goal < 10 MB)"}
	return c
}
