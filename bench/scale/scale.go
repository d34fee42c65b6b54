package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client/fleetstatus"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/stats"
	"github.com/sparrowfleet/sparrow/internal/workload"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// Config is one sweep: the fleet sizes and what is measured at each.
type Config struct {
	// Sizes are the node monitor counts, one fresh fleet each.
	Sizes      []int
	Schedulers int
	Slots      int
	// GossipProfile is every member's gossip timing.
	GossipProfile string
	// Idle is the window with no work over which gossip traffic and CPU
	// per idle member are measured.
	Idle time.Duration
	// JobsPerSec jobs of Tasks no-op-ish tasks (each sleeps TaskDuration)
	// arrive for Drive, for the scheduling delay and CPU per task.
	JobsPerSec   float64
	Tasks        int
	TaskDuration time.Duration
	Drive        time.Duration
	// Warmup, if positive, drives the fleet that long at the same rate
	// before the drive that is measured, so that the schedulers hold the
	// connections a running fleet holds: the first call from a scheduler
	// to a node monitor dials it, and at a thousand node monitors and
	// 20 jobs/s most calls of a 10 s drive would be first calls.
	Warmup time.Duration
	// StartRate, if positive, is how many node monitors start per second
	// across the fleet (each of P processes starting one every P/StartRate
	// seconds); 0 starts each process's as fast as they come up.
	StartRate float64
	// Settle is how long the formed fleet is left before the idle window,
	// so that the join's news (every member's joins and metadata updates,
	// each retransmitted a few times per member) has finished spreading.
	Settle time.Duration
	// ReadyTimeout bounds the fleet's formation; KillTimeout the wait for
	// every scheduler to drop a killed node monitor.
	ReadyTimeout, KillTimeout time.Duration
	// IdleProfile, if set, is called with each size and returns where to
	// write a CPU profile of the idle window ("" for none).
	IdleProfile func(n int) string
	// Procs is how many processes host the node monitors: 1 puts them in
	// this process with the schedulers; more runs that many child
	// processes of ChildCommand, each hosting a contiguous slice, while
	// the schedulers, the drive and the operator views stay here; 0 picks
	// enough that none hosts more than maxPerProcess.
	Procs int
	// ChildCommand returns a command that runs ServeChild on its stdin
	// and stdout, for Procs above 1.
	ChildCommand func() *exec.Cmd
	Log          zerolog.Logger
	// Say, if set, receives progress lines, from several goroutines at
	// once while child processes start.
	Say func(string)
}

// Validate names the first setting out of range.
func (c *Config) Validate() error {
	switch {
	case len(c.Sizes) == 0:
		return fmt.Errorf("no fleet sizes")
	case slices.Min(c.Sizes) < 2:
		return fmt.Errorf("fleet size %d: want at least 2 node monitors (one is killed)", slices.Min(c.Sizes))
	case slices.Max(c.Sizes) > 2500:
		return fmt.Errorf("fleet size %d: at most 2500 node monitors fit the loopback address plan", slices.Max(c.Sizes))
	case c.Schedulers < 1 || c.Schedulers > 250:
		return fmt.Errorf("schedulers %d: want 1 to 250", c.Schedulers)
	case c.Slots < 1:
		return fmt.Errorf("slots %d: want at least 1", c.Slots)
	case c.Idle <= 0 || c.Drive <= 0:
		return fmt.Errorf("idle window and drive must be positive")
	case c.Warmup < 0:
		return fmt.Errorf("warm-up %v: want 0 (none) or more", c.Warmup)
	case c.JobsPerSec <= 0 || c.Tasks < 1:
		return fmt.Errorf("want a positive job rate and at least one task per job")
	case c.StartRate < 0 || (c.StartRate > 0 && c.StartRate < 0.1):
		return fmt.Errorf("start rate %g: want 0 (as fast as they come up) or at least 0.1 node monitors per second", c.StartRate)
	case c.Procs < 0:
		return fmt.Errorf("procs %d: want 0 (as many as the sizes need) or more", c.Procs)
	}
	return nil
}

func (c *Config) say(format string, args ...any) {
	if c.Say != nil {
		c.Say(fmt.Sprintf(format, args...))
	}
}

// Point is what one fleet size measured.
type Point struct {
	NodeMonitors int `json:"node_monitors"`
	Schedulers   int `json:"schedulers"`
	// Processes is how many processes hosted the node monitors (1: the
	// schedulers' own).
	Processes int `json:"processes"`
	// StartS is how long starting every member took, one after another;
	// FormationS how long after the last start every scheduler saw every
	// node monitor with its app.
	// StartRate is Config.StartRate: node monitors started per second
	// across the fleet, 0 for as fast as they came up.
	StartRate  float64 `json:"start_rate"`
	StartS     float64 `json:"start_s"`
	FormationS float64 `json:"formation_s"`
	// FormationAliveNewsPerMember and FormationSuspicionsPerMember are the
	// alive messages and suspicions each member accepted from the first
	// start until the fleet had formed. Every member accepts each
	// incarnation of every other member once, so the first divided by the
	// members is about how many incarnations (the join, then one per
	// metadata change or refuted suspicion) a member went through.
	FormationAliveNewsPerMember  float64 `json:"formation_alive_news_per_member"`
	FormationSuspicionsPerMember float64 `json:"formation_suspicions_per_member"`
	// SettledAliveNewsPerMember and SettledSuspicionsPerMember count the
	// same from the first start to the end of the settle.
	SettledAliveNewsPerMember  float64 `json:"settled_alive_news_per_member"`
	SettledSuspicionsPerMember float64 `json:"settled_suspicions_per_member"`
	// SettledCPUMsPerMember is the CPU time every process of the fleet
	// spent from the first start to the end of the settle, per member:
	// what starting the fleet and spreading its news cost.
	SettledCPUMsPerMember float64 `json:"settled_cpu_ms_per_member"`
	// KillToDroppedS is, for each scheduler, how long after a node monitor
	// crashed its gossip view stopped offering it as a candidate, after
	// which that scheduler makes no new reservation on it; Max is the
	// slowest scheduler's.
	KillToDroppedS    []float64 `json:"kill_to_dropped_s"`
	KillToDroppedMaxS float64   `json:"kill_to_dropped_max_s"`
	// KillToLastFailedS is, for each scheduler, when after the kill its
	// last call to the dead node monitor failed (0: it made none), while
	// jobs arrived at JobsPerSec: the last reservation it sent there.
	KillToLastFailedS    []float64 `json:"kill_to_last_failed_s"`
	KillToLastFailedMaxS float64   `json:"kill_to_last_failed_max_s"`
	// Idle window: memberlist's own send counters over every member, per
	// member per second (UDP: probes, acks, gossip; TCP: push-pull and
	// stream writes), and the CPU time of every process of the fleet per
	// member per second (user + system, schedulers, node monitors,
	// executors and their HTTP endpoints together).
	IdleS                 float64 `json:"idle_s"`
	GossipBytesPerMemberS float64 `json:"gossip_bytes_per_member_s"`
	UDPBytesPerMemberS    float64 `json:"udp_bytes_per_member_s"`
	TCPBytesPerMemberS    float64 `json:"tcp_bytes_per_member_s"`
	UDPPacketsPerMemberS  float64 `json:"udp_packets_per_member_s"`
	TCPWritesPerMemberS   float64 `json:"tcp_writes_per_member_s"`
	// AliveNewsPerMemberS and SuspicionsPerMemberS are the alive messages
	// and suspicions each member accepted per second while idle: with no
	// change in the fleet both are zero unless members falsely suspect
	// each other (probes unanswered in time) and refute it.
	AliveNewsPerMemberS    float64 `json:"alive_news_per_member_s"`
	SuspicionsPerMemberS   float64 `json:"suspicions_per_member_s"`
	IdleCPUMsPerMemberS    float64 `json:"idle_cpu_ms_per_member_s"`
	IdleCPUCoresWholeFleet float64 `json:"idle_cpu_cores"`
	// Drive: JobsPerSec jobs for DriveS. CPUPerTaskUs is the fleet's CPU
	// time (every process) during the drive less the idle rate over the
	// same time, per task completed: every role's request path (frontend,
	// scheduler, node monitor, executor) together.
	JobsPerSec     float64 `json:"jobs_per_s"`
	TasksCompleted int     `json:"tasks_completed"`
	TasksSubmitted int     `json:"tasks_submitted"`
	CPUPerTaskUs   float64 `json:"cpu_per_task_us"`
	// SchedulerProcCPUPerTaskUs is the same for this process alone (less
	// its own idle rate): with the node monitors in child processes, the
	// schedulers, the frontends that submit and hear back from them, and
	// the harness's bookkeeping. Compared across fleet sizes, it says
	// whether a scheduler's cost per task grows with the fleet.
	SchedulerProcCPUPerTaskUs float64       `json:"scheduler_proc_cpu_per_task_us"`
	SchedDelayMs              stats.Summary `json:"sched_delay_ms"`
	// StatusMs is one `sparrow status --json` (join as an observer,
	// sync with the seed, read every member's /status, encode);
	// DashboardMs one GET of a scheduler's dashboard page.
	StatusMs float64 `json:"status_ms"`
	// StatusAnswerMs is when the same command had printed its answer:
	// StatusMs less the observer's leave, which follows.
	StatusAnswerMs float64 `json:"status_answer_ms"`
	StatusMembers  int     `json:"status_members"`
	DashboardMs    float64 `json:"dashboard_ms"`
	DashboardBytes int     `json:"dashboard_bytes"`
	// ConntrackLimit is the kernel's connection tracking table size and
	// ConntrackPeak the most flows it held at the formation, the end of
	// the settle and the end of the idle window (both 0 where the kernel
	// tracks no connections): at the limit the kernel drops gossip.
	ConntrackLimit int `json:"conntrack_limit"`
	ConntrackPeak  int `json:"conntrack_peak"`
	// Load1 is the machine's one-minute load average when the point
	// ended: the measurements share the machine with whatever else runs.
	Load1 float64 `json:"load1"`
}

// Run measures each size in turn, a fresh fleet each.
func Run(ctx context.Context, cfg Config) (Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for _, n := range cfg.Sizes {
		if err := checkFileLimit(largestSlice(n, cfg.Procs)); err != nil {
			return nil, fmt.Errorf("%d node monitors in %d processes: %w", n, processesFor(n, cfg.Procs), err)
		}
		if err := checkConntrack(n+cfg.Schedulers+1, os.ReadFile); err != nil {
			return nil, fmt.Errorf("%d node monitors: %w", n, err)
		}
	}
	counter := InstallGossipCounter()
	var out Results
	for i, n := range cfg.Sizes {
		pc := cfg
		pc.Say = func(s string) { cfg.say("bench scale [%d/%d, %d node monitors]: %s", i+1, len(cfg.Sizes), n, s) }
		p, err := measure(ctx, pc, n, counter)
		if err != nil {
			return out, fmt.Errorf("%d node monitors: %w", n, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func measure(ctx context.Context, cfg Config, n int, counter *GossipCounter) (Point, error) {
	p := Point{NodeMonitors: n, Schedulers: cfg.Schedulers, Processes: processesFor(n, cfg.Procs), JobsPerSec: cfg.JobsPerSec, StartRate: cfg.StartRate}
	readyCtx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()
	cfg.say("starting %d schedulers and %d node monitors in %d processes (%s gossip)", cfg.Schedulers, n, p.Processes, cfg.GossipProfile)
	t0 := time.Now()
	before, cpuBefore := counter.Totals(), processCPU()
	f, err := startFleet(readyCtx, cfg, n, counter)
	if err != nil {
		return p, err
	}
	defer func() {
		cfg.say("stopping the fleet")
		f.Close()
	}()
	ready := time.Now()
	members := float64(n + cfg.Schedulers)
	p.StartS = f.StartedAt.Sub(t0).Seconds()
	p.FormationS = ready.Sub(f.StartedAt).Seconds()
	p.ConntrackLimit, _ = conntrackLimit(os.ReadFile)
	sampleConntrack := func() {
		if c, ok := conntrackCount(os.ReadFile); ok {
			p.ConntrackPeak = max(p.ConntrackPeak, c)
		}
	}
	sampleConntrack()
	formed, _, err := f.usage(ctx)
	if err != nil {
		return p, err
	}
	news := formed.Sub(before)
	p.FormationAliveNewsPerMember = float64(news.Alive) / members
	p.FormationSuspicionsPerMember = float64(news.Suspect) / members
	cfg.say("formed: started in %.1f s, every scheduler saw every node monitor %.2f s after the last start; each member accepted %.0f alive messages (%.2f per member of the fleet) and %.1f suspicions",
		p.StartS, p.FormationS, p.FormationAliveNewsPerMember, p.FormationAliveNewsPerMember/members, p.FormationSuspicionsPerMember)

	cfg.say("settling %v", cfg.Settle)
	time.Sleep(cfg.Settle) // lets the formation's gossip drain; not synchronisation
	sampleConntrack()
	settled, settledCPU, err := f.usage(ctx)
	if err != nil {
		return p, err
	}
	p.SettledCPUMsPerMember = float64((settledCPU - cpuBefore).Milliseconds()) / members
	news = settled.Sub(before)
	p.SettledAliveNewsPerMember = float64(news.Alive) / members
	p.SettledSuspicionsPerMember = float64(news.Suspect) / members
	cfg.say("settled: each member accepted %.0f alive messages (%.2f per member of the fleet) and %.1f suspicions since the first start, and the fleet spent %.0f ms CPU per member",
		p.SettledAliveNewsPerMember, p.SettledAliveNewsPerMember/members, p.SettledSuspicionsPerMember, p.SettledCPUMsPerMember)
	idle, err := measureIdle(ctx, cfg, n, f)
	if err != nil {
		return p, err
	}
	sampleConntrack()
	p.IdleS = idle.seconds
	g := idle.gossip
	per := func(v int64) float64 { return float64(v) / idle.seconds / members }
	p.UDPBytesPerMemberS, p.TCPBytesPerMemberS = per(g.UDPBytes), per(g.TCPBytes)
	p.GossipBytesPerMemberS = per(g.UDPBytes + g.TCPBytes)
	p.UDPPacketsPerMemberS, p.TCPWritesPerMemberS = per(g.UDPPackets), per(g.TCPWrites)
	p.AliveNewsPerMemberS, p.SuspicionsPerMemberS = per(g.Alive), per(g.Suspect)
	idleRate := idle.cpu.Seconds() / idle.seconds // cores
	p.IdleCPUCoresWholeFleet = idleRate
	p.IdleCPUMsPerMemberS = idleRate * 1000 / members
	cfg.say("idle %.0f s: %.0f B/s (UDP %.0f, TCP %.0f) and %.1f packets/s of gossip per member, %.3f alive news and %.3f suspicions/s per member, %.2f ms CPU/s per member (%.2f cores in all)",
		p.IdleS, p.GossipBytesPerMemberS, p.UDPBytesPerMemberS, p.TCPBytesPerMemberS, p.UDPPacketsPerMemberS+p.TCPWritesPerMemberS,
		p.AliveNewsPerMemberS, p.SuspicionsPerMemberS, p.IdleCPUMsPerMemberS, idleRate)

	if err := drive(ctx, cfg, f, idleRate, idle.parentCPU.Seconds()/idle.seconds, &p); err != nil {
		return p, err
	}
	if err := operatorViews(ctx, f, &p); err != nil {
		return p, err
	}
	cfg.say("status --json answered in %.0f ms and ended in %.0f ms (%d members), dashboard %.0f ms", p.StatusAnswerMs, p.StatusMs, p.StatusMembers, p.DashboardMs)

	if p.KillToDroppedS, p.KillToLastFailedS, err = killOne(ctx, cfg, f); err != nil {
		return p, err
	}
	p.KillToDroppedMaxS = slices.Max(p.KillToDroppedS)
	p.KillToLastFailedMaxS = slices.Max(p.KillToLastFailedS)
	cfg.say("killed node monitor dropped by every scheduler after %.2f s (each: %.2f s); last reservation call to it %.2f s after the kill",
		p.KillToDroppedMaxS, p.KillToDroppedS, p.KillToLastFailedMaxS)
	p.Load1 = load1()
	return p, nil
}

type idleWindow struct {
	seconds float64
	cpu     time.Duration
	// parentCPU is this process's share of cpu.
	parentCPU time.Duration
	gossip    GossipTotals
}

func measureIdle(ctx context.Context, cfg Config, n int, f *fleetUnderTest) (idleWindow, error) {
	var stopProfile func()
	if cfg.IdleProfile != nil {
		if path := cfg.IdleProfile(n); path != "" {
			var err error
			if stopProfile, err = startCPUProfile(path); err != nil {
				return idleWindow{}, err
			}
			if err := f.profileChildren(ctx, path); err != nil {
				stopProfile()
				return idleWindow{}, err
			}
		}
	}
	cfg.say("measuring %v idle", cfg.Idle)
	t0 := time.Now()
	p0 := processCPU()
	g0, c0, err := f.usage(ctx)
	if err != nil {
		return idleWindow{}, err
	}
	time.Sleep(cfg.Idle) // the measurement window itself
	g1, c1, err := f.usage(ctx)
	p1 := processCPU()
	t1 := time.Now()
	if stopProfile != nil {
		stopProfile()
		if perr := f.profileChildren(ctx, ""); err == nil {
			err = perr
		}
	}
	return idleWindow{seconds: t1.Sub(t0).Seconds(), cpu: c1 - c0, parentCPU: p1 - p0, gossip: g1.Sub(g0)}, err
}

func drive(ctx context.Context, cfg Config, f *fleetUnderTest, idleRate, parentIdleRate float64, p *Point) error {
	spec := workload.Spec{Load: 0.1, Slots: f.TotalSlots(), TasksPerJob: cfg.Tasks, TaskDuration: cfg.TaskDuration}
	if cfg.Warmup > 0 {
		cfg.say("warming up: %.0f jobs/s for %v, not measured", cfg.JobsPerSec, cfg.Warmup)
		if _, err := f.Drive(ctx, fleet.DriveConfig{
			Spec: spec, Duration: cfg.Warmup, JobsPerSecond: cfg.JobsPerSec, Drain: 10 * time.Second, Seed: 2,
		}); err != nil {
			return fmt.Errorf("warm-up drive: %w", err)
		}
	}
	cfg.say("driving %.0f jobs/s of %d x %v for %v", cfg.JobsPerSec, cfg.Tasks, cfg.TaskDuration, cfg.Drive)
	t0 := time.Now()
	p0 := processCPU()
	_, c0, err := f.usage(ctx)
	if err != nil {
		return err
	}
	res, err := f.Drive(ctx, fleet.DriveConfig{
		Spec:     spec,
		Duration: cfg.Drive, JobsPerSecond: cfg.JobsPerSec, Drain: 10 * time.Second, Seed: 1,
	})
	if err != nil {
		return fmt.Errorf("drive: %w", err)
	}
	_, c1, err := f.usage(ctx)
	if err != nil {
		return err
	}
	parent := (processCPU() - p0).Seconds()
	cpu, secs := (c1 - c0).Seconds(), time.Since(t0).Seconds()
	p.TasksCompleted, p.TasksSubmitted = res.TasksCompleted, res.JobsSubmitted*res.TasksPerJob
	p.SchedDelayMs = res.SchedDelayMs
	if res.TasksCompleted > 0 {
		p.CPUPerTaskUs = max(0, cpu-idleRate*secs) / float64(res.TasksCompleted) * 1e6
		p.SchedulerProcCPUPerTaskUs = max(0, parent-parentIdleRate*secs) / float64(res.TasksCompleted) * 1e6
	}
	cfg.say("drive: %d of %d tasks, %.0f µs CPU per task (%.0f µs in the schedulers' process), scheduling delay p50 %.2f ms p99 %.2f ms",
		p.TasksCompleted, p.TasksSubmitted, p.CPUPerTaskUs, p.SchedulerProcCPUPerTaskUs, p.SchedDelayMs.P50, p.SchedDelayMs.P99)
	return nil
}

// operatorViews times `sparrow status --json` through the first
// scheduler and one GET of its dashboard page.
// firstWrite is a writer that notes when it was first written to.
type firstWrite struct {
	w  io.Writer
	at time.Time
}

func (f *firstWrite) Write(p []byte) (int, error) {
	if f.at.IsZero() {
		f.at = time.Now()
	}
	return f.w.Write(p)
}

func operatorViews(ctx context.Context, f *fleetUnderTest, p *Point) error {
	var buf bytes.Buffer
	t0 := time.Now()
	out := &firstWrite{w: &buf}
	err := fleetstatus.Print(ctx, fleetstatus.Config{
		Join: f.Schedulers[0].Cluster.Addr(), Bind: "127.0.9.1:0", Profile: "lan", Timeout: 10 * time.Second,
		Log: zerolog.Nop(),
	}, out, true, 0)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	p.StatusMs = stats.Millis(time.Since(t0))
	p.StatusAnswerMs = stats.Millis(out.at.Sub(t0))
	var view fleetstatus.View
	if err := json.Unmarshal(buf.Bytes(), &view); err != nil {
		return fmt.Errorf("status printed no view: %w", err)
	}
	p.StatusMembers = len(view.Members)
	url := "http://" + f.HTTP[0].Addr() + "/ui/"
	t0 = time.Now()
	resp, err := http.Get(url)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("dashboard %s: status %d: %v", url, resp.StatusCode, err)
	}
	p.DashboardMs, p.DashboardBytes = stats.Millis(time.Since(t0)), len(b)
	return nil
}

// killOne crashes the last node monitor while jobs arrive at the drive's
// rate, and waits until no running scheduler would place on it any more
// (its view, less the node monitors it could not reach: a scheduler stops
// placing there on its first failed call, or when gossip declares the
// node dead), returning each scheduler's wait and when its last failed
// reservation call came. The jobs keep arriving
// until every scheduler has dropped it, so that each meets the dead node
// monitor in its samples as it would in service.
func killOne(ctx context.Context, cfg Config, f *fleetUnderTest) (waits, lastFailed []float64, err error) {
	driveCtx, stopDrive := context.WithCancel(ctx)
	driven := make(chan error, 1)
	go func() {
		_, err := f.Drive(driveCtx, fleet.DriveConfig{
			Spec:     workload.Spec{Load: 0.1, Slots: f.TotalSlots(), TasksPerJob: cfg.Tasks, TaskDuration: cfg.TaskDuration},
			Duration: cfg.KillTimeout, JobsPerSecond: cfg.JobsPerSec, Drain: time.Second, Seed: 2,
		})
		driven <- err
	}()
	defer func() {
		stopDrive()
		<-driven
	}()
	time.Sleep(time.Second) // jobs arriving before the kill; not synchronisation
	cfg.say("killing the last node monitor with %.0f jobs/s arriving", cfg.JobsPerSec)
	t0 := time.Now()
	victim, err := f.killLast(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("kill: %w", err)
	}
	name, addr := victim.Name, victim.Addr
	waits = make([]float64, len(f.Schedulers))
	lastFailed = make([]float64, len(f.Schedulers))
	var wg sync.WaitGroup
	errs := make([]error, len(f.Schedulers))
	for i, s := range f.Schedulers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, last, err := waitGone(ctx, s, f.Apps(), name, addr, t0, cfg.KillTimeout)
			waits[i], lastFailed[i], errs[i] = d.Seconds(), last.Seconds(), err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("scheduler %d: %w", i, err)
		}
	}
	return waits, lastFailed, nil
}

// waitGone polls s until it would place none of apps on the node monitor
// named name, at addr, and returns how long after t0 that was, and when
// after t0 its last call to that node monitor failed (zero if none did).
// Failures are watched for reachLinger more after the drop, for calls
// already under way.
func waitGone(ctx context.Context, s *scheduler.Daemon, apps []string, name, addr string, t0 time.Time, timeout time.Duration) (gone, lastFailed time.Duration, err error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	placeable := func() bool {
		for _, app := range apps {
			if slices.ContainsFunc(s.Placeable(app), func(n placement.Node) bool { return n.Name == name }) {
				return true
			}
		}
		return false
	}
	var linger <-chan time.Time
	for {
		if at, ok := s.LastFailedCall(addr); ok && at.After(t0) {
			lastFailed = max(lastFailed, at.Sub(t0))
		}
		if linger == nil && !placeable() {
			gone = time.Since(t0)
			lt := time.NewTimer(reachLinger)
			defer lt.Stop()
			linger = lt.C
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-linger:
			return gone, lastFailed, nil
		case <-deadline.C:
			if linger != nil {
				return gone, lastFailed, nil
			}
			return 0, 0, fmt.Errorf("still places on killed %s after %v", name, timeout)
		case <-tick.C:
		}
	}
}

// reachLinger is how long after a scheduler drops a killed node monitor
// its failed calls are still counted.
const reachLinger = time.Second

// processCPU is this process's user plus system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
