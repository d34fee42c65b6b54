package locality

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/sparrowfleet/sparrow/internal/plot"
)

// Report is the experiment's result, as the CLI encodes it to JSON.
type Report struct {
	Settings Settings     `json:"settings"`
	Modes    []ModeReport `json:"modes"`
	// Reference is the centralized Quincy schedule of the same trace,
	// computed offline (reference.go), if it was asked for.
	Reference *ModeReport `json:"reference,omitempty"`
	// Command is the command line that produced the report (set by the
	// caller).
	Command string `json:"command,omitempty"`
}

// Settings are the run's knobs and the trace's size.
type Settings struct {
	NodeMonitors  int     `json:"node_monitors"`
	Racks         int     `json:"racks"`
	SlotsPerNode  int     `json:"slots_per_node"`
	Schedulers    int     `json:"schedulers"`
	Blocks        int     `json:"blocks"`
	BlockBytes    int64   `json:"block_bytes"`
	ZipfS         float64 `json:"zipf_s"`
	TasksPerJob   int     `json:"tasks_per_job"`
	Load          float64 `json:"load"`
	CPUMs         float64 `json:"task_cpu_ms"`
	DurationS     float64 `json:"arrivals_s"`
	RackMBps      float64 `json:"rack_bandwidth_mib_s"`
	CoreMBps      float64 `json:"core_bandwidth_mib_s"`
	RackReadMs    float64 `json:"rack_read_ms"`
	CoreReadMs    float64 `json:"core_read_ms"`
	DelayMs       float64 `json:"delay_threshold_ms"`
	RackCost      float64 `json:"rack_cost_per_gb"`
	CoreCost      float64 `json:"core_cost_per_gb"`
	PeriodS       float64 `json:"coordinator_period_s"`
	TraceSeed     uint64  `json:"trace_seed"`
	SchedulerSeed uint64  `json:"scheduler_seed"`
	Jobs          int     `json:"trace_jobs"`
	Tasks         int     `json:"trace_tasks"`
	HottestBlockP float64 `json:"hottest_block_p"`
	JobsPerSecond float64 `json:"jobs_per_s"`
}

// NewSettings describes cfg (with defaults filled) and its trace.
func NewSettings(cfg Config, trace Trace) Settings {
	w := cfg.Workload
	s := Settings{
		NodeMonitors: w.Topology.Nodes, Racks: w.Topology.Racks, SlotsPerNode: w.Slots, Schedulers: cfg.Schedulers,
		Blocks: w.Blocks, BlockBytes: w.BlockBytes, ZipfS: w.ZipfS, TasksPerJob: w.TasksPerJob, Load: w.Load,
		CPUMs: w.CPU.Seconds() * 1000, DurationS: w.Duration.Seconds(),
		RackMBps: cfg.Read.RackBandwidth / (1 << 20), CoreMBps: cfg.Read.CoreBandwidth / (1 << 20),
		RackReadMs: cfg.Read.ReadTime(w.BlockBytes, RackLocal).Seconds() * 1000,
		CoreReadMs: cfg.Read.ReadTime(w.BlockBytes, Elsewhere).Seconds() * 1000,
		DelayMs:    cfg.DelayThreshold.Seconds() * 1000, PeriodS: cfg.Period.Seconds(),
		RackCost: cfg.RackCost, CoreCost: cfg.CoreCost,
		TraceSeed: w.Seed, SchedulerSeed: cfg.Seed, Jobs: len(trace.Jobs), JobsPerSecond: w.JobsPerSecond(),
	}
	for _, j := range trace.Jobs {
		s.Tasks += len(j.Blocks)
	}
	if z, err := NewZipf(w.Blocks, w.ZipfS); err == nil {
		s.HottestBlockP = z.Prob(0)
	}
	return s
}

// ModeReport is one mode's run and its summary.
type ModeReport struct {
	Mode  Mode      `json:"mode"`
	Stats ModeStats `json:"stats"`
	// StartupS, WallS, Guidance and Relaxation are the Measurement's.
	StartupS   float64         `json:"startup_s"`
	WallS      float64         `json:"wall_s"`
	Guidance   bool            `json:"guidance"`
	Relaxation RelaxationStats `json:"scheduler_relaxation"`
	// Note says anything the table does not (e.g. how the reference was
	// computed).
	Note string `json:"note,omitempty"`
	// LoadBefore and LoadAfter are the host's 1-minute load average
	// around the run (the fleet shares the host with everything else).
	LoadBefore float64 `json:"load_before,omitempty"`
	LoadAfter  float64 `json:"load_after,omitempty"`
}

// NewModeReport summarises m.
func NewModeReport(mode Mode, m Measurement) ModeReport {
	return ModeReport{Mode: mode, Stats: Analyze(m.Jobs, m.End), StartupS: m.StartupS, WallS: m.WallS, Guidance: m.Guidance, Relaxation: m.Relaxation}
}

// rows are the modes, then the reference.
func (r *Report) rows() []ModeReport {
	rows := append([]ModeReport(nil), r.Modes...)
	if r.Reference != nil {
		rows = append(rows, *r.Reference)
	}
	return rows
}

// WriteTable prints one line per mode.
func (r *Report) WriteTable(w io.Writer) error {
	s := r.Settings
	fmt.Fprintf(w, "%d node monitors x %d slots in %d racks, %d scheduler(s); %d blocks of %d MiB, Zipf s=%g (hottest block %.1f%% of tasks)\n",
		s.NodeMonitors, s.SlotsPerNode, s.Racks, s.Schedulers, s.Blocks, s.BlockBytes>>20, s.ZipfS, 100*s.HottestBlockP)
	fmt.Fprintf(w, "%d jobs x %d tasks over %.0f s (load %.2f at %g ms CPU per task); read %.0f ms within a rack, %.0f ms across the core; delay threshold %.0f ms; ψ = %g, ξ = %g per GB\n\n",
		s.Jobs, s.TasksPerJob, s.DurationS, s.Load, s.CPUMs, s.RackReadMs, s.CoreReadMs, s.DelayMs, s.RackCost, s.CoreCost)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tjobs done\tresp p50 ms\tresp p99 ms\tcensored p99 ms\tdelay p50 ms\tdelay p99 ms\tnode-local\track-local\telsewhere\tGiB in rack\tGiB across core\ttasks done\t")
	for _, m := range r.rows() {
		st := m.Stats
		fmt.Fprintf(tw, "%s\t%d/%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%d/%d\t\n",
			m.Mode.Name, st.JobsCompleted, st.JobsSubmitted, st.ResponseMs.P50, st.ResponseMs.P99, st.ResponseCensoredMs.P99,
			st.SchedDelayMs.P50, st.SchedDelayMs.P99, st.NodeLocal, st.RackLocal, st.Elsewhere,
			float64(st.BytesWithinRack)/(1<<30), float64(st.BytesAcrossCore)/(1<<30), st.TasksCompleted, st.TasksSubmitted)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "(response: completed jobs; censored: unfinished jobs too, at the end of the run)")
	for _, m := range r.rows() {
		if m.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", m.Mode.Name, m.Note)
		}
	}
	return nil
}

// bars returns outlined bars as one series' points: for category i, a bar
// from base up to ys[i], from x = i+off-width/2 to i+off+width/2, the bars
// separated by NaN points (which break the line).
func bars(ys []float64, off, width, base float64) []plot.Point {
	var pts []plot.Point
	for i, y := range ys {
		x0, x1 := float64(i)+off-width/2, float64(i)+off+width/2
		pts = append(pts, plot.Point{X: x0, Y: base}, plot.Point{X: x0, Y: y}, plot.Point{X: x1, Y: y}, plot.Point{X: x1, Y: base},
			plot.Point{X: math.NaN(), Y: math.NaN()})
	}
	return pts
}

// logBase is the power of ten at or below the smallest positive value,
// where bars on a log axis start.
func logBase(vals ...[]float64) float64 {
	lo := math.Inf(1)
	for _, vs := range vals {
		for _, v := range vs {
			if v > 0 {
				lo = min(lo, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 1
	}
	return math.Pow(10, math.Floor(math.Log10(lo)))
}

// categories are the x ticks, one per row.
func (r *Report) categories() []plot.Tick {
	var ticks []plot.Tick
	for i, m := range r.rows() {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: m.Mode.Name})
	}
	return ticks
}

func (r *Report) notes() []string {
	s := r.Settings
	return []string{
		fmt.Sprintf("%d nodes x %d slot(s), %d racks", s.NodeMonitors, s.SlotsPerNode, s.Racks),
		fmt.Sprintf("%d jobs x %d tasks, load %.2f", s.Jobs, s.TasksPerJob, s.Load),
		fmt.Sprintf("Zipf s=%g over %d blocks", s.ZipfS, s.Blocks),
		fmt.Sprintf("read: rack %.0f ms, core %.0f ms", s.RackReadMs, s.CoreReadMs),
	}
}

// LocalityChart has three bars per mode: the fractions of tasks run
// node-local, rack-local and elsewhere.
func (r *Report) LocalityChart() *plot.Chart {
	rows := r.rows()
	var node, rack, other []float64
	for _, m := range rows {
		node = append(node, m.Stats.NodeLocal)
		rack = append(rack, m.Stats.RackLocal)
		other = append(other, m.Stats.Elsewhere)
	}
	return &plot.Chart{
		Title:    "Where tasks ran, per mode",
		Subtitle: "fraction of launched tasks on a replica's node, in a replica's rack, elsewhere",
		X:        plot.Axis{Label: "mode", Min: -0.5, Max: float64(len(rows)) - 0.5, Ticks: r.categories()},
		Y:        plot.Axis{Label: "fraction of tasks", Min: 0, Max: 1},
		Series: []plot.Series{
			{Name: "node-local", Points: bars(node, -0.25, 0.22, 0)},
			{Name: "rack-local", Points: bars(rack, 0, 0.22, 0)},
			{Name: "elsewhere", Points: bars(other, 0.25, 0.22, 0)},
		},
		Notes: r.notes(),
	}
}

// ResponseChart has three bars per mode: job response p50 and p99 of the
// completed jobs, and p99 counting unfinished jobs at the end of the run.
// The axis is logarithmic: a mode that leaves queues growing is tens of
// times slower than the others.
func (r *Report) ResponseChart() *plot.Chart {
	rows := r.rows()
	var p50, p99, cens []float64
	for _, m := range rows {
		p50 = append(p50, m.Stats.ResponseMs.P50)
		p99 = append(p99, m.Stats.ResponseMs.P99)
		cens = append(cens, m.Stats.ResponseCensoredMs.P99)
	}
	base := logBase(p50, p99, cens)
	return &plot.Chart{
		Title:    "Job response time, per mode",
		Subtitle: "submit to last task's result; censored: unfinished jobs counted at the end of the run",
		X:        plot.Axis{Label: "mode", Min: -0.5, Max: float64(len(rows)) - 0.5, Ticks: r.categories()},
		Y:        plot.Axis{Label: "response (ms), log scale", Log: true},
		Series: []plot.Series{
			{Name: "p50", Points: bars(p50, -0.25, 0.22, base)},
			{Name: "p99", Points: bars(p99, 0, 0.22, base)},
			{Name: "p99 censored", Points: bars(cens, 0.25, 0.22, base), Dashed: true},
		},
		Notes: r.notes(),
	}
}
