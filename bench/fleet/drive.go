package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/stats"
	"github.com/sparrowfleet/sparrow/internal/workload"
)

// DriveConfig is a synthetic run against a fleet.
type DriveConfig struct {
	Spec workload.Spec
	// Duration is how long jobs keep arriving.
	Duration time.Duration
	// JobsPerSecond overrides the rate derived from Spec (needed for
	// no-op tasks, which have no natural rate).
	JobsPerSecond float64
	// Drain bounds the wait for in-flight jobs after arrivals stop.
	Drain time.Duration
	Seed  uint64
	// Progress, if set, is called about once a second.
	Progress func(Progress)
}

// Progress is a running count, for progress lines.
type Progress struct {
	Elapsed                        time.Duration
	Submitted, Completed, InFlight int
}

// Result is a run's outcome. JSON names are part of the CLI contract.
type Result struct {
	Schedulers     int           `json:"schedulers"`
	NodeMonitors   int           `json:"node_monitors"`
	SlotsPerNode   int           `json:"slots_per_node"`
	Load           float64       `json:"load"`
	TasksPerJob    int           `json:"tasks_per_job"`
	DurationS      float64       `json:"duration_s"`
	JobsSubmitted  int           `json:"jobs_submitted"`
	JobsCompleted  int           `json:"jobs_completed"`
	JobsRefused    int           `json:"jobs_refused"`
	JobsIncomplete int           `json:"jobs_incomplete"`
	TasksCompleted int           `json:"tasks_completed"`
	TasksFailed    int           `json:"tasks_failed"`
	IdealMs        float64       `json:"ideal_ms"`
	ResponseMs     stats.Summary `json:"response_ms"`
	SchedDelayMs   stats.Summary `json:"sched_delay_ms"`
	TasksPerSec    float64       `json:"tasks_per_sec"`
}

// recorder collects timings from frontends and executors.
type recorder struct {
	mu         sync.Mutex
	submitted  map[string]time.Time
	pending    map[string]int
	delays     []float64
	responses  []float64
	tasksDone  int
	tasksFail  int
	jobsDone   int
	first      time.Time
	lastFinish time.Time
	drained    chan struct{}
	stopped    bool
}

func (r *recorder) submit(id string, tasks int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first.IsZero() {
		r.first = at
	}
	r.submitted[id] = at
	r.pending[id] = tasks
}

func (r *recorder) refused(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.submitted, id)
	delete(r.pending, id)
	r.checkDrained()
}

func (r *recorder) launched(t client.LaunchedTask, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.submitted[t.Ref.RequestID]; ok {
		r.delays = append(r.delays, stats.Millis(at.Sub(s)))
	}
}

func (r *recorder) message(m client.Message, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	left, ok := r.pending[m.Task.RequestID]
	if !ok {
		return
	}
	r.tasksDone++
	if m.Status != client.StatusOK {
		r.tasksFail++
	}
	if left > 1 {
		r.pending[m.Task.RequestID] = left - 1
		return
	}
	r.responses = append(r.responses, stats.Millis(at.Sub(r.submitted[m.Task.RequestID])))
	r.jobsDone++
	r.lastFinish = at
	delete(r.pending, m.Task.RequestID)
	delete(r.submitted, m.Task.RequestID)
	r.checkDrained()
}

// checkDrained closes drained once arrivals stopped and nothing is pending.
// Called with mu held.
func (r *recorder) checkDrained() {
	if r.stopped && len(r.pending) == 0 {
		select {
		case <-r.drained:
		default:
			close(r.drained)
		}
	}
}

// Drive runs a synthetic workload through the fleet: one frontend per
// scheduler, each with its own app, submitting Poisson arrivals in turn.
func (f *Fleet) Drive(ctx context.Context, dc DriveConfig) (Result, error) {
	if err := dc.Spec.Validate(); err != nil {
		return Result{}, fmt.Errorf("workload: %w", err)
	}
	rate := dc.JobsPerSecond
	if rate <= 0 {
		rate = dc.Spec.JobsPerSecond()
	}
	rng := rand.New(rand.NewPCG(dc.Seed, dc.Seed+1))
	arrivals, err := workload.NewArrivals(rng, rate)
	if err != nil {
		return Result{}, fmt.Errorf("workload: %w", err)
	}
	if dc.Drain <= 0 {
		dc.Drain = 30 * time.Second
	}
	rec := &recorder{submitted: map[string]time.Time{}, pending: map[string]int{}, drained: make(chan struct{})}
	hook := func(node int, t client.LaunchedTask, at time.Time) { rec.launched(t, at) }
	f.hook.Store(&hook)
	defer f.hook.Store(nil)

	fronts, err := f.Frontends(ctx, 0, func(m client.Message) { rec.message(m, time.Now()) })
	if err != nil {
		return Result{}, err
	}
	defer func() {
		for _, fe := range fronts {
			fe.Close()
		}
	}()

	msg := []byte(dc.Spec.TaskDuration.String())
	if dc.Spec.TaskDuration == 0 {
		msg = nil
	}
	start := time.Now()
	next := start
	var wg sync.WaitGroup
	refused := 0
	var refusedMu sync.Mutex
	progress := time.NewTicker(time.Second)
	defer progress.Stop()
	for n := 0; ; n++ {
		next = next.Add(arrivals.Next())
		if next.Sub(start) >= dc.Duration {
			break
		}
		if !f.waitUntil(ctx, next, progress, rec, start, dc.Progress) {
			break
		}
		fe := fronts[n%len(fronts)]
		job := client.Job{RequestID: fmt.Sprintf("job-%d", n), Tasks: make([]client.Task, dc.Spec.TasksPerJob)}
		for i := range job.Tasks {
			job.Tasks[i] = client.Task{ID: fmt.Sprintf("%d", i), Message: msg}
		}
		rec.submit(job.RequestID, len(job.Tasks), time.Now())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := fe.Submit(ctx, job); err != nil {
				rec.refused(job.RequestID)
				refusedMu.Lock()
				refused++
				refusedMu.Unlock()
			}
		}()
	}
	wg.Wait()
	rec.mu.Lock()
	rec.stopped = true
	rec.checkDrained()
	rec.mu.Unlock()
	drain := time.NewTimer(dc.Drain)
	defer drain.Stop()
	select {
	case <-rec.drained:
	case <-drain.C:
	case <-ctx.Done():
	}
	return f.result(dc, rec, refused, start), nil
}

// waitUntil blocks until t, reporting progress meanwhile; false if ctx ended.
func (f *Fleet) waitUntil(ctx context.Context, t time.Time, progress *time.Ticker, rec *recorder, start time.Time, report func(Progress)) bool {
	return WaitUntil(ctx, t, progress, func() {
		if report == nil {
			return
		}
		rec.mu.Lock()
		p := Progress{Elapsed: time.Since(start), Completed: rec.jobsDone, InFlight: len(rec.pending)}
		p.Submitted = p.Completed + p.InFlight
		rec.mu.Unlock()
		report(p)
	})
}

// WaitUntil blocks until t, calling tick on every tick of progress, and
// returns false if ctx ended first. Workload drivers pace arrivals with it.
func WaitUntil(ctx context.Context, t time.Time, progress *time.Ticker, tick func()) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-progress.C:
			tick()
		}
	}
}

// Frontends starts one frontend per running scheduler, each with its own app
// (a scheduler routes an app's messages to one frontend) and preferring its
// own scheduler, failing over to the rest in order. timeout 0 means the
// client's default. The caller closes them.
func (f *Fleet) Frontends(ctx context.Context, timeout time.Duration, onMessage func(client.Message)) ([]*client.Frontend, error) {
	addrs := f.SchedulerAddrs()
	var fronts []*client.Frontend
	for i := range f.Schedulers {
		if f.stopped[i] {
			continue
		}
		order := append(append([]string{}, addrs[i:]...), addrs[:i]...)
		fe, err := client.NewFrontend(ctx, client.FrontendConfig{
			App: f.cfg.Apps[i%len(f.cfg.Apps)], Schedulers: order,
			Listen: f.cfg.host(1, i) + ":0", AdvertiseHost: f.cfg.host(1, i),
			Timeout: timeout, OnMessage: onMessage, Log: f.cfg.Log,
		})
		if err != nil {
			for _, fe := range fronts {
				fe.Close()
			}
			return nil, fmt.Errorf("start frontend %d: %w", i, err)
		}
		fronts = append(fronts, fe)
	}
	return fronts, nil
}

func (f *Fleet) result(dc DriveConfig, rec *recorder, refused int, start time.Time) Result {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	res := Result{
		Schedulers: len(f.Schedulers), NodeMonitors: len(f.NodeMonitors) + f.cfg.RemoteNodeMonitors, SlotsPerNode: f.cfg.Slots,
		Load: dc.Spec.Load, TasksPerJob: dc.Spec.TasksPerJob, DurationS: dc.Duration.Seconds(),
		JobsCompleted: rec.jobsDone, JobsRefused: refused, JobsIncomplete: len(rec.pending),
		TasksCompleted: rec.tasksDone, TasksFailed: rec.tasksFail,
		IdealMs:      stats.Millis(dc.Spec.TaskDuration),
		ResponseMs:   stats.Summarize(rec.responses),
		SchedDelayMs: stats.Summarize(rec.delays),
	}
	res.JobsSubmitted = res.JobsCompleted + res.JobsIncomplete + refused
	if span := rec.lastFinish.Sub(rec.first).Seconds(); span > 0 {
		res.TasksPerSec = float64(rec.tasksDone) / span
	}
	return res
}
