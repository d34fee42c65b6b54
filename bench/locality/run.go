package locality

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/quincy"
)

// Mode is one of the compared ways of honouring tasks' preferences.
type Mode struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Relax gives every task the run's delay threshold, opting it into
	// the scheduler's relaxation; without it the threshold is 0 and the
	// preferences are strict, as an original Sparrow client means them.
	Relax bool `json:"relax"`
	// Coordinator starts a coordinator with locality guidance beside the
	// fleet.
	Coordinator bool `json:"coordinator"`
}

// Modes are the experiment's three modes, (a), (b) and (c).
var Modes = []Mode{
	{Name: "strict", Description: "(a) delayThreshold 0: each task waits for one of its 3 replica nodes"},
	{Name: "delay", Description: "(b) delayThreshold > 0, no coordinator: the scheduler widens to the replicas' racks, then the cluster, after the delay", Relax: true},
	{Name: "guided", Description: "(c) the same delayThreshold plus a coordinator's locality prices: the scheduler widens at once when waiting costs more than moving the input", Relax: true, Coordinator: true},
}

// ModeByName returns the mode called name.
func ModeByName(name string) (Mode, error) {
	for _, m := range Modes {
		if m.Name == name {
			return m, nil
		}
	}
	return Mode{}, fmt.Errorf("unknown mode %q (want strict, delay or guided)", name)
}

// Config shapes a run. Zero fields take the defaults in Defaults.
type Config struct {
	Workload WorkloadConfig
	Read     ReadModel
	// Schedulers in the fleet; jobs go to their frontends in turn.
	Schedulers int
	// DelayThreshold is the relaxing modes' per-task delay before the
	// scheduler widens a task's preferences (sent in milliseconds).
	DelayThreshold time.Duration
	// Period is the coordinator's period and the node monitors' report
	// interval in the guided mode.
	Period time.Duration
	// RackCost and CoreCost are ψ and ξ, the costs of moving a GB (10⁹
	// bytes) across a rack switch and the core switch in the paper's
	// units (one unit: two seconds of waiting at ω = 0.5 per second), for
	// the coordinator's prices and the reference alike. Zero: Quincy's 1
	// and 2.
	RackCost, CoreCost float64
	// Drain bounds the wait for unfinished jobs after the last arrival.
	Drain time.Duration
	// Seed makes the schedulers' sampling reproducible (the trace has its
	// own, Workload.Seed).
	Seed uint64
	// GossipProfile is the members' gossip timing (default "lan").
	GossipProfile string
	Log           zerolog.Logger
	// Say, if set, receives progress lines.
	Say func(string)
	// Mute, if set, is called with true when a mode's measurement is
	// over, before its fleet is torn down, and with false once it is
	// down: the teardown's log lines (tasks still queued on node monitors
	// that close, messages to frontends that closed) say nothing about
	// the run.
	Mute func(bool)
}

// Defaults fills zero fields with the experiment's defaults, except
// Workload.ZipfS, where 0 means uniform popularity (the CLI's default is
// 1.1).
func (c *Config) Defaults() {
	w := &c.Workload
	if w.Topology.Nodes <= 0 {
		w.Topology.Nodes = 40
	}
	if w.Topology.Racks <= 0 {
		w.Topology.Racks = 4
	}
	if w.Slots <= 0 {
		w.Slots = 1
	}
	if w.Blocks <= 0 {
		w.Blocks = 400
	}
	if w.BlockBytes <= 0 {
		w.BlockBytes = 64 << 20
	}
	if w.TasksPerJob <= 0 {
		w.TasksPerJob = 10
	}
	if w.Load <= 0 {
		w.Load = 0.7
	}
	if w.CPU <= 0 {
		w.CPU = 200 * time.Millisecond
	}
	if w.Duration <= 0 {
		w.Duration = 60 * time.Second
	}
	if c.Read.RackBandwidth <= 0 {
		c.Read.RackBandwidth = DefaultRackBandwidth
	}
	if c.Read.CoreBandwidth <= 0 {
		c.Read.CoreBandwidth = DefaultCoreBandwidth
	}
	if c.Schedulers <= 0 {
		c.Schedulers = 1
	}
	if c.DelayThreshold <= 0 {
		c.DelayThreshold = 3 * w.CPU
	}
	if c.Period <= 0 {
		c.Period = time.Second
	}
	if c.RackCost <= 0 {
		c.RackCost = 1
	}
	if c.CoreCost <= 0 {
		c.CoreCost = 2
	}
	if c.Drain <= 0 {
		c.Drain = 30 * time.Second
	}
	if c.GossipProfile == "" {
		c.GossipProfile = "lan"
	}
}

// The default scaled-down network: a 64 MiB block takes 100 ms to read
// within a rack and 600 ms across the core switch, half and three times
// the default task's 200 ms of CPU. The core is 6 times slower than a rack
// switch, the ratio of the 6 Gbit/s links to the constrained 1 Gbit/s rack
// uplinks of Quincy's §6.3.
const (
	DefaultRackBandwidth = float64(64<<20) / 0.100
	DefaultCoreBandwidth = float64(64<<20) / 0.600
)

// costUnits converts a weight in the paper's units to integer cost units.
func costUnits(v float64) int64 { return int64(math.Round(v * quincy.CostUnit)) }

func (c *Config) say(format string, args ...any) {
	if c.Say != nil {
		c.Say(fmt.Sprintf(format, args...))
	}
}

// Measurement is one mode's run.
type Measurement struct {
	Jobs []JobOutcome
	// End is when recording stopped, on the run's clock.
	End time.Duration
	// StartupS is how long the fleet took to come up; WallS the run from
	// the first possible arrival to the end of the drain.
	StartupS, WallS float64
	// Guidance says whether the schedulers held the coordinator's prices
	// when the run began (guided mode only).
	Guidance bool
	// Relaxation is the schedulers' relaxation and launch counts, summed,
	// at the end of the run.
	Relaxation RelaxationStats
}

// Measure runs trace on a fresh fleet in mode and records every job.
func Measure(ctx context.Context, cfg Config, mode Mode, trace Trace) (Measurement, error) {
	cfg.Defaults()
	topo := cfg.Workload.Topology
	rec := newRecorder(topo, cfg.Read, trace)
	t0 := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	fc := fleet.Config{
		Schedulers: cfg.Schedulers, NodeMonitors: topo.Nodes, Slots: cfg.Workload.Slots,
		NodeAttrs: func(i int) map[string]string { return map[string]string{"rack": RackName(topo.RackOf(i))} },
		Seed:      cfg.Seed, GossipProfile: cfg.GossipProfile, Log: cfg.Log,
		OnLaunch: rec.launched,
		Run:      rec.run,
	}
	var m Measurement
	if cfg.Mute != nil {
		// Deferred first, so it runs once the fleet is down.
		defer cfg.Mute(false)
	}
	guided := setupGuidance(&fc, cfg, mode)
	f, err := fleet.Start(startCtx, fc)
	if err != nil {
		return m, fmt.Errorf("%s: start fleet: %w", mode.Name, err)
	}
	defer f.Close()
	if guided != nil {
		stop, err := guided(startCtx, f)
		if err != nil {
			return m, fmt.Errorf("%s: %w", mode.Name, err)
		}
		defer stop()
		m.Guidance = true
	}
	fronts, err := f.Frontends(ctx, 5*time.Second, rec.message)
	if err != nil {
		return m, fmt.Errorf("%s: %w", mode.Name, err)
	}
	defer func() {
		for _, fe := range fronts {
			fe.Close()
		}
	}()
	m.StartupS = time.Since(t0).Seconds()
	cfg.say("%s: fleet up in %.1fs (%s); %d jobs over %v", mode.Name, m.StartupS, f.Describe(), len(trace.Jobs), cfg.Workload.Duration)

	var delay time.Duration
	if mode.Relax {
		delay = cfg.DelayThreshold
	}
	rec.start(time.Now())
	progress := time.NewTicker(5 * time.Second)
	defer progress.Stop()
	var wg sync.WaitGroup
	submitCtx, stopSubmits := context.WithCancel(ctx)
	defer stopSubmits()
	for j, job := range trace.Jobs {
		if !fleet.WaitUntil(ctx, rec.t0.Add(job.At), progress, func() { cfg.say("  %s %s", mode.Name, rec.progress()) }) {
			break
		}
		cj := rec.job(j, job, cfg.Workload.CPU, delay)
		rec.markSubmitted(j)
		fe := fronts[j%len(fronts)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := fe.Submit(submitCtx, cj); err != nil && !errors.Is(err, client.ErrInDoubt) {
				rec.refused(j)
				cfg.Log.Debug().Err(err).Msg("job refused")
			}
		}()
	}
	wg.Wait()
	rec.arrivalsOver()
	drain := time.NewTimer(cfg.Drain)
	defer drain.Stop()
wait:
	for {
		select {
		case <-rec.drained:
			break wait
		case <-drain.C:
			cfg.say("  %s: drain bound %v reached with jobs unfinished", mode.Name, cfg.Drain)
			break wait
		case <-ctx.Done():
			break wait
		case <-progress.C:
			cfg.say("  %s %s (draining)", mode.Name, rec.progress())
		}
	}
	m.Jobs, m.End = rec.freeze()
	m.Relaxation = relaxationOf(f)
	m.WallS = m.End.Seconds()
	if cfg.Mute != nil {
		cfg.Mute(true)
	}
	return m, ctx.Err()
}

// recorder tracks every job of one run: launches from the executors'
// OnLaunch (called synchronously before Run), results from the frontends.
// It also runs the tasks: the executor learns its node from the launch
// hook. Safe for concurrent use.
type recorder struct {
	topo   Topology
	read   ReadModel
	trace  Trace
	prefix string

	mu        sync.Mutex
	t0        time.Time
	jobs      []JobOutcome
	nodeOf    map[taskKey]int // the latest launch of each task
	submitted int             // jobs sent, refused ones included
	finished  int             // jobs complete or refused
	over      bool            // no more arrivals
	frozen    bool
	drained   chan struct{}
}

type taskKey struct{ job, task int }

func newRecorder(topo Topology, read ReadModel, trace Trace) *recorder {
	r := &recorder{topo: topo, read: read, trace: trace, nodeOf: map[taskKey]int{}, drained: make(chan struct{})}
	r.jobs = make([]JobOutcome, len(trace.Jobs))
	for j, job := range trace.Jobs {
		r.jobs[j].Tasks = make([]TaskOutcome, len(job.Blocks))
	}
	return r
}

func (r *recorder) start(t time.Time) {
	r.mu.Lock()
	r.t0 = t
	r.mu.Unlock()
}

// job is trace job j as the frontend submits it: each task prefers its
// block's replica nodes, carries the block's size, and opts into
// relaxation after delay when delay > 0.
func (r *recorder) job(j int, job Job, cpu, delay time.Duration) client.Job {
	// One user for every job: a coordinator's fairness guidance wants a
	// named user.
	cj := client.Job{RequestID: "j-" + strconv.Itoa(j), User: client.User{Name: "locality"}, Tasks: make([]client.Task, len(job.Blocks))}
	for k, b := range job.Blocks {
		blk := r.trace.Blocks[b]
		in := TaskInput{Block: b, Bytes: blk.Bytes, Replicas: blk.Replicas, CPU: cpu}
		cj.Tasks[k] = client.Task{ID: strconv.Itoa(k), Message: in.Encode()}
		for _, n := range blk.Replicas {
			cj.Tasks[k].Nodes = append(cj.Tasks[k].Nodes, NodeName(n))
		}
		relax(&cj.Tasks[k], delay, blk.Bytes)
	}
	return cj
}

func (r *recorder) markSubmitted(j int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs[j].Submitted = time.Since(r.t0)
	r.submitted++
}

func (r *recorder) refused(j int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen || r.jobs[j].Refused {
		return
	}
	r.jobs[j].Refused = true
	r.finished++
	r.checkDrained()
}

func (r *recorder) arrivalsOver() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.over = true
	r.checkDrained()
}

// checkDrained closes drained once arrivals are over and every submitted
// job is finished. Called with mu held.
func (r *recorder) checkDrained() {
	if r.over && r.finished == r.submitted {
		select {
		case <-r.drained:
		default:
			close(r.drained)
		}
	}
}

// parseRef reads the job and task indices from a task's ids.
func (r *recorder) parseRef(ref client.TaskRef) (taskKey, bool) {
	js, ok := strings.CutPrefix(ref.RequestID, "j-")
	if !ok {
		return taskKey{}, false
	}
	j, err1 := strconv.Atoi(js)
	k, err2 := strconv.Atoi(ref.TaskID)
	if err1 != nil || err2 != nil || j < 0 || j >= len(r.jobs) || k < 0 || k >= len(r.jobs[j].Tasks) {
		return taskKey{}, false
	}
	return taskKey{j, k}, true
}

// launched records a launch on node (the executors' OnLaunch).
func (r *recorder) launched(node int, t client.LaunchedTask) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	key, ok := r.parseRef(t.Ref)
	if !ok {
		return
	}
	r.nodeOf[key] = node
	if r.frozen {
		return
	}
	to := &r.jobs[key.job].Tasks[key.task]
	to.Launches++
	if to.Launches > 1 {
		return
	}
	blk := r.trace.Blocks[r.trace.Jobs[key.job].Blocks[key.task]]
	to.Node, to.Launched, to.Input = node, now.Sub(r.t0), blk.Bytes
	to.Where = Classify(r.topo, node, blk.Replicas)
	if to.Where != NodeLocal {
		to.Bytes = blk.Bytes
	}
}

// run is the executors' task: its CPU time plus the time to read its block
// from where it runs, by the read model.
func (r *recorder) run(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
	in, err := ParseTaskInput(t.Message)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	key, ok := r.parseRef(t.Ref)
	node, known := r.nodeOf[key]
	r.mu.Unlock()
	if !ok || !known {
		return nil, fmt.Errorf("task %s/%s: launched on an unknown node", t.Ref.RequestID, t.Ref.TaskID)
	}
	where := Classify(r.topo, node, in.Replicas)
	timer := time.NewTimer(in.CPU + r.read.ReadTime(in.Bytes, where))
	defer timer.Stop()
	select {
	case <-timer.C:
		return []byte(where.String()), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// message records a task's result (the frontends' OnMessage).
func (r *recorder) message(m client.Message) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	key, ok := r.parseRef(m.Task)
	if !ok || r.frozen {
		return
	}
	job := &r.jobs[key.job]
	to := &job.Tasks[key.task]
	if to.Done || job.Refused {
		return
	}
	to.Done, to.Finished, to.Failed = true, now.Sub(r.t0), m.Status != client.StatusOK
	for _, t := range job.Tasks {
		if !t.Done {
			return
		}
	}
	r.finished++
	r.checkDrained()
}

// progress is a one-line running count.
func (r *recorder) progress() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var where [3]int
	launched := 0
	for _, j := range r.jobs {
		for _, t := range j.Tasks {
			if t.Launches > 0 {
				launched++
				where[t.Where]++
			}
		}
	}
	frac := func(n int) float64 {
		if launched == 0 {
			return 0
		}
		return float64(n) / float64(launched)
	}
	return fmt.Sprintf("%5.1fs jobs %d sent, %d finished; tasks %d launched: node %.2f rack %.2f elsewhere %.2f",
		time.Since(r.t0).Seconds(), r.submitted, r.finished, launched, frac(where[0]), frac(where[1]), frac(where[2]))
}

// freeze stops recording and returns the jobs that were submitted.
func (r *recorder) freeze() ([]JobOutcome, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frozen = true
	end := time.Since(r.t0)
	out := make([]JobOutcome, r.submitted)
	for j := range out {
		out[j] = r.jobs[j]
		out[j].Tasks = append([]TaskOutcome(nil), r.jobs[j].Tasks...)
	}
	return out, end
}
