package procs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/bench/driver"
)

// Config is one benchmark point: a fleet of separate processes and the
// workload driven through it.
type Config struct {
	// Binary is the sparrow binary every member runs.
	Binary string
	// Schedulers, NodeMonitors and Slots (per node monitor) shape the
	// fleet; each node monitor has one executor beside it.
	Schedulers, NodeMonitors, Slots int
	// Jobs of Tasks tasks each arrive at Rate jobs/s; each task sleeps
	// TaskDuration (0: a no-op task).
	Jobs, Tasks  int
	Rate         float64
	TaskDuration time.Duration
	// GossipProfile is every member's --gossip-profile.
	GossipProfile string
	// Net is the first two octets of the members' loopback addresses:
	// role r's member i listens on Net.r.(i+1).
	Net string
	// Dir receives every member's log.
	Dir string
	// Idle is how long the ready fleet is measured with no work before the
	// drive, to give each role's idle CPU rate (gossip, timers).
	Idle time.Duration
	// Deadline bounds the drive (the driver's --deadline).
	Deadline time.Duration
	// FrontendTimeout is the driver's --timeout, its failure detection of
	// a scheduler. The fleet's default (100 ms) makes a scheduler that a
	// busy shared machine stalls for 100 ms look dead, and the failover's
	// resubmissions then inflate every role's CPU per task; 0 keeps the
	// driver's default.
	FrontendTimeout time.Duration
	// ReadyTimeout bounds the wait for the fleet to form.
	ReadyTimeout time.Duration
	// Profile, if above zero, serves Go's profiler on the daemons and
	// saves a CPU profile of this length from the first scheduler and the
	// first node monitor, taken from the drive's start, into Dir.
	Profile time.Duration
	// SchedulerArgs are extra flags for every scheduler, such as
	// --offers.
	SchedulerArgs []string
	// Pin runs every scheduler on CPU 0 and the rest of the fleet, the
	// driver included, on CPU 1 (Linux, 2 CPUs or more).
	Pin bool
	// Say, if set, receives progress lines.
	Say func(string)
}

func (c *Config) validate() error {
	switch {
	case c.Binary == "":
		return fmt.Errorf("no sparrow binary")
	case c.Schedulers < 1 || c.Schedulers > 200:
		return fmt.Errorf("schedulers %d: want 1 to 200", c.Schedulers)
	case c.NodeMonitors < 1 || c.NodeMonitors > 250:
		return fmt.Errorf("node monitors %d: want 1 to 250", c.NodeMonitors)
	case c.Slots < 1:
		return fmt.Errorf("slots %d: want at least 1", c.Slots)
	case c.Jobs < 1 || c.Tasks < 1:
		return fmt.Errorf("jobs %d of %d tasks: want at least 1 of 1", c.Jobs, c.Tasks)
	case c.Jobs < c.Schedulers:
		return fmt.Errorf("jobs %d: want at least one per scheduler (%d), each scheduler has its own driver", c.Jobs, c.Schedulers)
	case c.Rate <= 0:
		return fmt.Errorf("rate %g jobs/s: want more than 0", c.Rate)
	case len(strings.Split(c.Net, ".")) != 2:
		return fmt.Errorf("net %q: want two octets such as 127.60", c.Net)
	}
	return nil
}

func (c *Config) say(format string, args ...any) {
	if c.Say != nil {
		c.Say(fmt.Sprintf(format, args...))
	}
}

// RoleCost is one role's resource use over the drive.
type RoleCost struct {
	Role      Role `json:"role"`
	Processes int  `json:"processes"`
	// CPUSeconds is the role's CPU time (all its processes) during the
	// drive; CPUPerTaskUs divides it by the tasks completed.
	CPUSeconds   float64 `json:"cpu_s"`
	CPUPerTaskUs float64 `json:"cpu_per_task_us"`
	// IdleCPUPerSecondMs is the role's CPU rate with the fleet idle, before
	// the drive; IdlePerTaskUs is that rate over the drive's length per
	// task, the part of CPUPerTaskUs that is not the request path.
	IdleCPUPerSecondMs float64 `json:"idle_cpu_ms_per_s"`
	IdlePerTaskUs      float64 `json:"idle_per_task_us"`
	// PeakRSSMiB is the largest peak resident set of any of its processes.
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// WritesPerTask and ReadsPerTask are the role's write and read system
	// calls during the drive per task completed (Usage.Writes, Reads):
	// a framed Thrift message sent is one write, so WritesPerTask counts
	// the call-sides (requests sent plus replies sent) a task costs the
	// role. Zero without /proc/PID/io.
	WritesPerTask float64 `json:"writes_per_task"`
	ReadsPerTask  float64 `json:"reads_per_task"`
	// CallsServedPerTask and CallsMadePerTask are the role's Thrift calls
	// served and made during the drive per task completed, read from its
	// members' /metrics; CallsPerTask splits them by method. An
	// executor's are read off its node monitor's, its only Thrift peer.
	CallsServedPerTask float64 `json:"calls_served_per_task"`
	CallsMadePerTask   float64 `json:"calls_made_per_task"`
	CallsPerTask       *Calls  `json:"calls_per_task,omitempty"`
}

// Result is one benchmark point.
type Result struct {
	Schedulers     int     `json:"schedulers"`
	NodeMonitors   int     `json:"node_monitors"`
	SlotsPerNode   int     `json:"slots_per_node"`
	Jobs           int     `json:"jobs"`
	TasksPerJob    int     `json:"tasks_per_job"`
	RateJobsPerSec float64 `json:"rate_jobs_per_s"`
	TaskDurationMs float64 `json:"task_duration_ms"`
	GossipProfile  string  `json:"gossip_profile"`

	TasksCompleted int     `json:"tasks_completed"`
	DriveSeconds   float64 `json:"drive_s"`
	TasksPerSec    float64 `json:"tasks_per_s"`
	// Roles has one entry per role, in Roles order.
	Roles []RoleCost `json:"roles"`
	// Drive is the driver's own summary (response and scheduling delay);
	// with several schedulers, the drivers' merged (mergeDrives).
	Drive driver.Summary `json:"drive"`
	// Drives are the summaries of each scheduler's driver, when there is
	// more than one.
	Drives []driver.Summary `json:"drives,omitempty"`
}

// Run starts the fleet, measures it idle, drives the workload, and stops
// every process. Logs stay in cfg.Dir.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	if err := cfg.validate(); err != nil {
		return res, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return res, fmt.Errorf("log dir: %w", err)
	}
	fleet, err := StartFleet(ctx, FleetSpec{
		Binary: cfg.Binary, Schedulers: cfg.Schedulers, NodeMonitors: cfg.NodeMonitors, Slots: cfg.Slots,
		GossipProfile: cfg.GossipProfile, Net: cfg.Net, Dir: cfg.Dir, Pprof: cfg.Profile > 0,
		ReadyTimeout: cfg.ReadyTimeout, SchedulerArgs: cfg.SchedulerArgs,
	}, cfg.Say)
	if err != nil {
		return res, err
	}
	defer fleet.Stop()
	members, scheds := fleet.members, fleet.scheds
	if cfg.Pin {
		if err := pinFleet(members); err != nil {
			return res, err
		}
		cfg.say("pinned: schedulers on CPU 0, the rest of the fleet and the driver on CPU 1")
	}

	before, err := sample(members)
	if err != nil {
		return res, err
	}
	idleStart := time.Now()
	cfg.say("fleet ready; measuring it idle for %v", cfg.Idle)
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(cfg.Idle):
	}
	idle, err := sample(members)
	if err != nil {
		return res, err
	}
	idleFor := time.Since(idleStart)
	callsBefore, err := scrapeCalls(ctx, members)
	if err != nil {
		return res, err
	}

	cfg.say("driving %d jobs x %d tasks at %g jobs/s", cfg.Jobs, cfg.Tasks, cfg.Rate)
	driveStart := time.Now()
	profiled := profile(ctx, cfg, members)
	sum, drives, driverCPU, driverRSS, err := drive(ctx, cfg, scheds)
	driveFor := time.Since(driveStart)
	if perr := <-profiled; perr != nil {
		cfg.say("profile not saved: %v", perr)
	}
	after, serr := sample(members)
	if err != nil {
		return res, err
	}
	if serr != nil {
		return res, serr
	}
	callsAfter, err := scrapeCalls(ctx, members)
	if err != nil {
		return res, err
	}
	res = Result{
		Schedulers: cfg.Schedulers, NodeMonitors: cfg.NodeMonitors, SlotsPerNode: cfg.Slots,
		Jobs: cfg.Jobs, TasksPerJob: cfg.Tasks, RateJobsPerSec: cfg.Rate,
		TaskDurationMs: float64(cfg.TaskDuration) / float64(time.Millisecond), GossipProfile: cfg.GossipProfile,
		TasksCompleted: sum.TasksCompleted, DriveSeconds: driveFor.Seconds(), Drive: sum,
	}
	if len(drives) > 1 {
		res.Drives = drives
	}
	if driveFor > 0 {
		res.TasksPerSec = float64(sum.TasksCompleted) / driveFor.Seconds()
	}
	res.Roles = costs(members, before, idle, after, idleFor, driveFor, sum.TasksCompleted)
	roles := make([]Role, len(members))
	for i, m := range members {
		roles[i] = m.role
	}
	addCalls(res.Roles, callCosts(roles, callsBefore, callsAfter, sum.TasksCompleted))
	fe := RoleCost{Role: Frontend, Processes: len(drives), CPUSeconds: driverCPU.Seconds(), PeakRSSMiB: float64(driverRSS) / (1 << 20)}
	if sum.TasksCompleted > 0 {
		fe.CPUPerTaskUs = fe.CPUSeconds * 1e6 / float64(sum.TasksCompleted)
	}
	res.Roles = append(res.Roles, fe)
	if !sum.OK {
		return res, fmt.Errorf("the drive did not complete: %s", sum.Error)
	}
	return res, nil
}

// sample reads every member's usage, in members order.
func sample(members []*member) ([]Usage, error) {
	out := make([]Usage, len(members))
	for i, m := range members {
		if err := m.alive(); err != nil {
			return nil, err
		}
		u, err := ReadUsage(m.cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		out[i] = u
	}
	return out, nil
}

// costs sums each daemon role's CPU between samples.
func costs(members []*member, before, idle, after []Usage, idleFor, driveFor time.Duration, tasks int) []RoleCost {
	var out []RoleCost
	for _, role := range []Role{Scheduler, NodeMonitor, Executor} {
		rc := RoleCost{Role: role}
		var idleCPU, driveCPU time.Duration
		var reads, writes int64
		for i, m := range members {
			if m.role != role {
				continue
			}
			rc.Processes++
			idleCPU += idle[i].CPU - before[i].CPU
			driveCPU += after[i].CPU - idle[i].CPU
			reads += after[i].Reads - idle[i].Reads
			writes += after[i].Writes - idle[i].Writes
			rc.PeakRSSMiB = max(rc.PeakRSSMiB, float64(after[i].PeakRSS)/(1<<20))
		}
		rc.CPUSeconds = driveCPU.Seconds()
		if idleFor > 0 {
			rc.IdleCPUPerSecondMs = idleCPU.Seconds() * 1e3 / idleFor.Seconds()
		}
		if tasks > 0 {
			rc.CPUPerTaskUs = rc.CPUSeconds * 1e6 / float64(tasks)
			rc.IdlePerTaskUs = rc.IdleCPUPerSecondMs * 1e3 * driveFor.Seconds() / float64(tasks)
			rc.ReadsPerTask = float64(reads) / float64(tasks)
			rc.WritesPerTask = float64(writes) / float64(tasks)
		}
		out = append(out, rc)
	}
	return out
}
