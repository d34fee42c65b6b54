package fairness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/bench/policy/live"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/nodemonitor"
)

// Setup is one of the compared fleet configurations.
type Setup struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Queue is the node monitors' discipline.
	Queue string `json:"queue"`
	// Coordinator starts a fairness coordinator beside the fleet.
	Coordinator bool `json:"coordinator"`
	// CMMFWeights makes fair queues take the coordinator's per-type CMMF
	// weights (nodemonitor.CoordinationConfig.Weights).
	CMMFWeights bool `json:"cmmf_weights"`
	// Steer makes the scheduler steer users' jobs away from node monitors
	// that sit on their reservations (Config.SteerAfter).
	Steer bool `json:"steer"`
}

// Setups are the three configurations of the experiment.
var Setups = []Setup{
	{Name: "fair", Description: "per-node fair queues, no coordinator", Queue: "fair"},
	{Name: "choosy", Description: "Choosy queues with a coordinator", Queue: "choosy", Coordinator: true, Steer: true},
	{Name: "cmmf-weights", Description: "fair queues with the coordinator's CMMF weights", Queue: "fair", Coordinator: true, CMMFWeights: true, Steer: true},
}

// SetupByName returns the setup called name.
func SetupByName(name string) (Setup, error) {
	for _, s := range Setups {
		if s.Name == name {
			return s, nil
		}
	}
	return Setup{}, fmt.Errorf("unknown setup %q (want fair, choosy or cmmf-weights)", name)
}

// Config shapes a run. Zero fields take the defaults in Defaults.
type Config struct {
	// NodesPerType node monitors of each of the four types, Slots slots
	// each (the paper: 40 cores per type).
	NodesPerType, Slots int
	// TaskDuration is every sleep task's length; TasksPerJob the tasks of
	// each job the users submit.
	TaskDuration time.Duration
	TasksPerJob  int
	// Backlog keeps each live user's unfinished tasks at this multiple of
	// the slots it may use, so it stays queued on all of them.
	Backlog float64
	// Scale is the run's seconds per paper second (0.2: the paper's 360 s
	// last 72 s).
	Scale float64
	// Period is the coordinator's period and the node monitors' report
	// interval.
	Period time.Duration
	// Bin is the share measurement bin; Settle how long after each
	// arrival or departure bins are left out of the converged deviation;
	// Tolerance the ramp-up threshold (fraction of the cluster).
	Bin, Settle time.Duration
	Tolerance   float64
	// Seed makes the schedulers' placement reproducible.
	Seed uint64
	// SteerAfter is the scheduler's scheduler.Config.SteerAfter in the
	// setups that steer (default 1 s; negative: off).
	SteerAfter time.Duration
	// GossipProfile is every member's gossip timing (default "lan": far
	// less gossip than "local", and slow enough failure detection that a
	// fleet starved of CPU on a shared 2-core host is not declared dead).
	GossipProfile string
	// Log is the fleet's logger; Logs, if set, must be the writer behind
	// it, and counts its lines during each measurement. Say, if set,
	// receives progress lines.
	Log  zerolog.Logger
	Logs *LogCounter
	Say  func(string)
}

// Defaults fills zero fields.
func (c *Config) Defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.NodesPerType, 4)
	def(&c.Slots, 4)
	def(&c.TasksPerJob, 8)
	if c.TaskDuration <= 0 {
		c.TaskDuration = 200 * time.Millisecond
	}
	if c.Backlog <= 0 {
		c.Backlog = 4
	}
	if c.Scale <= 0 {
		c.Scale = 0.2
	}
	if c.Period <= 0 {
		c.Period = coordinator.DefaultPeriod
	}
	if c.Bin <= 0 {
		c.Bin = 500 * time.Millisecond
	}
	if c.Settle <= 0 {
		c.Settle = 2 * time.Second
	}
	if c.Tolerance <= 0 {
		c.Tolerance = 0.05
	}
	if c.SteerAfter == 0 {
		c.SteerAfter = time.Second
	}
	if c.GossipProfile == "" {
		c.GossipProfile = "lan"
	}
}

func (c *Config) say(format string, args ...any) {
	if c.Say != nil {
		c.Say(fmt.Sprintf(format, args...))
	}
}

// Measurement is what one setup's run recorded, before analysis.
type Measurement struct {
	Spans      []policy.Span
	Window     time.Duration
	TotalSlots int
	// TypeNames are the machine types, in node order: node i is of type
	// i / (nodes per type).
	TypeNames []string
	StartupS  float64
	// Submitted and Refused count jobs.
	Submitted, Refused int
	// Logs counts the fleet's log lines during the measurement.
	Logs LogCounts
}

// Measure runs the scenario once on a fresh fleet in the given setup.
// events are on the run's clock (already scaled) and end is when the run
// stops.
func Measure(ctx context.Context, cfg Config, setup Setup, users []User, types []MachineType, events []Event, end time.Duration) (Measurement, error) {
	cfg.Defaults()
	// Deferred first, so it runs after the fleet is down: the teardown's
	// warnings say nothing about the run.
	defer cfg.Logs.Mute(false)
	rec := newRecorder(users)
	t0 := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	stale := max(nodemonitor.DefaultGuidanceStale, 5*cfg.Period)
	steer := time.Duration(0)
	if setup.Steer && cfg.SteerAfter > 0 {
		steer = cfg.SteerAfter
	}
	f, err := fleet.Start(startCtx, fleet.Config{
		SteerAfter: steer,
		Schedulers: 1, NodeMonitors: cfg.NodesPerType * len(types), Slots: cfg.Slots, Queue: setup.Queue,
		NodeAttrs:    func(i int) map[string]string { return types[i/cfg.NodesPerType].Attrs },
		Coordination: nodemonitor.CoordinationConfig{ReportEvery: cfg.Period, Stale: stale, Weights: setup.CMMFWeights},
		Seed:         cfg.Seed, GossipProfile: cfg.GossipProfile, Log: cfg.Log,
		OnLaunch: rec.launched,
		Run: func(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
			rec.taskStart(t)
			defer rec.taskEnd(t)
			return fleet.SleepTask(ctx, t)
		},
	})
	if err != nil {
		return Measurement{}, fmt.Errorf("%s: start fleet: %w", setup.Name, err)
	}
	defer f.Close()
	if setup.Coordinator {
		d, err := coordinator.Start(coordinator.Config{
			Name: "coordinator", Gossip: "127.0.5.1:0", Join: []string{f.Schedulers[0].Cluster.Addr()},
			GossipProfile: cfg.GossipProfile, Period: cfg.Period, Log: cfg.Log,
		})
		if err != nil {
			return Measurement{}, fmt.Errorf("%s: start coordinator: %w", setup.Name, err)
		}
		defer d.Close()
		if err := waitGuided(startCtx, f); err != nil {
			return Measurement{}, fmt.Errorf("%s: %w", setup.Name, err)
		}
	}
	startup := time.Since(t0)
	fronts, err := f.Frontends(ctx, 2*time.Second, rec.message)
	if err != nil {
		return Measurement{}, fmt.Errorf("%s: %w", setup.Name, err)
	}
	defer func() {
		for _, fe := range fronts {
			fe.Close()
		}
	}()
	cfg.say("%s: fleet up in %.1fs (%s); running %v", setup.Name, startup.Seconds(), f.Describe(), end)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	cfg.Logs.Take()
	rec.start(time.Now())
	var wg sync.WaitGroup
	msg := []byte(cfg.TaskDuration.String())
	for i, u := range users {
		target := int(math.Ceil(cfg.Backlog * float64(len(Eligible(u, types))*cfg.NodesPerType*cfg.Slots)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec.drive(runCtx, i, intervals(events, u.Name, end), target, cfg.TasksPerJob, msg, setup.Name, fronts[0])
		}()
	}
	// Progress every 5 s until the end.
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	deadline := time.NewTimer(time.Until(rec.t0.Add(end)))
	defer deadline.Stop()
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case <-deadline.C:
			break wait
		case <-tick.C:
			cfg.say("  %s %5.1fs  running %s", setup.Name, time.Since(rec.t0).Seconds(), rec.runningLine())
		}
	}
	m := rec.snapshot(rec.t0.Add(end))
	m.Logs = cfg.Logs.Take()
	cfg.Logs.Mute(true) // until the teardown (below) is over
	stop()
	wg.Wait()
	m.TotalSlots = f.TotalSlots()
	for _, t := range types {
		m.TypeNames = append(m.TypeNames, t.Name)
	}
	m.StartupS = startup.Seconds()
	if err := ctx.Err(); err != nil {
		return m, err
	}
	return m, nil
}

// waitGuided waits until every node monitor has installed the
// coordinator's guidance, so the run starts coordinated.
func waitGuided(ctx context.Context, f *fleet.Fleet) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n := 0
		for _, nm := range f.NodeMonitors {
			if _, ok := nm.GuidanceVersion(); ok {
				n++
			}
		}
		if n == len(f.NodeMonitors) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("only %d of %d node monitors follow the coordinator: %w", n, len(f.NodeMonitors), ctx.Err())
		case <-tick.C:
		}
	}
}

// interval is a span of the run during which a user is live.
type interval struct{ from, to time.Duration }

// intervals returns user's live intervals from the events, ending at end.
func intervals(events []Event, user string, end time.Duration) []interval {
	var out []interval
	for _, e := range events {
		switch {
		case e.User != user:
		case e.Arrive:
			out = append(out, interval{from: e.At, to: end})
		case len(out) > 0:
			out[len(out)-1].to = e.At
		}
	}
	return out
}

// recorder tracks each user's unfinished tasks (to keep it backlogged)
// and every task's run on an executor.
type recorder struct {
	users []User
	wake  []chan struct{}

	mu          sync.Mutex
	t0          time.Time
	stopped     bool
	userOf      map[string]int  // request id -> user
	done        map[string]bool // finished "request/task"
	outstanding []int
	book        live.SpanBook // task spans, from t0
	submitted   int
	refused     int
}

func newRecorder(users []User) *recorder {
	r := &recorder{
		users: users, userOf: map[string]int{}, done: map[string]bool{}, outstanding: make([]int, len(users)),
	}
	for range users {
		r.wake = append(r.wake, make(chan struct{}, 1))
	}
	return r
}

func key(requestID, taskID string) string { return requestID + "/" + taskID }

func (r *recorder) start(t time.Time) {
	r.mu.Lock()
	r.t0, r.book.T0 = t, t
	r.mu.Unlock()
}

func (r *recorder) launched(node int, t client.LaunchedTask) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.book.Launched(node, t)
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

// message counts a task's completion message against its user's backlog.
func (r *recorder) message(m client.Message) {
	r.mu.Lock()
	k := key(m.Task.RequestID, m.Task.TaskID)
	u, ok := r.userOf[m.Task.RequestID]
	if !ok || r.done[k] {
		r.mu.Unlock()
		return
	}
	r.done[k] = true
	r.outstanding[u]--
	r.mu.Unlock()
	select {
	case r.wake[u] <- struct{}{}:
	default:
	}
}

// drive keeps user u's unfinished tasks at target during each of its live
// intervals, submitting jobs of tasks sleep tasks.
func (r *recorder) drive(ctx context.Context, u int, live []interval, target, tasks int, msg []byte, prefix string, fe *client.Frontend) {
	name := r.users[u].Name
	var cons []client.Constraint
	for _, c := range r.users[u].Constraints {
		cons = append(cons, client.Constraint{Key: c.Key, Op: c.Op, Values: c.Values})
	}
	seq := 0
	poll := time.NewTicker(50 * time.Millisecond) // in case a message is lost
	defer poll.Stop()
	for _, iv := range live {
		if !sleepUntil(ctx, r.t0.Add(iv.from)) {
			return
		}
		until := r.t0.Add(iv.to)
		for time.Now().Before(until) {
			r.mu.Lock()
			room := target - r.outstanding[u]
			r.mu.Unlock()
			if room <= 0 {
				select {
				case <-ctx.Done():
					return
				case <-r.wake[u]:
				case <-poll.C:
				}
				continue
			}
			job := client.Job{RequestID: prefix + "-" + name + "-" + strconv.Itoa(seq), User: client.User{Name: name},
				Constraints: cons, Tasks: make([]client.Task, tasks)}
			seq++
			for k := range job.Tasks {
				job.Tasks[k] = client.Task{ID: strconv.Itoa(k), Message: msg}
			}
			r.mu.Lock()
			r.userOf[job.RequestID] = u
			r.outstanding[u] += tasks
			r.submitted++
			r.mu.Unlock()
			if _, err := fe.Submit(ctx, job); err != nil {
				if ctx.Err() != nil {
					return
				}
				r.mu.Lock()
				r.refused++
				if !errors.Is(err, client.ErrInDoubt) {
					r.outstanding[u] -= tasks // refused: none of it will run
				}
				r.mu.Unlock()
			}
		}
	}
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// runningLine is each user's running tasks, for progress lines.
func (r *recorder) runningLine() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.book.RunningByUser()
	s := ""
	for _, u := range r.users {
		s += fmt.Sprintf(" %s %d", u.Name, n[u.Name])
	}
	return s
}

// snapshot freezes the spans at end, cutting tasks still running there.
func (r *recorder) snapshot(end time.Time) Measurement {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	m := Measurement{Window: end.Sub(r.t0), Spans: r.book.Stop(end), Submitted: r.submitted, Refused: r.refused}
	return m
}
