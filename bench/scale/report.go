package scale

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// Results are the points of a sweep, smallest fleet first.
type Results []Point

// WriteTable prints a row per fleet size.
func (rs Results) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "node monitors\tschedulers\tprocs\tstart s\tformation s\tkill→dropped s\tkill→last call s\tgossip B/s/member\tUDP pkts/s/member\tsuspicions/s/member\tidle CPU ms/s/member\tCPU µs/task\tsched proc µs/task\tdelay p50 ms\tdelay p99 ms\ttasks\tstatus answer ms\tstatus ms\tdashboard ms\tload1\t")
	for _, p := range rs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.0f\t%.1f\t%.3f\t%.2f\t%.0f\t%.0f\t%.2f\t%.2f\t%d/%d\t%.0f\t%.0f\t%.0f\t%.1f\t\n",
			p.NodeMonitors, p.Schedulers, p.Processes, p.StartS, p.FormationS, p.KillToDroppedMaxS, p.KillToLastFailedMaxS, p.GossipBytesPerMemberS,
			p.UDPPacketsPerMemberS, p.SuspicionsPerMemberS, p.IdleCPUMsPerMemberS, p.CPUPerTaskUs, p.SchedulerProcCPUPerTaskUs, p.SchedDelayMs.P50, p.SchedDelayMs.P99,
			p.TasksCompleted, p.TasksSubmitted, p.StatusAnswerMs, p.StatusMs, p.DashboardMs, p.Load1)
	}
	return tw.Flush()
}

// Charts are the sweep's plots by file stem: times (formation, failure
// detection, operator views) and idle cost (gossip and CPU per member),
// each against the fleet size.
func (rs Results) Charts(subtitle string) map[string]*plot.Chart {
	series := func(name string, m plot.Marker, y func(Point) float64) plot.Series {
		s := plot.Series{Name: name, Marker: m}
		for _, p := range rs {
			s.Points = append(s.Points, plot.Point{X: float64(p.NodeMonitors), Y: y(p)})
		}
		return s
	}
	return map[string]*plot.Chart{
		"scale-times": {
			Title: "Fleet size: formation, failure detection, operator views", Subtitle: subtitle,
			X: plot.Axis{Label: "node monitors", Log: true}, Y: plot.Axis{Label: "seconds", Log: true},
			Series: []plot.Series{
				series("formation after the last start", plot.Circle, func(p Point) float64 { return p.FormationS }),
				series("kill → every scheduler drops it", plot.Square, func(p Point) float64 { return p.KillToDroppedMaxS }),
				series("sparrow status --json", plot.Ring, func(p Point) float64 { return p.StatusMs / 1000 }),
				series("dashboard page", plot.OpenSquare, func(p Point) float64 { return p.DashboardMs / 1000 }),
			},
		},
		"scale-idle": {
			Title: "Fleet size: what an idle member costs", Subtitle: subtitle,
			X: plot.Axis{Label: "node monitors", Log: true}, Y: plot.Axis{Label: "per member per second", Log: true},
			Series: []plot.Series{
				series("gossip sent, KB", plot.Circle, func(p Point) float64 { return p.GossipBytesPerMemberS / 1000 }),
				series("UDP packets sent", plot.Square, func(p Point) float64 { return p.UDPPacketsPerMemberS }),
				series("CPU, ms", plot.Ring, func(p Point) float64 { return p.IdleCPUMsPerMemberS }),
			},
		},
	}
}

// Save writes results.json and the plots (SVG and PNG) into dir.
func (rs Results) Save(dir string) error {
	if err := report.WriteJSONFile(filepath.Join(dir, "results.json"), rs); err != nil {
		return err
	}
	if len(rs) == 0 {
		return nil
	}
	procs := "node monitors in the schedulers' process"
	if rs[0].Processes > 1 {
		procs = fmt.Sprintf("node monitors in %d processes", rs[0].Processes)
	}
	sub := fmt.Sprintf("%d scheduler(s), %s, memberlist on loopback", rs[0].Schedulers, procs)
	for stem, c := range rs.Charts(sub) {
		for _, ext := range []string{"svg", "png"} {
			if err := c.Save(filepath.Join(dir, stem+"."+ext)); err != nil {
				return fmt.Errorf("plot: %w", err)
			}
		}
	}
	return nil
}
