package live

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/stats"
)

// FleetConfig shapes the fleet an experiment runs on.
type FleetConfig struct {
	Schedulers, NodeMonitors, Slots int
	ProbeRatio                      float64
	// Queue is the node monitors' discipline: "fifo", "fair" or "priority".
	Queue string
	// Weights are the users' fair-share weights on every node monitor.
	Weights map[string]float64
	// NodeAttrs gives node monitor i's attributes (for constraints).
	NodeAttrs  func(i int) map[string]string
	SingleHost bool
	Seed       uint64
	Log        zerolog.Logger
	// Watch, if set, must be the writer behind Log: each run counts the
	// fleet's log lines during the measurement and mutes the teardown.
	Watch *LogWatch
}

// Stream is one user's (or job class's) open-loop job stream.
type Stream struct {
	// Name labels the stream in results; User.Name is what node monitors
	// queue by, and what task spans are attributed to.
	Name         string
	User         client.User
	Constraints  []client.Constraint
	TasksPerJob  int
	TaskDuration time.Duration
	// Schedule is the offered load over time, relative to CapacitySlots
	// (0: the whole fleet's slots).
	Schedule      policy.Schedule
	CapacitySlots int
}

// Config is one measured run.
type Config struct {
	Fleet   FleetConfig
	Streams []Stream
	// Drain is how long to wait, after the last stream's schedule ends,
	// for submitted jobs to finish; 0 stops measuring at once.
	Drain time.Duration
	// Warmup: jobs submitted earlier than this run but are not measured.
	Warmup time.Duration
	// FrontendTimeout is the frontends' scheduler-failure timeout (the
	// client default, 100 ms, can be hit spuriously on a loaded 2-core
	// machine, and a failover would disturb the measurement). Default 2s.
	FrontendTimeout time.Duration
	// Seed seeds the arrival processes.
	Seed uint64
	// Progress, if set, is called about once a second.
	Progress func(Progress)
	// Say, if set, receives one-line notes.
	Say func(string)
}

// Progress is a running count per stream.
type Progress struct {
	Elapsed time.Duration
	Streams []StreamProgress
}

// StreamProgress is one stream's running count.
type StreamProgress struct {
	Name                           string
	Submitted, Completed, InFlight int
}

func (p Progress) String() string {
	s := fmt.Sprintf("%6.1fs", p.Elapsed.Seconds())
	for _, st := range p.Streams {
		s += fmt.Sprintf("  %s: %d submitted, %d done, %d in flight", st.Name, st.Submitted, st.Completed, st.InFlight)
	}
	return s
}

// Result is what a run measured.
type Result struct {
	Groups []policy.Group
	// Spans are every task's run on an executor, as offsets from the first
	// possible arrival; tasks still running at the end are cut there.
	Spans []policy.Span
	// Window is how long after the start measurement stopped.
	Window     time.Duration
	TotalSlots int
	// StartupS is how long the fleet took to come up.
	StartupS float64
	// Log counts the fleet's log lines during the measurement (with a
	// FleetConfig.Watch).
	Log LogCounts
	// Arrivals are each stream's job arrival offsets (all submitted unless
	// the context ended first).
	Arrivals [][]time.Duration
}

type jobRec struct {
	stream    int
	submitted time.Time
	measured  bool
	tasks     int
	launched  int
	done      map[string]bool
	finished  bool
	refused   bool
}

type running struct {
	user  string
	node  int
	start time.Time
}

type streamCount struct {
	submitted, completed, refused, failed, launched int
	responses                                       []float64
}

// recorder collects timings from frontends and executors.
type recorder struct {
	mu       sync.Mutex
	book     SpanBook // task spans; book.T0 is the measurement's start
	jobs     map[string]*jobRec
	counts   []streamCount
	pending  int
	noMore   bool
	drained  chan struct{}
	stopped  bool
	warmupAt time.Time
}

func (r *recorder) submit(id string, stream, tasks int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs[id] = &jobRec{stream: stream, submitted: at, tasks: tasks, measured: !at.Before(r.warmupAt)}
	r.counts[stream].submitted++
	r.pending++
}

func (r *recorder) refused(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[id]
	if !ok || j.finished || j.refused {
		return
	}
	j.refused = true
	r.counts[j.stream].refused++
	r.pending--
	r.checkDrained()
}

// launched runs on the executor's RPC goroutine before the task starts.
func (r *recorder) launched(node int, t client.LaunchedTask) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.book.Launched(node, t)
	if j, ok := r.jobs[t.Ref.RequestID]; ok {
		j.launched++
		r.counts[j.stream].launched++
	}
}

func (r *recorder) taskStart(t client.LaunchedTask) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.book.Started(t, now)
}

func (r *recorder) taskEnd(t client.LaunchedTask) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.book.Ended(t, now)
}

func (r *recorder) message(m client.Message, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[m.Task.RequestID]
	if !ok || j.finished || r.stopped {
		return
	}
	if j.done == nil {
		j.done = make(map[string]bool, j.tasks)
	}
	if j.done[m.Task.TaskID] {
		return
	}
	j.done[m.Task.TaskID] = true
	if m.Status != client.StatusOK {
		r.counts[j.stream].failed++
	}
	if len(j.done) < j.tasks {
		return
	}
	j.finished = true
	if j.refused {
		// Reported refused (e.g. in doubt after a failover) but it ran.
		j.refused = false
		r.counts[j.stream].refused--
	} else {
		r.pending--
	}
	r.counts[j.stream].completed++
	if j.measured {
		r.counts[j.stream].responses = append(r.counts[j.stream].responses, stats.Millis(at.Sub(j.submitted)))
	}
	r.checkDrained()
}

// checkDrained closes drained once arrivals stopped and nothing is
// pending. Called with mu held.
func (r *recorder) checkDrained() {
	if r.noMore && r.pending <= 0 {
		select {
		case <-r.drained:
		default:
			close(r.drained)
		}
	}
}

func (r *recorder) progress(names []string, elapsed time.Duration) Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := Progress{Elapsed: elapsed}
	for i, c := range r.counts {
		p.Streams = append(p.Streams, StreamProgress{Name: names[i], Submitted: c.submitted, Completed: c.completed,
			InFlight: c.submitted - c.completed - c.refused})
	}
	return p
}

// snapshot freezes the measurements at now.
func (r *recorder) snapshot(cfg Config, now time.Time) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	res := Result{Window: now.Sub(r.book.T0), Spans: r.book.Stop(now)}
	unfinished := make([][]float64, len(cfg.Streams))
	unlaunched := make([]int, len(cfg.Streams))
	incomplete := make([]int, len(cfg.Streams))
	for _, j := range r.jobs {
		if j.finished || j.refused {
			continue
		}
		incomplete[j.stream]++
		unlaunched[j.stream] += max(0, j.tasks-j.launched)
		if j.measured {
			unfinished[j.stream] = append(unfinished[j.stream], stats.Millis(now.Sub(j.submitted)))
		}
	}
	for i, s := range cfg.Streams {
		c := r.counts[i]
		g := policy.Group{
			Name: s.Name, Submitted: c.submitted, Completed: c.completed, Refused: c.refused,
			Incomplete: incomplete[i], TasksLaunched: c.launched, TasksUnlaunched: unlaunched[i], TasksFailed: c.failed,
		}
		for _, st := range s.Schedule {
			g.Load = max(g.Load, st.Load)
		}
		g.Summarize(c.responses, unfinished[i])
		res.Groups = append(res.Groups, g)
	}
	return res
}

func (c *Config) validate() error {
	if len(c.Streams) == 0 {
		return errors.New("no job streams")
	}
	for _, s := range c.Streams {
		if err := s.Schedule.Validate(); err != nil {
			return fmt.Errorf("stream %s: %w", s.Name, err)
		}
		if s.TasksPerJob < 1 || s.TaskDuration <= 0 {
			return fmt.Errorf("stream %s: needs at least one task per job and a positive task duration", s.Name)
		}
	}
	if c.Fleet.NodeMonitors < 1 || c.Fleet.Slots < 1 || c.Fleet.Schedulers < 1 {
		return errors.New("the fleet needs at least one scheduler, node monitor and slot")
	}
	return nil
}

// Run starts a fleet, drives the streams through it, measures, and tears
// the fleet down.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	if cfg.FrontendTimeout <= 0 {
		cfg.FrontendTimeout = 2 * time.Second
	}
	rec := &recorder{
		jobs:   map[string]*jobRec{},
		counts: make([]streamCount, len(cfg.Streams)), drained: make(chan struct{}),
	}
	fc := cfg.Fleet
	t0 := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	f, err := fleet.Start(startCtx, fleet.Config{
		Schedulers: fc.Schedulers, NodeMonitors: fc.NodeMonitors, Slots: fc.Slots,
		ProbeRatio: fc.ProbeRatio, Queue: fc.Queue, Weights: fc.Weights, NodeAttrs: fc.NodeAttrs,
		SingleHost: fc.SingleHost, Seed: fc.Seed, Log: fc.Log,
		OnLaunch: rec.launched,
		Run: func(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
			rec.taskStart(t)
			defer rec.taskEnd(t)
			return fleet.SleepTask(ctx, t)
		},
	})
	if err != nil {
		return Result{}, err
	}
	var muted int
	defer func() {
		// Runs after f.Close (deferred later, so run earlier).
		muted = fc.Watch.take().Muted
		fc.Watch.mute(false)
		if muted > 0 && cfg.Say != nil {
			cfg.Say(fmt.Sprintf("(%d fleet log lines muted during teardown)", muted))
		}
	}()
	defer f.Close()
	startup := time.Since(t0)

	fronts, err := f.Frontends(ctx, cfg.FrontendTimeout, func(m client.Message) { rec.message(m, time.Now()) })
	if err != nil {
		return Result{}, err
	}
	defer func() {
		for _, fe := range fronts {
			fe.Close()
		}
	}()

	// Pre-draw every stream's arrivals.
	total := f.TotalSlots()
	lists := make([][]time.Duration, len(cfg.Streams))
	var end time.Duration
	msgs := make([][]byte, len(cfg.Streams))
	names := make([]string, len(cfg.Streams))
	for i, s := range cfg.Streams {
		capSlots := s.CapacitySlots
		if capSlots <= 0 {
			capSlots = total
		}
		seed := cfg.Seed + uint64(i)*0x9e3779b97f4a7c15
		rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
		lists[i] = policy.Arrivals(rng, s.Schedule, policy.JobRate(1, capSlots, s.TasksPerJob, s.TaskDuration))
		end = max(end, s.Schedule.End())
		msgs[i] = []byte(s.TaskDuration.String())
		names[i] = s.Name
	}
	timeline := policy.Merge(lists...)

	fc.Watch.take() // count from the first arrival
	rec.mu.Lock()
	rec.book.T0 = time.Now()
	rec.warmupAt = rec.book.T0.Add(cfg.Warmup)
	rec.mu.Unlock()
	start := rec.book.T0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	report := func() {
		if cfg.Progress != nil {
			cfg.Progress(rec.progress(names, time.Since(start)))
		}
	}
	wait := func(until time.Time) bool { return fleet.WaitUntil(ctx, until, tick, report) }
	var wg sync.WaitGroup
	seq := make([]int, len(cfg.Streams))
	for n, a := range timeline {
		if !wait(start.Add(a.At)) {
			break
		}
		s := cfg.Streams[a.Stream]
		job := client.Job{
			RequestID:   fmt.Sprintf("%s-%d", s.Name, seq[a.Stream]),
			Tasks:       make([]client.Task, s.TasksPerJob),
			User:        s.User,
			Constraints: s.Constraints,
		}
		seq[a.Stream]++
		for k := range job.Tasks {
			job.Tasks[k] = client.Task{ID: strconv.Itoa(k), Message: msgs[a.Stream]}
		}
		fe := fronts[n%len(fronts)]
		rec.submit(job.RequestID, a.Stream, len(job.Tasks), time.Now())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := fe.Submit(ctx, job); err != nil {
				rec.refused(job.RequestID)
			}
		}()
	}
	wait(start.Add(end))
	wg.Wait()
	rec.mu.Lock()
	rec.noMore = true
	rec.checkDrained()
	rec.mu.Unlock()
	if cfg.Drain > 0 {
		drain := time.NewTimer(cfg.Drain)
		defer drain.Stop()
	loop:
		for {
			select {
			case <-rec.drained:
				break loop
			case <-drain.C:
				break loop
			case <-ctx.Done():
				break loop
			case <-tick.C:
				report()
			}
		}
	}
	res := rec.snapshot(cfg, time.Now())
	res.Log = fc.Watch.take()
	fc.Watch.mute(true)
	report()
	res.TotalSlots = total
	res.Arrivals = lists
	res.StartupS = startup.Seconds()
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// ReadLoadAvg reads the host's 1, 5 and 15 minute load averages.
func ReadLoadAvg() ([3]float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return [3]float64{}, err
	}
	return policy.ParseLoadAvg(string(b))
}

// WaitForLoad polls the 1-minute load average every poll until it is
// below threshold or maxWait passes. It returns how long it waited and
// whether it gave up. threshold <= 0 returns at once.
func WaitForLoad(ctx context.Context, threshold float64, maxWait, poll time.Duration, say func(load float64, waited time.Duration)) (time.Duration, bool) {
	if threshold <= 0 {
		return 0, false
	}
	start := time.Now()
	for {
		l, err := ReadLoadAvg()
		if err != nil || l[0] < threshold {
			return time.Since(start), false
		}
		waited := time.Since(start)
		if waited >= maxWait {
			return waited, true
		}
		if say != nil {
			say(l[0], waited)
		}
		select {
		case <-ctx.Done():
			return time.Since(start), true
		case <-time.After(min(poll, maxWait-waited)):
		}
	}
}

// Host describes the conditions of a run: the host's load before and
// after it, and what the fleet logged during the measurement.
func Host(before [3]float64, waited time.Duration, gaveUp bool, res Result) policy.HostLoad {
	after, _ := ReadLoadAvg()
	return policy.HostLoad{Before: before, After: after, WaitedS: waited.Seconds(), GaveUp: gaveUp, Cores: runtime.NumCPU(),
		FleetLogLines: res.Log.Lines, NodeMonitorsLost: res.Log.NodeMonitorsLost, GossipSuspicions: res.Log.GossipSuspicions}
}
