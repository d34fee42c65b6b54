package overload

import (
	"fmt"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/bench/procs"
)

// Process names one sampled process.
type Process struct {
	Role procs.Role `json:"role"`
	Name string     `json:"name"`
}

// RoleMemory is one role's memory and CPU at a point; each memory figure
// is the largest over the role's processes.
type RoleMemory struct {
	Role      procs.Role `json:"role"`
	Processes int        `json:"processes"`
	// PeakRSSMiB is the high-water mark (VmHWM) at the window's end.
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// StartRSSMiB and EndRSSMiB are the RSS at the window's start (the
	// settle time) and end; GrowthMiB the largest end − start of any of
	// the role's processes, MaxRiseMiB the most any rose above its start
	// at any sample in the window.
	StartRSSMiB float64 `json:"start_rss_mib"`
	EndRSSMiB   float64 `json:"end_rss_mib"`
	GrowthMiB   float64 `json:"growth_mib"`
	MaxRiseMiB  float64 `json:"max_rise_mib"`
	// HeapStartMiB and HeapEndMiB are the Go heap in use, and
	// GoroutinesStart and GoroutinesEnd the goroutines, at the window's
	// start and end (largest over the role's processes; zero for roles
	// that serve no metrics).
	HeapStartMiB    float64 `json:"heap_start_mib,omitempty"`
	HeapEndMiB      float64 `json:"heap_end_mib,omitempty"`
	GoroutinesStart int64   `json:"goroutines_start,omitempty"`
	GoroutinesEnd   int64   `json:"goroutines_end,omitempty"`
	// ConnsStart and ConnsEnd are the Thrift connections it serves.
	ConnsStart int64 `json:"conns_start,omitempty"`
	ConnsEnd   int64 `json:"conns_end,omitempty"`
	// CPUMsPerS is the role's CPU time (all its processes) per second of
	// the window.
	CPUMsPerS float64 `json:"cpu_ms_per_s"`
}

// Point is one offered load's outcome.
type Point struct {
	Multiple          float64 `json:"multiple"`
	CapacityTasksPerS float64 `json:"capacity_tasks_per_s"`
	// OfferedTasksPerS is the nominal offered load, multiple × capacity;
	// ArrivedTasksPerS the first-attempt tasks the driver actually
	// generated per second of its arrivals (below the nominal when the
	// driver could not keep up).
	OfferedTasksPerS float64 `json:"offered_tasks_per_s"`
	ArrivedTasksPerS float64 `json:"arrived_tasks_per_s"`
	// The measured window, in seconds since the drive started.
	WindowFromS float64 `json:"window_from_s"`
	WindowToS   float64 `json:"window_to_s"`
	// GoodputTasksPerS is the tasks completed per second in the window
	// (node monitors' launches − running); GoodputPct is that against
	// capacity. DriverTasksPerS is the driver's own count of tasks done
	// (first OK each) over its whole run, drain included.
	GoodputTasksPerS float64 `json:"goodput_tasks_per_s"`
	GoodputPct       float64 `json:"goodput_pct"`
	DriverTasksPerS  float64 `json:"driver_tasks_per_s"`
	// BusySlots is the mean number of running tasks over the window's
	// samples, and QueuedReservations the mean queued: with slots idle
	// while reservations wait, the time goes to the slot's turnaround
	// (tasksFinished, getTask, launchTask), not to a lack of work.
	BusySlots          float64 `json:"busy_slots"`
	QueuedReservations float64 `json:"queued_reservations"`
	// SubmitErrors is the driver's failed submits: refusals by a
	// scheduler, and submits that found every one of its connections to
	// the scheduler busy for its whole connect timeout. Refusals is the
	// schedulers' count of jobs refused as saturated; Holds the submitJob
	// calls they held; MeanHoldS the mean time a held call was held.
	SubmitErrors int     `json:"submit_errors"`
	Refusals     int     `json:"saturation_refusals"`
	Holds        int     `json:"holds"`
	MeanHoldS    float64 `json:"mean_hold_s"`
	// AttemptsPerTask is task attempts submitted per original task (1:
	// nothing resubmitted); AttemptsPerCompleted is task attempts per
	// task completed, which at an overload is about offered ÷ goodput by
	// construction (every arrival is an attempt, most cannot run);
	// AcceptedPerCompleted is the tasks schedulers accepted per task
	// completed in the window (1 in a steady state without wasted work).
	AttemptsPerTask      float64 `json:"attempts_per_task"`
	AttemptsPerCompleted float64 `json:"attempts_per_completed_task"`
	AcceptedPerCompleted float64 `json:"accepted_per_completed_task"`
	// Jobs submitted (original) and completed, the completed jobs'
	// response time (first submission to last task done), jobs failed by
	// the driver's retry budget and failovers.
	JobsSubmitted      int     `json:"jobs_submitted"`
	JobsCompleted      int     `json:"jobs_completed"`
	ResponseP50Ms      float64 `json:"response_p50_ms"`
	ResponseP99Ms      float64 `json:"response_p99_ms"`
	JobsFailedByBudget int     `json:"jobs_failed_by_budget"`
	Failovers          int     `json:"failovers"`
	// Roles has one entry per role, in procs.Roles order.
	Roles  []RoleMemory `json:"roles"`
	Gossip Gossip       `json:"gossip"`
	// LoadAvg is /proc/loadavg's 1-minute figure at the point's start and
	// end (other work on the machine shows here).
	LoadAvg [2]float64 `json:"load_avg_1m"`
	// Processes names the sampled processes; Samples is the timeline.
	Processes []Process      `json:"processes"`
	Samples   []Sample       `json:"samples,omitempty"`
	Drive     driver.Summary `json:"drive"`
}

const mib = 1 << 20

// summarize fills p's figures from its samples over [from, to], the
// driver's summary and the members' gossip events.
func summarize(p *Point, from, to float64, sum driver.Summary, gossip map[string]GossipEvents) {
	p.WindowFromS, p.WindowToS = from, to
	s := p.Samples
	completed := func(s Sample) float64 { return s.Completed }
	if r, ok := WindowRate(s, from, to, completed); ok {
		p.GoodputTasksPerS = r
		if p.CapacityTasksPerS > 0 {
			p.GoodputPct = 100 * r / p.CapacityTasksPerS
		}
	}
	p.BusySlots, _ = WindowMean(s, from, to, func(s Sample) float64 { return s.Running })
	p.QueuedReservations, _ = WindowMean(s, from, to, func(s Sample) float64 { return s.Queued })
	done, okDone := WindowDelta(s, from, to, completed)
	acc, okAcc := WindowDelta(s, from, to, func(s Sample) float64 { return s.Accepted })
	if okDone && okAcc && done > 0 {
		p.AcceptedPerCompleted = acc / done
	}
	if n := len(s); n > 0 {
		last := s[n-1]
		p.Refusals, p.Holds = int(max(last.Refusals, 0)), int(max(last.Holds, 0))
		if last.HoldCount > 0 && last.HoldSeconds >= 0 {
			p.MeanHoldS = last.HoldSeconds / last.HoldCount
		}
	}
	p.Drive = sum
	p.SubmitErrors = sum.SubmitErrors
	p.JobsSubmitted, p.JobsCompleted = sum.JobsSubmitted, sum.JobsCompleted
	p.ResponseP50Ms, p.ResponseP99Ms = sum.ResponseMs.P50, sum.ResponseMs.P99
	p.JobsFailedByBudget, p.Failovers = sum.JobsFailedByBudget, len(sum.Failovers)
	if sum.TasksSubmitted > 0 {
		p.AttemptsPerTask = float64(sum.AttemptTasks) / float64(sum.TasksSubmitted)
	}
	if sum.TasksCompleted > 0 {
		p.AttemptsPerCompleted = float64(sum.AttemptTasks) / float64(sum.TasksCompleted)
	}
	if a, b, ok := span(sum.StartedAt, sum.LastArrivalAt); ok && b.After(a) {
		p.ArrivedTasksPerS = float64(sum.TasksSubmitted) / b.Sub(a).Seconds()
	}
	if sum.ElapsedS > 0 {
		p.DriverTasksPerS = float64(sum.TasksCompleted) / sum.ElapsedS
	}
	p.Roles = roleMemory(p.Processes, s, from, to)
	p.Gossip = MergeGossip(gossip, s)
}

// roleMemory sums each role's processes over [from, to].
func roleMemory(ps []Process, samples []Sample, from, to float64) []RoleMemory {
	var out []RoleMemory
	for _, role := range procs.Roles {
		rm := RoleMemory{Role: role}
		var cpu, span float64
		for i, p := range ps {
			if p.Role != role {
				continue
			}
			rm.Processes++
			if pk := LastPeak(samples, i, to); pk > 0 {
				rm.PeakRSSMiB = max(rm.PeakRSSMiB, float64(pk)/mib)
			}
			if g := RSSGrowth(samples, i, from, to); g.OK {
				rm.StartRSSMiB = max(rm.StartRSSMiB, float64(g.Start)/mib)
				rm.EndRSSMiB = max(rm.EndRSSMiB, float64(g.End)/mib)
				rm.GrowthMiB = max(rm.GrowthMiB, float64(g.Growth)/mib)
				rm.MaxRiseMiB = max(rm.MaxRiseMiB, float64(g.MaxRise)/mib)
			}
			if g := growthOf(samples, i, from, to, func(s Sample) []int64 { return s.Heap }); g.OK {
				rm.HeapStartMiB = max(rm.HeapStartMiB, float64(g.Start)/mib)
				rm.HeapEndMiB = max(rm.HeapEndMiB, float64(g.End)/mib)
			}
			if g := growthOf(samples, i, from, to, func(s Sample) []int64 { return s.Goroutines }); g.OK {
				rm.GoroutinesStart = max(rm.GoroutinesStart, g.Start)
				rm.GoroutinesEnd = max(rm.GoroutinesEnd, g.End)
			}
			if g := growthOf(samples, i, from, to, func(s Sample) []int64 { return s.Conns }); g.OK {
				rm.ConnsStart = max(rm.ConnsStart, g.Start)
				rm.ConnsEnd = max(rm.ConnsEnd, g.End)
			}
			if c, ok := CPUIn(samples, i, from, to); ok {
				cpu += c
				span = to - from
			}
		}
		if span > 0 {
			rm.CPUMsPerS = cpu * 1e3 / span
		}
		if rm.Processes > 0 {
			out = append(out, rm)
		}
	}
	return out
}

// span parses two RFC 3339 times.
func span(from, to string) (a, b time.Time, ok bool) {
	a, err1 := time.Parse(time.RFC3339Nano, from)
	b, err2 := time.Parse(time.RFC3339Nano, to)
	return a, b, err1 == nil && err2 == nil
}

// The benchmark's goals: what a saturated fleet must keep.
const (
	GoalGoodputPct     = 95.0
	GoalAttempts       = 1.1
	GoalRSSGrowthBytes = 10e6 // 10 MB
)

// Verdict is one goal, met or not, with what was measured.
type Verdict struct {
	Goal     string `json:"goal"`
	Met      bool   `json:"met"`
	Measured string `json:"measured"`
}

// Judge checks the goals over the points: goodput at least 95% of
// capacity at every overload (multiple above 1), at most 1.1 task attempts
// per task, every role's RSS growth over the window under 10 MB (the
// frontend, the load generator, is reported but not judged), and no live
// member declared dead.
func Judge(points []Point) []Verdict {
	good := Verdict{Goal: fmt.Sprintf("goodput ≥ %.0f%% of capacity at every overload", GoalGoodputPct), Met: true}
	att := Verdict{Goal: fmt.Sprintf("attempts per task ≤ %.1f", GoalAttempts), Met: true}
	rss := Verdict{Goal: "every role's RSS growth < 10 MB over the window", Met: true}
	dead := Verdict{Goal: "no live member declared dead", Met: true}
	var gm, am, rm, dm []string
	for _, p := range points {
		x := FormatMultiple(p.Multiple)
		if p.Multiple > 1 {
			gm = append(gm, fmt.Sprintf("%s: %.1f%%", x, p.GoodputPct))
			if p.GoodputPct < GoalGoodputPct {
				good.Met = false
			}
		}
		am = append(am, fmt.Sprintf("%s: %.3f", x, p.AttemptsPerTask))
		if p.AttemptsPerTask > GoalAttempts {
			att.Met = false
		}
		worst, who := 0.0, ""
		for _, r := range p.Roles {
			if r.Role == procs.Frontend {
				continue
			}
			if r.GrowthMiB >= worst {
				worst, who = r.GrowthMiB, string(r.Role)
			}
			if r.GrowthMiB*mib >= GoalRSSGrowthBytes {
				rss.Met = false
			}
		}
		rm = append(rm, fmt.Sprintf("%s: %.1f MiB (%s)", x, worst, who))
		d := fmt.Sprintf("%s: %d", x, len(p.Gossip.DeclaredDead))
		if len(p.Gossip.DeclaredDead) > 0 {
			dead.Met = false
			d += " (" + strings.Join(p.Gossip.DeclaredDead, ", ") + ")"
		}
		dm = append(dm, d)
	}
	good.Measured = strings.Join(gm, "; ")
	att.Measured = strings.Join(am, "; ")
	rss.Measured = strings.Join(rm, "; ")
	dead.Measured = strings.Join(dm, "; ")
	if len(gm) == 0 {
		good.Met, good.Measured = false, "no overload point"
	}
	return []Verdict{good, att, rss, dead}
}

// FormatMultiple prints a load multiple as 0.5x, 2x, 1000x.
func FormatMultiple(m float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%g", m), ".0") + "x"
}
