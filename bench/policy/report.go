package policy

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sparrowfleet/sparrow/internal/plot"
)

// Num is a float64 that encodes NaN and infinities as JSON null (for
// "not applicable" and "no samples").
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	if bad(float64(n)) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

func nums(v []float64) []Num {
	out := make([]Num, len(v))
	for i, x := range v {
		out[i] = Num(x)
	}
	return out
}

// HostLoad is the machine's load average (1, 5, 15 minutes) around a run:
// other processes on the host compete with the fleet for its cores.
type HostLoad struct {
	Before [3]float64 `json:"loadavg_before"`
	After  [3]float64 `json:"loadavg_after"`
	// WaitedS is how long the run waited for the 1-minute load to fall
	// below the threshold; GaveUp says it never did.
	WaitedS float64 `json:"waited_for_load_s,omitempty"`
	GaveUp  bool    `json:"load_wait_gave_up,omitempty"`
	Cores   int     `json:"cores"`
	// What the fleet logged during the measurement: on a loaded host,
	// gossip suspicions and node monitors declared lost (their tasks
	// re-placed) mean the run was disturbed.
	FleetLogLines    int `json:"fleet_log_lines"`
	NodeMonitorsLost int `json:"node_monitors_lost"`
	GossipSuspicions int `json:"gossip_suspicions"`
}

func disturbedNote(h HostLoad) string {
	if h.Disturbed() {
		return " DISTURBED"
	}
	return ""
}

// Disturbed says whether the fleet reported failures during the run.
func (h HostLoad) Disturbed() bool { return h.NodeMonitorsLost > 0 || h.GossipSuspicions > 0 }

// ParseLoadAvg parses the first three fields of /proc/loadavg.
func ParseLoadAvg(s string) ([3]float64, error) {
	var out [3]float64
	f := strings.Fields(s)
	if len(f) < 3 {
		return out, fmt.Errorf("loadavg %q: want three numbers", s)
	}
	for i := range out {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return out, fmt.Errorf("loadavg %q: %w", s, err)
		}
		out[i] = v
	}
	return out, nil
}

func (h HostLoad) String() string {
	s := fmt.Sprintf("host load average (1/5/15 min) %.2f %.2f %.2f before, %.2f %.2f %.2f after, on %d cores",
		h.Before[0], h.Before[1], h.Before[2], h.After[0], h.After[1], h.After[2], h.Cores)
	if h.GaveUp {
		s += fmt.Sprintf("; gave up waiting %.0fs for the 1-min load to drop", h.WaitedS)
	} else if h.WaitedS >= 1 {
		s += fmt.Sprintf("; waited %.0fs for the 1-min load to drop", h.WaitedS)
	}
	if h.Disturbed() {
		s += fmt.Sprintf("; DISTURBED: during the run the fleet logged %d node monitors lost and %d gossip suspicions", h.NodeMonitorsLost, h.GossipSuspicions)
	} else {
		s += fmt.Sprintf("; no node monitor lost or suspected during the run (%d fleet log lines)", h.FleetLogLines)
	}
	return s
}

// Fleet is the fleet shape shared by every experiment's parameters.
type Fleet struct {
	Schedulers   int     `json:"schedulers"`
	NodeMonitors int     `json:"node_monitors"`
	Slots        int     `json:"slots_per_node"`
	Queue        string  `json:"queue"`
	ProbeRatio   float64 `json:"probe_ratio"`
	TasksPerJob  int     `json:"tasks_per_job"`
	TaskMs       float64 `json:"task_ms"`
	Seed         uint64  `json:"seed"`
}

// TotalSlots is the fleet's slot count.
func (f Fleet) TotalSlots() int { return f.NodeMonitors * f.Slots }

func (f Fleet) String() string {
	return fmt.Sprintf("%d schedulers, %d node monitors x %d slots (%d slots), %s queues, d=%g; jobs of %d x %gms sleep tasks",
		f.Schedulers, f.NodeMonitors, f.Slots, f.TotalSlots(), f.Queue, f.ProbeRatio, f.TasksPerJob, f.TaskMs)
}

func loadsString(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ", ")
}

// ---------------------------------------------------------------- fairness

// FairnessParams are a Figure 11 run's settings.
type FairnessParams struct {
	Fleet
	IntervalS  float64   `json:"interval_s"`
	BinS       float64   `json:"bin_s"`
	Weights    []float64 `json:"weights"`
	User0Load  float64   `json:"user0_load"`
	User1Loads []float64 `json:"user1_loads"`
}

// FairnessReport is the outcome of `sparrow bench fairness`.
type FairnessReport struct {
	Experiment string         `json:"experiment"`
	Params     FairnessParams `json:"params"`
	Shares     []ShareRowJSON `json:"shares"`
	Intervals  []IntervalJSON `json:"intervals"`
	MAD        []Num          `json:"mad"`
	MADSettled []Num          `json:"mad_settled"`
	Util       float64        `json:"utilisation"`
	Groups     []Group        `json:"users"`
	Host       HostLoad       `json:"host"`
	analysis   FairnessAnalysis
}

// ShareRowJSON is a ShareRow for JSON.
type ShareRowJSON struct {
	T        float64 `json:"t_s"`
	Measured []Num   `json:"measured"`
	Fair     []Num   `json:"fair"`
}

// IntervalJSON is an IntervalShare for JSON.
type IntervalJSON struct {
	Span     string `json:"span"`
	Demand   []Num  `json:"demand"`
	Offered  []Num  `json:"offered,omitempty"`
	Measured []Num  `json:"measured_mean"`
	Fair     []Num  `json:"fair"`
	MAD      []Num  `json:"mad"`
}

// NewFairnessReport wraps an analysis for printing, JSON and plotting.
func NewFairnessReport(p FairnessParams, fa FairnessAnalysis, groups []Group, host HostLoad) FairnessReport {
	r := FairnessReport{Experiment: "fairness", Params: p, MAD: nums(fa.MAD), MADSettled: nums(fa.MADSettled),
		Util: fa.Utilisation, Groups: groups, Host: host, analysis: fa}
	for _, row := range fa.Rows {
		r.Shares = append(r.Shares, ShareRowJSON{T: row.StartS, Measured: nums(row.Measured), Fair: nums(row.Fair)})
	}
	for _, iv := range fa.Intervals {
		r.Intervals = append(r.Intervals, IntervalJSON{Span: iv.Span, Demand: nums(iv.Demand), Offered: nums(iv.Offered),
			Measured: nums(iv.Measured), Fair: nums(iv.Fair), MAD: nums(iv.MAD)})
	}
	return r
}

func weightsString(w []float64) string {
	s := make([]string, len(w))
	for i, x := range w {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ":")
}

// WriteTable prints the per-bin shares, the per-interval means and the MAD.
func (r FairnessReport) WriteTable(w io.Writer) error {
	p := r.Params
	fa := r.analysis
	fmt.Fprintf(w, "sparrow bench fairness (paper Figure 11): %s\n", p.Fleet)
	fmt.Fprintf(w, "weights %s (user0:user1); user0 offers load %g throughout; user1 offers %s, %gs each\n",
		weightsString(p.Weights), p.User0Load, loadsString(p.User1Loads), p.IntervalS)
	fmt.Fprintf(w, "share = fraction of the fleet's slot-time a user's tasks ran (executor start to finish) in each %gs bin; fair = weighted max-min fair share of the scheduled demands\n\n", p.BinS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "t (s)\t"
	for _, u := range fa.Users {
		head += u + "\tfair\t"
	}
	fmt.Fprintln(tw, head)
	for _, row := range fa.Rows {
		line := fmt.Sprintf("%g\t", row.StartS)
		for u := range fa.Users {
			line += fmt.Sprintf("%.3f\t%.3f\t", row.Measured[u], row.Fair[u])
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nper interval: scheduled demand, load the Poisson arrivals actually offered, mean share, max-min fair share, and MAD of the per-bin share:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head = "interval\t"
	for _, u := range fa.Users {
		head += u + " demand\toffered\tshare\tfair\tMAD\t"
	}
	fmt.Fprintln(tw, head)
	for _, iv := range fa.Intervals {
		line := iv.Span + "\t"
		for u := range fa.Users {
			off := "-"
			if u < len(iv.Offered) {
				off = fmt.Sprintf("%.3f", iv.Offered[u])
			}
			line += fmt.Sprintf("%.2f\t%s\t%.3f\t%.3f\t%.3f\t", iv.Demand[u], off, iv.Measured[u], iv.Fair[u], iv.MAD[u])
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for u, name := range fa.Users {
		fmt.Fprintf(w, "mean absolute deviation from fair share, %s: %.3f over all bins, %.3f leaving out the bin after each demand change\n",
			name, fa.MAD[u], fa.MADSettled[u])
	}
	fmt.Fprintf(w, "fleet utilisation over the run: %.3f\n", fa.Utilisation)
	for _, g := range r.Groups {
		fmt.Fprintf(w, "%s: %d jobs submitted, %d completed in the window, %d unfinished (%d tasks never launched)\n",
			g.Name, g.Submitted, g.Completed, g.Incomplete, g.TasksUnlaunched)
	}
	fmt.Fprintln(w, r.Host)
	return nil
}

// Chart plots each user's share per bin, as steps, against its fair share.
func (r FairnessReport) Chart() *plot.Chart {
	fa := r.analysis
	p := r.Params
	end := 0.0
	if n := len(fa.Rows); n > 0 {
		end = fa.Rows[n-1].StartS + fa.BinS
	}
	c := &plot.Chart{
		Title: fmt.Sprintf("Fair shares, weights %s (cf. paper Figure 11)", weightsString(p.Weights)),
		Subtitle: fmt.Sprintf("%d node monitors x %d slots, fair queues, jobs of %d x %gms; user1 demand %s per %gs",
			p.NodeMonitors, p.Slots, p.TasksPerJob, p.TaskMs, loadsString(p.User1Loads), p.IntervalS),
		X: plot.Axis{Label: "time since arrivals started (s)", Min: 0, Max: end},
		// The fair shares of the default demands are quarters.
		Y: plot.Axis{Label: fmt.Sprintf("share of the fleet's slot-time (per %gs bin)", fa.BinS), Min: 0, Max: 1.05,
			Ticks: []plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"}, {Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}}},
	}
	// Tick every interval, where the demand changes, unless that crowds
	// the axis.
	if p.IntervalS > 0 && end/p.IntervalS <= 12 {
		for t := 0.0; t <= end+1e-9; t += p.IntervalS {
			c.X.Ticks = append(c.X.Ticks, plot.Tick{Value: t, Label: plot.FormatNum(t)})
		}
	}
	for u, name := range fa.Users {
		col := plot.Palette[u%len(plot.Palette)]
		var m, f []plot.Point
		for _, row := range fa.Rows {
			m = append(m, plot.Point{X: row.StartS, Y: row.Measured[u]})
			f = append(f, plot.Point{X: row.StartS, Y: row.Fair[u]})
		}
		// A step holds until the next point: close the last bin.
		if n := len(fa.Rows); n > 0 {
			m = append(m, plot.Point{X: end, Y: fa.Rows[n-1].Measured[u]})
			f = append(f, plot.Point{X: end, Y: fa.Rows[n-1].Fair[u]})
		}
		c.Series = append(c.Series,
			plot.Series{Name: name + " share", Points: m, Color: col, Step: true},
			plot.Series{Name: name + " max-min fair", Points: f, Color: col, Step: true, Dashed: true})
	}
	for u, name := range fa.Users {
		c.Notes = append(c.Notes, fmt.Sprintf("MAD %s: %.3f", name, fa.MAD[u]))
	}
	c.Notes = append(c.Notes, fmt.Sprintf("host load avg before: %.2f%s", r.Host.Before[0], disturbedNote(r.Host)))
	return c
}

// ---------------------------------------------------------------- priority

// PaperRow is one row of the paper's Table 3 (ms; NaN: not applicable).
type PaperRow struct {
	HPLoad Num `json:"hp_load"`
	LPLoad Num `json:"lp_load"`
	HP50   Num `json:"hp_p50_ms"`
	HP95   Num `json:"hp_p95_ms"`
	LP50   Num `json:"lp_p50_ms"`
	LP95   Num `json:"lp_p95_ms"`
}

// PaperTable3 is the paper's Table 3: median (95th percentile) response
// times of a high-priority user at load 0.25 beside a low-priority user,
// jobs of 10 x 100 ms tasks on 100 nodes.
var PaperTable3 = []PaperRow{
	{0.25, 0, 106, 111, Num(math.NaN()), Num(math.NaN())},
	{0.25, 0.25, 108, 114, 108, 115},
	{0.25, 0.5, 110, 148, 110, 449},
	{0.25, 0.75, 136, 170, 40202, 46191},
	{0.25, 1.75, 141, 226, 254896, 269661},
}

// PaperTable3Row returns the paper's row for an LP load, if it has one.
func PaperTable3Row(lpLoad float64) (PaperRow, bool) {
	for _, r := range PaperTable3 {
		if math.Abs(float64(r.LPLoad)-lpLoad) < 1e-9 {
			return r, true
		}
	}
	return PaperRow{}, false
}

// PriorityParams are a Table 3 run's settings.
type PriorityParams struct {
	Fleet
	HPLoad    float64   `json:"hp_load"`
	LPLoads   []float64 `json:"lp_loads"`
	DurationS float64   `json:"arrivals_s"`
	DrainS    float64   `json:"drain_s"`
	WarmupS   float64   `json:"warmup_s"`
}

// PriorityRow is one LP load's run.
type PriorityRow struct {
	LPLoad float64 `json:"lp_load"`
	HP     Group   `json:"hp"`
	LP     Group   `json:"lp"`
	// WindowS is how long after the first arrival the run was measured:
	// arrivals plus however much of the drain was needed.
	WindowS float64   `json:"window_s"`
	Host    HostLoad  `json:"host"`
	Paper   *PaperRow `json:"paper,omitempty"`
}

// PriorityReport is the outcome of `sparrow bench priority`.
type PriorityReport struct {
	Experiment string         `json:"experiment"`
	Params     PriorityParams `json:"params"`
	Rows       []PriorityRow  `json:"rows"`
}

func msPair(s Group) string {
	if s.Response.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f (%.0f)", s.Response.P50, s.Response.P95)
}

func paperPair(p50, p95 Num) string {
	if bad(float64(p50)) {
		return "N/A"
	}
	return fmt.Sprintf("%.0f (%.0f)", float64(p50), float64(p95))
}

// WriteTable prints Table 3 side by side with the paper's.
func (r PriorityReport) WriteTable(w io.Writer) error {
	p := r.Params
	fmt.Fprintf(w, "sparrow bench priority (paper Table 3): %s\n", p.Fleet)
	fmt.Fprintf(w, "HP user priority 0 at load %g, LP user priority 1; per LP load a fresh fleet, %gs of arrivals, then up to %gs to drain; the first %gs of arrivals are not measured\n",
		p.HPLoad, p.DurationS, p.DrainS, p.WarmupS)
	fmt.Fprintf(w, "response time = submit to last task's message, median (p95) in ms, over the measured jobs that completed within the window\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LP load\tHP ms\tpaper HP\tLP ms\tpaper LP\tHP done/measured\tLP done/measured\tLP unfinished jobs\tLP tasks queued\tLP lower bound ms\twindow s\tload avg\t")
	for _, row := range r.Rows {
		pHP, pLP := "-", "-"
		if row.Paper != nil {
			pHP, pLP = paperPair(row.Paper.HP50, row.Paper.HP95), paperPair(row.Paper.LP50, row.Paper.LP95)
		}
		lp, lpDone, lpUnf, lpQ, lpLB := "N/A", "-", "-", "-", "-"
		if row.LP.Submitted > 0 {
			lp = msPair(row.LP)
			lpDone = fmt.Sprintf("%d/%d", row.LP.Response.N, row.LP.Measured)
			lpUnf = strconv.Itoa(row.LP.Incomplete)
			lpQ = strconv.Itoa(row.LP.TasksUnlaunched)
			if row.LP.Incomplete > 0 {
				lpLB = fmt.Sprintf(">=%.0f (>=%.0f)", row.LP.LowerBound.P50, row.LP.LowerBound.P95)
			}
		}
		fmt.Fprintf(tw, "%g\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%.1f\t%.2f\t\n",
			row.LPLoad, msPair(row.HP), pHP, lp, pLP,
			row.HP.Response.N, row.HP.Measured, lpDone, lpUnf, lpQ, lpLB, row.WindowS, row.Host.Before[0])
	}
	tw.Flush()
	fmt.Fprintln(w, "\nLP lower bound: median (p95) counting each unfinished LP job as if it finished when the window closed; the true values are at least these.")
	for _, row := range r.Rows {
		if row.HP.Incomplete > 0 {
			fmt.Fprintf(w, "LP load %g: %d HP jobs unfinished at the window's close\n", row.LPLoad, row.HP.Incomplete)
		}
		if row.HP.Refused+row.LP.Refused > 0 {
			fmt.Fprintf(w, "LP load %g: %d HP and %d LP jobs refused by the schedulers\n", row.LPLoad, row.HP.Refused, row.LP.Refused)
		}
	}
	for _, row := range r.Rows {
		fmt.Fprintf(w, "LP load %g: %s\n", row.LPLoad, row.Host)
	}
	return nil
}

// Chart plots median and p95 response time of both users against the LP
// load, next to the paper's (hollow markers), on a log scale.
func (r PriorityReport) Chart() *plot.Chart {
	p := r.Params
	c := &plot.Chart{
		Title:    "High- vs low-priority response times (cf. paper Table 3)",
		Subtitle: fmt.Sprintf("HP load %g; %d node monitors x %d slots, priority queues, jobs of %d x %gms; %gs windows", p.HPLoad, p.NodeMonitors, p.Slots, p.TasksPerJob, p.TaskMs, p.DurationS),
		// Categorical x: the LP loads, evenly spaced.
		X: plot.Axis{Label: "low-priority offered load (fraction of the fleet's slots)", Min: -0.3, Max: float64(len(r.Rows)) - 0.7},
		Y: plot.Axis{Label: "response time (ms, log scale)", Log: true},
	}
	for i, row := range r.Rows {
		c.X.Ticks = append(c.X.Ticks, plot.Tick{Value: float64(i), Label: strconv.FormatFloat(row.LPLoad, 'g', -1, 64)})
	}
	type line struct {
		name  string
		col   int
		p95   bool // dashed line, square markers
		get   func(PriorityRow) float64
		paper func(PaperRow) Num
	}
	lines := []line{
		{"HP median", 0, false, func(r PriorityRow) float64 { return resp(r.HP, 50) }, func(p PaperRow) Num { return p.HP50 }},
		{"HP p95", 0, true, func(r PriorityRow) float64 { return resp(r.HP, 95) }, func(p PaperRow) Num { return p.HP95 }},
		{"LP median", 1, false, func(r PriorityRow) float64 { return resp(r.LP, 50) }, func(p PaperRow) Num { return p.LP50 }},
		{"LP p95", 1, true, func(r PriorityRow) float64 { return resp(r.LP, 95) }, func(p PaperRow) Num { return p.LP95 }},
	}
	for _, l := range lines {
		var ours, paper []plot.Point
		for i, row := range r.Rows {
			ours = append(ours, plot.Point{X: float64(i), Y: l.get(row)})
			if row.Paper != nil {
				paper = append(paper, plot.Point{X: float64(i), Y: float64(l.paper(*row.Paper))})
			}
		}
		mark, hollow := plot.Circle, plot.Ring
		if l.p95 {
			mark, hollow = plot.Square, plot.OpenSquare
		}
		col := plot.Palette[l.col]
		c.Series = append(c.Series, plot.Series{Name: l.name, Points: ours, Color: col, Dashed: l.p95, Marker: mark})
		if len(paper) > 0 {
			c.Series = append(c.Series, plot.Series{Name: "paper " + l.name, Points: paper, Color: col, NoLine: true, Marker: hollow})
		}
	}
	c.Notes = []string{"filled: this fleet (completed jobs)", "hollow: paper, 100 nodes x 16 cores"}
	for _, row := range r.Rows {
		c.Notes = append(c.Notes, fmt.Sprintf("LP %g: load avg %.2f%s", row.LPLoad, row.Host.Before[0], disturbedNote(row.Host)))
	}
	return c
}

func resp(g Group, pct int) float64 {
	if g.Response.N == 0 {
		return math.NaN()
	}
	if pct == 95 {
		return g.Response.P95
	}
	return g.Response.P50
}

// ---------------------------------------------------------------- constraints

// ConstraintsParams are a constraints run's settings.
type ConstraintsParams struct {
	Fleet
	Attr         string  `json:"attr"`
	AttrNodes    int     `json:"attr_nodes"`
	AttrFraction float64 `json:"attr_fraction"`
	// ConstrainedLoad is relative to the attribute nodes' slots;
	// FreeLoad to the whole fleet's.
	ConstrainedLoad float64 `json:"constrained_load"`
	FreeLoad        float64 `json:"free_load"`
	DurationS       float64 `json:"arrivals_s"`
	DrainS          float64 `json:"drain_s"`
	WarmupS         float64 `json:"warmup_s"`
}

// Placement counts where a group's tasks ran.
type Placement struct {
	Group        string `json:"group"`
	OnAttrNodes  int    `json:"tasks_on_attr_nodes"`
	OnOtherNodes int    `json:"tasks_on_other_nodes"`
}

// ConstraintsReport is the outcome of `sparrow bench constraints`.
type ConstraintsReport struct {
	Experiment string            `json:"experiment"`
	Params     ConstraintsParams `json:"params"`
	Groups     []Group           `json:"groups"`
	Placement  []Placement       `json:"placement"`
	// Utilisation of the attribute nodes' and the other nodes' slots over
	// the arrival window.
	AttrNodeUtil  float64  `json:"attr_node_utilisation"`
	OtherNodeUtil float64  `json:"other_node_utilisation"`
	WindowS       float64  `json:"window_s"`
	Host          HostLoad `json:"host"`
}

// WriteTable prints both groups' response times and where their tasks ran.
func (r ConstraintsReport) WriteTable(w io.Writer) error {
	p := r.Params
	fmt.Fprintf(w, "sparrow bench constraints (paper §4.1, job-level constraints): %s\n", p.Fleet)
	fmt.Fprintf(w, "%d of %d node monitors (%.0f%%) have %s; constrained jobs require it at load %g of those nodes' slots; unconstrained jobs at load %g of all slots\n",
		p.AttrNodes, p.NodeMonitors, 100*p.AttrFraction, p.Attr, p.ConstrainedLoad, p.FreeLoad)
	fmt.Fprintf(w, "%gs of arrivals, up to %gs to drain, first %gs not measured; response time = submit to last task's message (ms)\n\n", p.DurationS, p.DrainS, p.WarmupS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "jobs\toffered load\tdone/measured\tunfinished\tp50\tp95\tp99\tmean\tmax\tideal\t")
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "%s\t%g\t%d/%d\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", g.Name, g.Load, g.Response.N, g.Measured, g.Incomplete,
			g.Response.P50, g.Response.P95, g.Response.P99, g.Response.Mean, g.Response.Max, p.TaskMs)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, pl := range r.Placement {
		fmt.Fprintf(w, "%s tasks: %d ran on %s nodes, %d on the others\n", pl.Group, pl.OnAttrNodes, p.Attr, pl.OnOtherNodes)
	}
	fmt.Fprintf(w, "slot utilisation over the arrivals: %s nodes %.3f, other nodes %.3f\n", p.Attr, r.AttrNodeUtil, r.OtherNodeUtil)
	fmt.Fprintln(w, r.Host)
	return nil
}

// Chart plots the response-time CDF of each group.
func (r ConstraintsReport) Chart() *plot.Chart {
	p := r.Params
	c := &plot.Chart{
		Title: "Job-level constraints: response time CDF",
		Subtitle: fmt.Sprintf("%d node monitors x %d slots, %d with %s; constrained load %g of those, unconstrained %g of all",
			p.NodeMonitors, p.Slots, p.AttrNodes, p.Attr, p.ConstrainedLoad, p.FreeLoad),
		X: plot.Axis{Label: "job response time (ms)"},
		Y: plot.Axis{Label: "cumulative fraction of measured jobs", Min: 0, Max: 1},
	}
	hi := 0.0
	for i, g := range r.Groups {
		var pts []plot.Point
		for _, q := range CDF(g.Samples, 400) {
			pts = append(pts, plot.Point{X: q[0], Y: q[1]})
		}
		if g.Response.N > 0 {
			hi = max(hi, g.Response.P99)
		}
		c.Series = append(c.Series, plot.Series{Name: g.Name, Points: pts, Color: plot.Palette[i%len(plot.Palette)]})
	}
	c.Series = append(c.Series, plot.Series{Name: "ideal (one task)", Points: []plot.Point{{X: p.TaskMs, Y: 0}, {X: p.TaskMs, Y: 1}},
		Color: color.Black, Dashed: true})
	if hi > 0 {
		// The tail beyond p99 is a handful of jobs; it would squash the rest.
		c.X.Min, c.X.Max = 0, hi*1.1
	}
	for _, g := range r.Groups {
		c.Notes = append(c.Notes, fmt.Sprintf("%s p50 %.0f p95 %.0f ms", g.Name, g.Response.P50, g.Response.P95))
	}
	c.Notes = append(c.Notes, "x axis cut at 1.1 x the largest p99",
		fmt.Sprintf("host load avg before: %.2f%s", r.Host.Before[0], disturbedNote(r.Host)))
	return c
}
