package fairness

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/internal/plot"
)

// Report is the experiment's result, as the CLI encodes it to JSON.
type Report struct {
	Scenario Scenario      `json:"scenario"`
	Settings Settings      `json:"settings"`
	Phases   []PhaseReport `json:"phases"`
	Setups   []SetupReport `json:"setups"`
	// Command is the command line that produced the report (set by the
	// caller).
	Command string `json:"command,omitempty"`
}

// Scenario describes the cluster, the users and the timeline.
type Scenario struct {
	Types  []TypeReport  `json:"types"`
	Users  []UserSpec    `json:"users"`
	Events []EventReport `json:"events"`
	// EndS is the run's length; Scale the run's seconds per paper second.
	EndS  float64 `json:"end_s"`
	Scale float64 `json:"scale"`
}

// TypeReport is one machine type.
type TypeReport struct {
	Name  string            `json:"name"`
	Attrs map[string]string `json:"attrs"`
	Nodes int               `json:"nodes"`
	Slots int               `json:"slots_per_node"`
}

// UserSpec is one user's constraints and the types they allow.
type UserSpec struct {
	Name        string   `json:"name"`
	Constraints []string `json:"constraints"`
	Types       []string `json:"types"`
}

// EventReport is an arrival or departure on both clocks.
type EventReport struct {
	AtS      float64 `json:"at_s"`
	PaperAtS float64 `json:"paper_at_s"`
	User     string  `json:"user"`
	Arrive   bool    `json:"arrive"`
}

// Settings are the run's knobs.
type Settings struct {
	TaskDurationMs float64 `json:"task_duration_ms"`
	TasksPerJob    int     `json:"tasks_per_job"`
	Backlog        float64 `json:"backlog"`
	PeriodS        float64 `json:"coordinator_period_s"`
	BinS           float64 `json:"bin_s"`
	SettleS        float64 `json:"settle_s"`
	Tolerance      float64 `json:"tolerance"`
	Seed           uint64  `json:"seed"`
}

// PhaseReport is one phase's live users and CMMF shares.
type PhaseReport struct {
	StartS float64            `json:"start_s"`
	EndS   float64            `json:"end_s"`
	Target map[string]float64 `json:"cmmf_share"`
}

// SetupReport is one setup's measurement and analysis.
type SetupReport struct {
	Setup    Setup   `json:"setup"`
	StartupS float64 `json:"startup_s"`
	WindowS  float64 `json:"window_s"`
	// Tasks counts task runs measured; Jobs and Refused the jobs the users
	// submitted and the ones refused.
	Tasks   int `json:"tasks"`
	Jobs    int `json:"jobs"`
	Refused int `json:"jobs_refused"`
	// Utilization is the fleet's mean busy fraction over the window;
	// TypeBusy each machine type's (scenario order).
	Utilization float64   `json:"utilization"`
	TypeBusy    []float64 `json:"type_busy"`
	// TypeLongestIdleS is, for each machine type, the longest time one of
	// its nodes kept a slot free after the first settle time
	// (GroupLongestIdle).
	TypeLongestIdleS []float64 `json:"type_longest_idle_s"`
	// Deviation is the mean absolute deviation from the CMMF shares over
	// every converged (live user, bin); Users has each user's.
	Deviation *float64 `json:"deviation"`
	// BusyDeviation is Deviation over the shares of the busy slots.
	BusyDeviation *float64     `json:"busy_deviation"`
	Users         []UserReport `json:"users"`
	Ramps         []RampReport `json:"ramps"`
	// Shares[k][i] is user i's share in bin k.
	Shares [][]float64 `json:"shares"`
	// LoadBefore and LoadAfter are the host's load averages around the
	// run; Cores its CPU count.
	LoadBefore [3]float64 `json:"loadavg_before"`
	LoadAfter  [3]float64 `json:"loadavg_after"`
	// FleetLog counts the fleet's log lines during the run, and the ones
	// saying gossip suspected a member or a node monitor was lost.
	FleetLog LogCounts `json:"fleet_log"`
}

// UserReport is one user's converged deviation.
type UserReport struct {
	User      string   `json:"user"`
	Deviation *float64 `json:"deviation"`
	Bins      int      `json:"converged_bins"`
	// MaxSwing is the largest change of its share between consecutive
	// converged bins (MaxSwings).
	MaxSwing *float64 `json:"max_swing"`
	// BusyDeviation and BusyMaxSwing are the same over its shares of the
	// busy slots (OfBusy).
	BusyDeviation *float64 `json:"busy_deviation"`
	BusyMaxSwing  *float64 `json:"busy_max_swing"`
}

// RampReport is one ramp, on both clocks.
type RampReport struct {
	AtS      float64  `json:"at_s"`
	PaperAtS float64  `json:"paper_at_s"`
	User     string   `json:"user"`
	From     float64  `json:"from"`
	To       float64  `json:"to"`
	TimeS    *float64 `json:"time_s"` // nil: not reached before the next change
	PaperS   *float64 `json:"paper_time_s"`
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// NewReport describes the scenario and settings.
func NewReport(cfg Config, users []User, types []MachineType, paperEvents []Event, paperEnd time.Duration, phases []Phase) Report {
	cfg.Defaults()
	r := Report{
		Scenario: Scenario{EndS: scaleDur(paperEnd, cfg.Scale).Seconds(), Scale: cfg.Scale},
		Settings: Settings{
			TaskDurationMs: float64(cfg.TaskDuration) / float64(time.Millisecond), TasksPerJob: cfg.TasksPerJob, Backlog: cfg.Backlog,
			PeriodS: cfg.Period.Seconds(), BinS: cfg.Bin.Seconds(), SettleS: cfg.Settle.Seconds(), Tolerance: cfg.Tolerance, Seed: cfg.Seed,
		},
	}
	for _, t := range types {
		r.Scenario.Types = append(r.Scenario.Types, TypeReport{Name: t.Name, Attrs: t.Attrs, Nodes: cfg.NodesPerType, Slots: cfg.Slots})
	}
	for _, u := range users {
		s := UserSpec{Name: u.Name, Types: Eligible(u, types), Constraints: []string{}}
		for _, c := range u.Constraints {
			s.Constraints = append(s.Constraints, c.String())
		}
		r.Scenario.Users = append(r.Scenario.Users, s)
	}
	for _, e := range paperEvents {
		r.Scenario.Events = append(r.Scenario.Events, EventReport{AtS: scaleDur(e.At, cfg.Scale).Seconds(), PaperAtS: e.At.Seconds(), User: e.User, Arrive: e.Arrive})
	}
	for _, p := range phases {
		pr := PhaseReport{StartS: p.Start.Seconds(), EndS: p.End.Seconds(), Target: map[string]float64{}}
		for i, u := range users {
			if p.Live[i] {
				pr.Target[u.Name] = p.Target[i]
			}
		}
		r.Phases = append(r.Phases, pr)
	}
	return r
}

// Analyze turns one setup's measurement into its report: shares per bin,
// the converged deviation and the ramp-ups against phases (on the run's
// clock).
func Analyze(cfg Config, setup Setup, m Measurement, users []User, phases []Phase) SetupReport {
	cfg.Defaults()
	names := make([]string, len(users))
	for i, u := range users {
		names[i] = u.Name
	}
	shares := policy.Shares(m.Spans, names, m.TotalSlots, cfg.Bin, m.Window)
	dev := ConvergedDeviation(shares, cfg.Bin, phases, cfg.Settle)
	sr := SetupReport{
		Setup: setup, StartupS: m.StartupS, WindowS: m.Window.Seconds(), Tasks: len(m.Spans), Jobs: m.Submitted, Refused: m.Refused,
		Deviation: ptr(dev.All), Shares: shares, FleetLog: m.Logs,
	}
	busy := 0.0
	for _, s := range m.Spans {
		busy += (min(s.End, m.Window) - max(s.Start, 0)).Seconds()
	}
	if m.TotalSlots > 0 && m.Window > 0 {
		sr.Utilization = busy / (float64(m.TotalSlots) * m.Window.Seconds())
	}
	swings := MaxSwings(shares, cfg.Bin, phases, cfg.Settle)
	ofBusy := OfBusy(shares)
	busyDev := ConvergedDeviation(ofBusy, cfg.Bin, phases, cfg.Settle)
	busySwings := MaxSwings(ofBusy, cfg.Bin, phases, cfg.Settle)
	sr.BusyDeviation = ptr(busyDev.All)
	for i, n := range names {
		sr.Users = append(sr.Users, UserReport{User: n, Deviation: ptr(dev.PerUser[i]), Bins: dev.Bins[i], MaxSwing: ptr(swings[i]),
			BusyDeviation: ptr(busyDev.PerUser[i]), BusyMaxSwing: ptr(busySwings[i])})
	}
	if types := len(m.TypeNames); types > 0 && m.TotalSlots > 0 {
		perType := m.TotalSlots / types / cfg.Slots
		sr.TypeBusy = GroupBusy(m.Spans, types, perType, cfg.Slots, m.Window)
		for _, d := range GroupLongestIdle(m.Spans, types, perType, cfg.Slots, cfg.Settle, m.Window) {
			sr.TypeLongestIdleS = append(sr.TypeLongestIdleS, d.Seconds())
		}
	}
	for _, rp := range RampUps(shares, names, cfg.Bin, phases, cfg.Tolerance) {
		rr := RampReport{AtS: rp.At.Seconds(), PaperAtS: rp.At.Seconds() / cfg.Scale, User: rp.User, From: rp.From, To: rp.To}
		if rp.Reached {
			rr.TimeS, rr.PaperS = ptr(rp.Time.Seconds()), ptr(rp.Time.Seconds()/cfg.Scale)
		}
		sr.Ramps = append(sr.Ramps, rr)
	}
	return sr
}

func fmtPtr(v *float64, format string) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// writeUsers prints a header of the setups' names and one row per user
// of value, per setup.
func (r Report) writeUsers(tw io.Writer, value func(UserReport) *float64) {
	fmt.Fprint(tw, "user")
	for _, s := range r.Setups {
		fmt.Fprintf(tw, "\t%s", s.Setup.Name)
	}
	fmt.Fprintln(tw)
	for i, u := range r.Scenario.Users {
		fmt.Fprint(tw, u.Name)
		for _, s := range r.Setups {
			fmt.Fprintf(tw, "\t%s", fmtPtr(value(s.Users[i]), "%.3f"))
		}
		fmt.Fprintln(tw)
	}
}

// WriteTable prints the deviation table (users × setups) and the ramp-up
// table (changes × setups).
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Mean |share - CMMF share| once converged (bins of %gs, excluding %gs after each change)\n", r.Settings.BinS, r.Settings.SettleS)
	r.writeUsers(tw, func(u UserReport) *float64 { return u.Deviation })
	fmt.Fprint(tw, "all")
	for _, s := range r.Setups {
		fmt.Fprintf(tw, "\t%s", fmtPtr(s.Deviation, "%.3f"))
	}
	fmt.Fprintln(tw)
	fmt.Fprint(tw, "utilization")
	for _, s := range r.Setups {
		fmt.Fprintf(tw, "\t%.2f", s.Utilization)
	}
	fmt.Fprintln(tw)
	for t, ty := range r.Scenario.Types {
		fmt.Fprintf(tw, "busy %s", ty.Name)
		for _, s := range r.Setups {
			if t < len(s.TypeBusy) {
				fmt.Fprintf(tw, "\t%.2f", s.TypeBusy[t])
			} else {
				fmt.Fprint(tw, "\t-")
			}
		}
		fmt.Fprintln(tw)
	}
	for t, ty := range r.Scenario.Types {
		fmt.Fprintf(tw, "longest free slot %s (ms, from %gs)", ty.Name, r.Settings.SettleS)
		for _, s := range r.Setups {
			if t < len(s.TypeLongestIdleS) {
				fmt.Fprintf(tw, "\t%.0f", 1000*s.TypeLongestIdleS[t])
			} else {
				fmt.Fprint(tw, "\t-")
			}
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "Largest change of a share between consecutive converged bins of %gs\n", r.Settings.BinS)
	r.writeUsers(tw, func(u UserReport) *float64 { return u.MaxSwing })
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "The same over each bin's shares of the busy slots: mean |share - CMMF share| once converged")
	r.writeUsers(tw, func(u UserReport) *float64 { return u.BusyDeviation })
	fmt.Fprintln(tw, "and the largest change between consecutive converged bins")
	r.writeUsers(tw, func(u UserReport) *float64 { return u.BusyMaxSwing })
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "Ramp-up: seconds after the change until a bin's share is within %.2f of the new CMMF share (run clock; paper clock = run / %g). Paper: within 5 s (paper clock) = %.1f s here\n",
		r.Settings.Tolerance, r.Scenario.Scale, 5*r.Scenario.Scale)
	fmt.Fprint(tw, "at (run s)\tat (paper s)\tuser\tCMMF share")
	for _, s := range r.Setups {
		fmt.Fprintf(tw, "\t%s", s.Setup.Name)
	}
	fmt.Fprintln(tw)
	if len(r.Setups) > 0 {
		for k, rp := range r.Setups[0].Ramps {
			fmt.Fprintf(tw, "%.1f\t%.0f\t%s\t%.3f -> %.3f", rp.AtS, rp.PaperAtS, rp.User, rp.From, rp.To)
			for _, s := range r.Setups {
				v := "never"
				if k < len(s.Ramps) && s.Ramps[k].TimeS != nil {
					v = fmt.Sprintf("%.1f", *s.Ramps[k].TimeS)
				}
				fmt.Fprintf(tw, "\t%s", v)
			}
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}

// Chart draws one setup's shares over time (solid steps, one per user)
// with the CMMF shares (dashed, same colour).
func (r Report) Chart(k int) *plot.Chart {
	s := r.Setups[k]
	bin := r.Settings.BinS
	c := &plot.Chart{
		Title:    fmt.Sprintf("Choosy §7.3 Mesos scenario on a live fleet: %s", s.Setup.Description),
		Subtitle: fmt.Sprintf("%d node monitors x %d slots per type, 4 types; %g ms sleep tasks; time scaled x%g (paper's 360 s)", r.Scenario.Types[0].Nodes, r.Scenario.Types[0].Slots, r.Settings.TaskDurationMs, r.Scenario.Scale),
		X:        plot.Axis{Label: "time (s, run clock)", Min: 0, Max: r.Scenario.EndS},
		Y:        plot.Axis{Label: "share of the cluster's slots", Min: 0, Max: 1},
	}
	for i, u := range r.Scenario.Users {
		col := plot.Palette[i%len(plot.Palette)]
		var pts []plot.Point
		for b, row := range s.Shares {
			pts = append(pts, plot.Point{X: float64(b) * bin, Y: row[i]})
		}
		if n := len(s.Shares); n > 0 {
			pts = append(pts, plot.Point{X: math.Min(float64(n)*bin, s.WindowS), Y: s.Shares[n-1][i]})
		}
		c.Series = append(c.Series, plot.Series{Name: u.Name, Points: pts, Color: col, Step: true})
		var tgt []plot.Point
		for _, p := range r.Phases {
			tgt = append(tgt, plot.Point{X: p.StartS, Y: p.Target[u.Name]})
		}
		if n := len(r.Phases); n > 0 {
			tgt = append(tgt, plot.Point{X: r.Phases[n-1].EndS, Y: r.Phases[n-1].Target[u.Name]})
		}
		name := ""
		if i == 0 {
			name = "CMMF share (dashed)"
		}
		c.Series = append(c.Series, plot.Series{Name: name, Points: tgt, Color: col, Dashed: true, Step: true})
	}
	var devs []string
	for _, u := range s.Users {
		devs = append(devs, fmt.Sprintf("%s %s", u.User, fmtPtr(u.Deviation, "%.3f")))
	}
	c.Notes = append(c.Notes, "mean |share - CMMF|:", strings.Join(devs[:min(2, len(devs))], ", "))
	if len(devs) > 2 {
		c.Notes = append(c.Notes, strings.Join(devs[2:], ", "))
	}
	c.Notes = append(c.Notes, fmt.Sprintf("all users %s; busy %.0f%%", fmtPtr(s.Deviation, "%.3f"), 100*s.Utilization),
		fmt.Sprintf("bins %gs; converged = %gs after", bin, r.Settings.SettleS), "each change")
	if s.BusyDeviation != nil {
		c.Notes = append(c.Notes, fmt.Sprintf("of busy slots: %.3f", *s.BusyDeviation))
	}
	if s.Setup.Coordinator {
		c.Notes = append(c.Notes, fmt.Sprintf("coordinator period %gs", r.Settings.PeriodS))
	}
	return c
}
