package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
	"github.com/sparrowfleet/sparrow/internal/stats"
	"github.com/sparrowfleet/sparrow/internal/workload"
)

// Config is a run.
type Config struct {
	App        string
	Schedulers []string
	// Listen and AdvertiseHost place the FrontendService; AdvertiseHost
	// "auto" (and "") is client.AutoAdvertiseHost's pick.
	Listen, AdvertiseHost string
	// Jobs is how many original jobs to submit, of Tasks tasks each
	// sleeping TaskDuration.
	Jobs, Tasks  int
	TaskDuration time.Duration
	// Rate is the job arrival rate (jobs/s); if 0 it is derived from Load
	// and Slots: load·slots / (tasks·duration).
	Rate       float64
	Load       float64
	Slots      int
	Poisson    bool
	Seed       uint64
	ProbeRatio float64
	RunID      string
	Deadline   time.Duration
	Timeout    time.Duration // frontend failure-detection timeout
	Heartbeat  time.Duration
	// Resubmission policy (see client.Backoff, client.RetryBudget and the
	// package doc): a logical
	// job's k-th resubmission waits a full-jitter delay drawn from
	// [0, min(RetryMax, RetryBase·2^(k-1))), plus any delay the scheduler
	// suggested; resubmitted tasks may be at most RetryBudget × the
	// first-attempt tasks of the last RetryWindow, or RetryBudgetMin if
	// more. Zero values take the Default* constants; a negative
	// RetryBudget or RetryBudgetMin means none (fraction 0, no floor).
	RetryBase, RetryMax time.Duration
	RetryBudget         float64
	RetryWindow         time.Duration
	RetryBudgetMin      int
	// MaxInFlight bounds the submitJob calls in flight at once
	// (inflight.go); 0 means DefaultMaxInFlight, negative no bound.
	MaxInFlight int
	// Progress receives a line about once per ProgressEvery (nil: none).
	Progress      io.Writer
	ProgressEvery time.Duration
	// Marks, if set, delivers mark requests (the CLI sends one per
	// SIGUSR1): the driver records the time and what is in flight, so that
	// a fault injector can say "this is when I struck".
	Marks <-chan struct{}
	Log   zerolog.Logger
	// User and Constraints are given to every job, for fair sharing and
	// constrained placement (zero: no user, run anywhere).
	User        client.User
	Constraints []client.Constraint
	// Prefer, when On, gives every task placement preferences: the
	// replica nodes of an input block drawn by a Zipf popularity
	// (prefer.go), from Seed.
	Prefer Preferences
	// Trace, if set, replaces the generated workload (Jobs, Tasks,
	// TaskDuration, Rate, Load, Poisson, Prefer) with a job trace's jobs,
	// each submitted at its scaled arrival after the start; the summary
	// then reports response times by job class (trace.go).
	Trace *Trace
	// KeepSamples puts every response time and scheduling delay in the
	// Summary (Summary.Samples), so that runs of several drivers can be
	// merged into exact percentiles.
	KeepSamples bool

	// onSlotWait, when set (tests only), is called as a submit starts
	// waiting for a MaxInFlight slot.
	onSlotWait func()
}

// Summary is a run's outcome. JSON names are part of the CLI contract
// (scripts/e2e reads them).
type Summary struct {
	OK             bool     `json:"ok"`
	Error          string   `json:"error,omitempty"`
	RunID          string   `json:"run_id"`
	App            string   `json:"app"`
	Schedulers     []string `json:"schedulers"`
	Frontend       string   `json:"frontend"`
	TasksPerJob    int      `json:"tasks_per_job"`
	TaskDurationMs float64  `json:"task_duration_ms"`
	RateJobsPerSec float64  `json:"rate_jobs_per_s"`

	JobsSubmitted     int `json:"jobs_submitted"`  // original jobs
	TasksSubmitted    int `json:"tasks_submitted"` // original tasks
	JobsCompleted     int `json:"jobs_completed"`
	TasksCompleted    int `json:"tasks_completed"`
	AttemptsSubmitted int `json:"attempts_submitted"` // every submitted job, resubmissions included
	AttemptTasks      int `json:"attempt_tasks_submitted"`

	OKReports     int `json:"ok_reports"`
	LostReports   int `json:"lost_reports"`   // status 1001
	FailedReports int `json:"failed_reports"` // status 1002
	OtherReports  int `json:"other_reports"`  // other non-OK statuses (also resubmitted)
	// LateOKReports are OK messages from an attempt the driver had already
	// given up on (its task reported lost or failed, or the job in flight
	// at a failover): the fleet's "lost" was in fact "finished late".
	// DuplicateOKReports are OK messages for a task already done by
	// another attempt: the task ran more than once at the application
	// level (never twice under one request id; the e2e checks that).
	LateOKReports      int `json:"late_ok_reports"`
	DuplicateOKReports int `json:"duplicate_ok_reports"`
	// LateOK samples the late and duplicate OK messages: "request/task: why".
	LateOK []string `json:"late_ok,omitempty"`
	// StaleReports are lost/failed reports for an attempt already
	// replaced or a task already done: nothing to do.
	StaleReports     int `json:"stale_reports"`
	UnknownReports   int `json:"unknown_reports"` // messages for request ids this run never used
	ResubmittedJobs  int `json:"resubmitted_jobs"`
	ResubmittedTasks int `json:"resubmitted_tasks"`
	// ResubmittedBy breaks ResubmittedTasks down by cause: lost, failed,
	// failover (in flight at a failover), in_doubt (submit failed after
	// sending), submit_error (submit refused or no scheduler answered).
	ResubmittedBy map[string]int `json:"resubmitted_by"`
	SubmitErrors  int            `json:"submit_errors"`
	// BackpressureWaits counts submits (arrivals and resubmissions) that
	// waited for one of the MaxInFlight calls in flight to return, for
	// BackpressureWaitS seconds in all; BusyRetries counts submits tried
	// again because every connection to the scheduler was busy
	// (inflight.go). Neither is an attempt.
	BackpressureWaits int     `json:"backpressure_waits"`
	BackpressureWaitS float64 `json:"backpressure_wait_s"`
	BusyRetries       int     `json:"busy_retries"`

	Failovers []FailoverRecord `json:"failovers"`
	// FirstLostAt and LastLostAt bracket the lost (1001) reports;
	// FirstFailedAt and LastFailedAt the failed (1002) ones.
	FirstLostAt   string `json:"first_lost_at,omitempty"`
	LastLostAt    string `json:"last_lost_at,omitempty"`
	FirstFailedAt string `json:"first_failed_at,omitempty"`
	LastFailedAt  string `json:"last_failed_at,omitempty"`
	// AffectedJobs are original jobs that needed a resubmission;
	// LastAffectedDoneAt is when the last of them completed.
	AffectedJobs       int    `json:"affected_jobs"`
	AffectedCompleted  int    `json:"affected_completed"`
	LastAffectedDoneAt string `json:"last_affected_done_at,omitempty"`
	// AffectedResponseMs is the affected jobs' response time (first
	// submission to last task OK).
	AffectedResponseMs stats.Summary `json:"affected_response_ms"`
	ResponseMs         stats.Summary `json:"response_ms"`
	// SchedDelayMs is each OK task's scheduling delay: from its attempt's
	// submit to its launch on the executor. Only executors run with
	// --report-launch-time give the launch time; empty otherwise. The
	// clocks must agree (one machine, or synchronised hosts).
	SchedDelayMs stats.Summary `json:"sched_delay_ms"`
	Marks        []Mark        `json:"marks,omitempty"`
	// Samples holds what ResponseMs and SchedDelayMs summarise, one value
	// per job and per task, with Config.KeepSamples; nil otherwise.
	Samples *Samples `json:"samples,omitempty"`
	// Preferences echoes Config.Prefer and the skew it drew (nil: tasks
	// had none).
	Preferences *PreferencesSummary `json:"preferences,omitempty"`
	// With Config.Trace, Trace describes the replay, and the embedded
	// Result (its members "short", "long", "cutoff_s", "utilisation" and
	// "scheduling_delay" at the top level of the JSON) gives the job
	// response times, arrival to last task's end, in seconds, by class.
	// Scheduling delay and utilisation need the executors' launch times
	// (sparrow executor --report-launch-time), utilisation also
	// Config.Slots; they are zero without them.
	Trace *TraceInfo `json:"trace,omitempty"`
	*jobtrace.Result
	// Jobs is every completed job's outcome, with Trace.KeepJobs (the
	// CSV of --jobs-out, not the JSON summary).
	Jobs []jobtrace.JobOutcome `json:"-"`

	// The resubmission policy in force and what it did.
	// RetriesDelayed counts resubmissions sent after a backoff delay > 0;
	// RetryDelayMs summarises every delay drawn; RetryAfterHonoured counts
	// resubmissions that waited a delay the scheduler suggested.
	// RetryBudgetExhausted says a resubmission was refused by the budget
	// (first at RetryBudgetExhaustedAt); JobsFailedByBudget and
	// TasksFailedByBudget count the jobs failed instead of resubmitted and
	// the tasks they would have resubmitted.
	RetryPolicy            RetryPolicy   `json:"retry_policy"`
	RetriesDelayed         int           `json:"retries_delayed"`
	RetryDelayMs           stats.Summary `json:"retry_delay_ms"`
	RetryAfterHonoured     int           `json:"retry_after_honoured"`
	RetryBudgetExhausted   bool          `json:"retry_budget_exhausted"`
	RetryBudgetExhaustedAt string        `json:"retry_budget_exhausted_at,omitempty"`
	JobsFailedByBudget     int           `json:"jobs_failed_by_budget"`
	TasksFailedByBudget    int           `json:"tasks_failed_by_budget"`

	StartedAt      string  `json:"started_at"`
	LastArrivalAt  string  `json:"last_arrival_at"`
	FinishedAt     string  `json:"finished_at"`
	ElapsedS       float64 `json:"elapsed_s"`
	DeadlineHit    bool    `json:"deadline_hit"`
	IncompleteJobs []int   `json:"incomplete_jobs,omitempty"`
	// IncompleteTasks samples the tasks not done at the end:
	// "request/task" of their latest attempt, and its state.
	IncompleteTasks []string `json:"incomplete_tasks,omitempty"`
}

// Samples are a run's raw latencies, in milliseconds.
type Samples struct {
	ResponseMs   []float64 `json:"response_ms"`
	SchedDelayMs []float64 `json:"sched_delay_ms"`
}

// RetryPolicy echoes the resubmission policy of a run.
type RetryPolicy struct {
	BaseMs    float64 `json:"base_ms"`
	MaxMs     float64 `json:"max_ms"`
	Budget    float64 `json:"budget"`
	WindowS   float64 `json:"window_s"`
	BudgetMin int     `json:"budget_min"`
}

// Defaults of the resubmission policy: the client library's, but for a
// larger floor. A failover resubmits every task in flight at once, a few
// hundred in the e2e fault scenarios (scripts/e2e/run.sh), more than 10%
// of a window's first attempts at their rates; a floor of 1,000 covers
// one fault, and several spurious failovers within a window on a starved
// host, so that only a storm meets the fraction.
const (
	DefaultRetryBase      = client.DefaultRetryBase
	DefaultRetryMax       = client.DefaultRetryMax
	DefaultRetryBudget    = client.DefaultRetryBudget
	DefaultRetryWindow    = client.DefaultRetryWindow
	DefaultRetryBudgetMin = 1000
)

// maxSamples bounds the sample lists in a Summary.
const maxSamples = 20

// FailoverRecord is one client.Failover.
type FailoverRecord struct {
	From           string  `json:"from"`
	To             string  `json:"to"`
	Err            string  `json:"err"`
	DetectedAt     string  `json:"detected_at"`
	ReconnectedAt  string  `json:"reconnected_at"`
	ReconnectMs    float64 `json:"reconnect_ms"`
	InFlightJobs   int     `json:"in_flight_jobs"`
	InFlightTasks  int     `json:"in_flight_tasks"`  // tasks of those jobs not yet done
	ResubmittedAt  string  `json:"resubmitted_at"`   // when their resubmissions were sent
	RelaunchTookMs float64 `json:"relaunch_took_ms"` // reconnected -> resubmissions sent
	// RelaunchBackoffMs is the longest backoff delay among those
	// resubmissions; it is part of RelaunchTookMs (subtract it to compare
	// with the paper's relaunch time).
	RelaunchBackoffMs float64 `json:"relaunch_backoff_ms"`
}

// Mark is a snapshot taken on request (SIGUSR1).
type Mark struct {
	At            string `json:"at"`
	JobsInFlight  int    `json:"jobs_in_flight"`  // submitted, not all tasks done
	TasksInFlight int    `json:"tasks_in_flight"` // submitted, not done
	JobsSubmitted int    `json:"jobs_submitted"`
	JobsCompleted int    `json:"jobs_completed"`
	Scheduler     string `json:"scheduler"` // the frontend's scheduler then
}

// Resubmission causes.
const (
	causeLost        = "lost"
	causeFailed      = "failed"
	causeFailover    = "failover"
	causeInDoubt     = "in_doubt"
	causeSubmitError = "submit_error"
)

type logicalJob struct {
	n         int
	tasks     []*logicalTask
	left      int
	submitted time.Time
	doneAt    time.Time
	affected  bool
	attempts  int
	retries   int  // resubmissions so far: the backoff's exponent
	failed    bool // failed by the retry budget instead of resubmitted
	// With Config.Trace: the job's arrival in the trace, scaled, from
	// the run's start, and its unscaled mean task duration (its class).
	arrival time.Duration
	meanS   float64
}

type logicalTask struct {
	job     *logicalJob
	idx     int
	done    bool
	current *attempt // latest attempt covering this task
	prefer  []string // preferred nodes (Config.Prefer), the same for every attempt
	// With Config.Trace: the task's message (its scaled duration) and
	// that duration.
	msg []byte
	dur time.Duration
}

type attempt struct {
	id        string
	job       *logicalJob
	tasks     map[string]*logicalTask // task id in the attempt -> logical task
	abandoned bool                    // given up whole (failover, in doubt, submit error)
	gaveUp    map[string]bool         // tasks of this attempt reported lost/failed
	created   time.Time               // when the attempt was made, just before its submit
	sent      bool                    // its submit was started (not still in backoff)
}

type resubmit struct {
	task  *logicalTask
	cause string
	after time.Duration // delay the scheduler suggested (0: none)
}

type runner struct {
	cfg  Config
	fe   *client.Frontend
	msg  []byte
	log  zerolog.Logger
	kick chan struct{} // wakes the resubmitter; capacity 1

	mu        sync.Mutex
	jobs      []*logicalJob
	attempts  map[string]*attempt
	done      int
	allDone   chan struct{}
	sum       Summary
	responses []float64
	delays    []float64 // submit -> launch, from executors that report launch times
	affResp   []float64
	firstLost time.Time
	lastLost  time.Time
	firstFail time.Time
	lastFail  time.Time
	lastAff   time.Time
	redo      []resubmit    // queued for the resubmitter
	slots     chan struct{} // one per submitJob call in flight (inflight.go); nil: no bound
	pendingFO []int         // indices into sum.Failovers awaiting resubmission time
	submitWG  sync.WaitGroup

	backoff     client.Backoff
	budget      client.RetryBudget
	retryDelays []float64 // ms, every backoff delay drawn
	failedOpen  int       // jobs failed by the budget and not completed after all
	allClosed   bool      // allDone is closed

	start time.Time          // the run's start; set before the first arrival
	rec   *jobtrace.Recorder // with Config.Trace: outcomes by job class
}

// Run drives the workload and returns its summary. The error is non-nil
// only when the run could not start; an incomplete run is Summary.OK false.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	if err := cfg.validate(); err != nil {
		return Summary{}, err
	}
	if cfg.RunID == "" {
		var b [3]byte
		rand.Read(b[:])
		cfg.RunID = hex.EncodeToString(b[:])
	}
	r := &runner{
		cfg: cfg, log: cfg.Log, kick: make(chan struct{}, 1),
		attempts: map[string]*attempt{}, allDone: make(chan struct{}),
		backoff: client.Backoff{Base: cfg.RetryBase, Max: cfg.RetryMax},
		budget:  client.RetryBudget{Fraction: max(cfg.RetryBudget, 0), Window: cfg.RetryWindow, Min: max(cfg.RetryBudgetMin, 0)},
	}
	if cfg.TaskDuration > 0 {
		r.msg = []byte(cfg.TaskDuration.String())
	}
	switch {
	case cfg.MaxInFlight == 0:
		r.slots = make(chan struct{}, DefaultMaxInFlight)
	case cfg.MaxInFlight > 0:
		r.slots = make(chan struct{}, cfg.MaxInFlight)
	}
	r.sum = Summary{
		RunID: cfg.RunID, App: cfg.App, Schedulers: cfg.Schedulers, TasksPerJob: cfg.Tasks,
		TaskDurationMs: stats.Millis(cfg.TaskDuration), RateJobsPerSec: cfg.rate(),
		ResubmittedBy: map[string]int{}, Failovers: []FailoverRecord{},
		RetryPolicy: RetryPolicy{
			BaseMs: stats.Millis(cfg.RetryBase), MaxMs: stats.Millis(cfg.RetryMax),
			Budget: r.budget.Fraction, WindowS: cfg.RetryWindow.Seconds(), BudgetMin: r.budget.Min,
		},
	}
	var pl Placement
	if cfg.Prefer.On() {
		var err error
		if pl, err = cfg.Prefer.Generate(cfg.Seed, cfg.Jobs, cfg.Tasks); err != nil {
			return Summary{}, err
		}
		ps := cfg.Prefer.Summarize(pl)
		r.sum.Preferences = &ps
	}
	if cfg.Trace != nil {
		r.jobs = traceJobs(cfg.Trace)
		r.rec = jobtrace.NewRecorder(cfg.Trace.Cutoff)
		if cfg.Trace.KeepJobs {
			r.rec.KeepJobs()
		}
		r.sum.TasksPerJob, r.sum.TaskDurationMs = 0, 0
		r.sum.Trace = &TraceInfo{
			File: cfg.Trace.Name, TimeScale: cfg.Trace.Scale, Jobs: len(cfg.Trace.Jobs), Tasks: cfg.Trace.Tasks,
			WorkS: cfg.Trace.WorkS, SpanS: cfg.Trace.SpanS(),
		}
		if span := cfg.Trace.SpanS(); span > 0 && cfg.Slots > 0 {
			r.sum.Trace.Load = cfg.Trace.WorkS / (span * float64(cfg.Slots))
		}
	}
	for i := 0; i < cfg.Jobs && cfg.Trace == nil; i++ {
		j := &logicalJob{n: i, left: cfg.Tasks}
		for k := 0; k < cfg.Tasks; k++ {
			t := &logicalTask{job: j, idx: k}
			if cfg.Prefer.On() {
				t.prefer = cfg.Prefer.NodesOf(pl, pl.Block[i][k])
			}
			j.tasks = append(j.tasks, t)
		}
		r.jobs = append(r.jobs, j)
	}
	fcfg := client.FrontendConfig{
		App: cfg.App, Schedulers: cfg.Schedulers, Listen: cfg.Listen, AdvertiseHost: cfg.AdvertiseHost,
		Timeout: cfg.Timeout, Heartbeat: cfg.Heartbeat,
		OnMessage: r.onMessage, OnFailover: r.onFailover, Log: cfg.Log,
	}
	// The schedulers may still be starting, or slow to answer on a loaded
	// machine: keep trying to register for a while (a tenth of the
	// deadline, at least 10 s) before giving up.
	startBy := time.Now().Add(max(cfg.Deadline/10, 10*time.Second))
	var fe *client.Frontend
	for {
		var err error
		if fe, err = client.NewFrontend(ctx, fcfg); err == nil {
			break
		}
		if !errors.Is(err, client.ErrNoScheduler) || time.Now().After(startBy) || ctx.Err() != nil {
			return Summary{}, fmt.Errorf("frontend: %w", err)
		}
		cfg.Log.Warn().Err(err).Msg("no scheduler answered; retrying")
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	r.fe = fe
	r.sum.Frontend = fe.Addr()
	defer fe.Close()
	return r.run(ctx), nil
}

func (c *Config) validate() error {
	switch {
	case c.App == "":
		return fmt.Errorf("missing app")
	case len(c.Schedulers) == 0:
		return fmt.Errorf("no schedulers")
	case c.Deadline <= 0:
		return fmt.Errorf("deadline must be positive")
	}
	if c.Trace != nil {
		if err := c.validateTrace(); err != nil {
			return err
		}
		return c.validateRetries()
	}
	switch {
	case c.Jobs < 1:
		return fmt.Errorf("jobs must be at least 1")
	case c.Tasks < 1:
		return fmt.Errorf("tasks per job must be at least 1")
	case c.TaskDuration < 0:
		return fmt.Errorf("task duration must not be negative")
	case c.Rate < 0:
		return fmt.Errorf("rate must not be negative")
	case c.Rate == 0 && (c.Load <= 0 || c.Slots <= 0 || c.TaskDuration <= 0):
		return fmt.Errorf("set a rate, or a load, slots and a task duration to derive one")
	}
	if err := c.Prefer.Validate(); err != nil {
		return err
	}
	if c.Rate == 0 {
		spec := workload.Spec{Load: c.Load, Slots: c.Slots, TasksPerJob: c.Tasks, TaskDuration: c.TaskDuration}
		if err := spec.Validate(); err != nil {
			return err
		}
	}
	return c.validateRetries()
}

// validateRetries checks and defaults the resubmission policy.
func (c *Config) validateRetries() error {
	if c.RetryBudgetMin == 0 {
		c.RetryBudgetMin = DefaultRetryBudgetMin
	}
	p, err := client.RetryPolicy{
		Base: c.RetryBase, Max: c.RetryMax, Budget: c.RetryBudget, BudgetWindow: c.RetryWindow, BudgetMin: c.RetryBudgetMin,
	}.WithDefaults()
	if err != nil {
		return fmt.Errorf("%w (--retry-base, --retry-max, --retry-budget, --retry-window)", err)
	}
	c.RetryBase, c.RetryMax, c.RetryBudget, c.RetryWindow = p.Base, p.Max, p.Budget, p.BudgetWindow
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = time.Second
	}
	return nil
}

func (c *Config) rate() float64 {
	if c.Trace != nil {
		if span := c.Trace.SpanS(); span > 0 {
			return float64(len(c.Trace.Jobs)-1) / span
		}
		return 0
	}
	if c.Rate > 0 {
		return c.Rate
	}
	return workload.Spec{Load: c.Load, Slots: c.Slots, TasksPerJob: c.Tasks, TaskDuration: c.TaskDuration}.JobsPerSecond()
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (r *runner) run(parent context.Context) Summary {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	start := time.Now()
	r.mu.Lock()
	r.start = start
	r.mu.Unlock()
	r.sum.StartedAt = ts(start)
	deadline := time.NewTimer(r.cfg.Deadline)
	defer deadline.Stop()

	redoCtx, stopRedo := context.WithCancel(ctx)
	redoDone := make(chan struct{})
	go func() {
		defer close(redoDone)
		r.resubmitter(redoCtx)
	}()
	progDone := make(chan struct{})
	progStop := make(chan struct{})
	go func() {
		defer close(progDone)
		r.progress(start, progStop)
	}()

	// Arrivals.
	rate := r.cfg.rate()
	var arrivals *workload.Arrivals
	if r.cfg.Poisson && r.cfg.Trace == nil {
		arrivals, _ = workload.NewArrivals(mrand.New(mrand.NewPCG(r.cfg.Seed, r.cfg.Seed+1)), rate)
	}
	var gap time.Duration
	if r.cfg.Trace == nil {
		gap = time.Duration(float64(time.Second) / rate)
	}
	next := start
	stopped := false
	for i := 0; i < r.cfg.Jobs && !stopped; i++ {
		if r.cfg.Trace != nil {
			next = start.Add(r.jobs[i].arrival)
		} else if i > 0 {
			if arrivals != nil {
				next = next.Add(arrivals.Next())
			} else {
				next = next.Add(gap)
			}
		}
		wait := time.NewTimer(time.Until(next))
		select {
		case <-wait.C:
		case <-ctx.Done():
			stopped = true
		case <-deadline.C:
			stopped = true
			r.mu.Lock()
			r.sum.DeadlineHit = true
			r.mu.Unlock()
		}
		wait.Stop()
		if stopped {
			break
		}
		// Wait for a submit slot: the fleet holding calls slows arrivals.
		if r.slots != nil {
			if ok, fired := r.acquireSlot(ctx, deadline.C); !ok {
				if fired {
					r.mu.Lock()
					r.sum.DeadlineHit = true
					r.mu.Unlock()
				}
				stopped = true
				break
			}
		}
		j := r.jobs[i]
		r.mu.Lock()
		j.submitted = time.Now()
		r.sum.JobsSubmitted++
		r.sum.TasksSubmitted += len(j.tasks)
		r.budget.AddFirst(j.submitted, len(j.tasks))
		a := r.newAttempt(j, j.tasks)
		r.mu.Unlock()
		r.submitAsync(ctx, a, 0, nil, r.slots != nil)
	}
	r.mu.Lock()
	r.sum.LastArrivalAt = ts(time.Now())
	hit := r.sum.DeadlineHit
	r.mu.Unlock()

	if !stopped && !hit {
		select {
		case <-r.allDone:
		case <-ctx.Done():
		case <-deadline.C:
			r.mu.Lock()
			r.sum.DeadlineHit = true
			r.mu.Unlock()
		}
	}
	stopRedo()
	<-redoDone
	close(progStop)
	<-progDone
	cancel()
	r.submitWG.Wait()

	r.mu.Lock()
	defer r.mu.Unlock()
	end := time.Now()
	s := r.sum
	s.FinishedAt = ts(end)
	s.ElapsedS = end.Sub(start).Seconds()
	s.JobsCompleted = r.done
	for _, j := range r.jobs {
		for _, t := range j.tasks {
			if t.done {
				s.TasksCompleted++
			}
		}
		if j.left > 0 {
			s.IncompleteJobs = append(s.IncompleteJobs, j.n)
			for _, t := range j.tasks {
				if t.done || len(s.IncompleteTasks) >= maxSamples {
					continue
				}
				desc := fmt.Sprintf("job %d task %d: never submitted", j.n, t.idx)
				if a := t.current; a != nil {
					state := "waiting for a message"
					switch {
					case j.failed:
						state = "job failed by the retry budget"
					case !a.sent:
						state = "resubmission waiting out its backoff"
					case a.gaveUp[strconv.Itoa(t.idx)]:
						state = "reported lost/failed, resubmission pending"
					case a.abandoned:
						state = "abandoned, resubmission pending"
					}
					desc = fmt.Sprintf("%s/%d: %s", a.id, t.idx, state)
				}
				s.IncompleteTasks = append(s.IncompleteTasks, desc)
			}
		}
		if j.affected {
			s.AffectedJobs++
			if j.left == 0 {
				s.AffectedCompleted++
			}
		}
	}
	if len(s.IncompleteJobs) > maxSamples {
		s.IncompleteJobs = s.IncompleteJobs[:maxSamples]
	}
	s.LateOK = slices.Clone(s.LateOK)
	s.FirstLostAt, s.LastLostAt = ts(r.firstLost), ts(r.lastLost)
	s.FirstFailedAt, s.LastFailedAt = ts(r.firstFail), ts(r.lastFail)
	s.LastAffectedDoneAt = ts(r.lastAff)
	s.ResponseMs = stats.Summarize(slices.Clone(r.responses))
	s.SchedDelayMs = stats.Summarize(slices.Clone(r.delays))
	if r.cfg.KeepSamples {
		s.Samples = &Samples{ResponseMs: slices.Clone(r.responses), SchedDelayMs: slices.Clone(r.delays)}
	}
	s.AffectedResponseMs = stats.Summarize(slices.Clone(r.affResp))
	s.RetryDelayMs = stats.Summarize(slices.Clone(r.retryDelays))
	s.Failovers = slices.Clone(s.Failovers)
	s.Marks = slices.Clone(s.Marks)
	s.ResubmittedBy = maps.Clone(s.ResubmittedBy)
	if r.rec != nil {
		res := r.rec.Result(r.cfg.Slots)
		s.Result = &res
		s.Jobs = slices.Clone(r.rec.Jobs())
	}
	s.OK = r.done == len(r.jobs)
	switch {
	case s.OK:
	case r.failedOpen > 0:
		s.Error = fmt.Sprintf("retry budget exhausted: %d jobs failed instead of resubmitted "+
			"(resubmitted tasks may be at most %g%% of the first-attempt tasks of the last %v, or %d if more; "+
			"--retry-budget, --retry-window, --retry-budget-min); %d of %d jobs incomplete",
			r.failedOpen, 100*r.budget.Fraction, r.budget.Window, r.budget.Min, len(r.jobs)-r.done, len(r.jobs))
		if s.DeadlineHit {
			s.Error += fmt.Sprintf("; deadline %v passed", r.cfg.Deadline)
		}
	case s.DeadlineHit:
		s.Error = fmt.Sprintf("deadline %v passed with %d of %d jobs incomplete", r.cfg.Deadline, len(r.jobs)-r.done, len(r.jobs))
	case parent.Err() != nil:
		s.Error = fmt.Sprintf("interrupted with %d of %d jobs incomplete", len(r.jobs)-r.done, len(r.jobs))
	default:
		s.Error = fmt.Sprintf("%d of %d jobs incomplete", len(r.jobs)-r.done, len(r.jobs))
	}
	return s
}

// newAttempt makes an attempt covering tasks of j and makes it their
// current one. Called with r.mu held.
func (r *runner) newAttempt(j *logicalJob, tasks []*logicalTask) *attempt {
	j.attempts++
	a := &attempt{
		id:  fmt.Sprintf("%s-j%d.%d", r.cfg.RunID, j.n, j.attempts),
		job: j, tasks: make(map[string]*logicalTask, len(tasks)), gaveUp: map[string]bool{},
		created: time.Now(),
	}
	for _, t := range tasks {
		a.tasks[strconv.Itoa(t.idx)] = t
		t.current = a
	}
	r.attempts[a.id] = a
	r.sum.AttemptsSubmitted++
	r.sum.AttemptTasks += len(tasks)
	return a
}

// submitAsync submits a after delay, in its own goroutine; wg, if not
// nil, is done when the submit has returned (or the run ended first).
func (r *runner) submitAsync(ctx context.Context, a *attempt, delay time.Duration, wg *sync.WaitGroup, haveSlot bool) {
	r.submitWG.Add(1)
	if wg != nil {
		wg.Add(1)
	}
	go func() {
		defer r.submitWG.Done()
		if wg != nil {
			defer wg.Done()
		}
		if haveSlot {
			defer r.releaseSlot()
		}
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		if !haveSlot && r.slots != nil {
			if ok, _ := r.acquireSlot(ctx, nil); !ok {
				return
			}
			defer r.releaseSlot()
		}
		r.submit(ctx, a)
	}()
}

func (r *runner) submit(ctx context.Context, a *attempt) {
	r.mu.Lock()
	a.sent = true
	job := r.clientJob(a)
	r.mu.Unlock()
	err := r.submitUntilSent(ctx, job)
	if err == nil || ctx.Err() != nil {
		return
	}
	cause := causeSubmitError
	var after time.Duration
	if errors.Is(err, client.ErrInDoubt) {
		// Usually also reported by the failover; abandoning is idempotent,
		// and a job the failover missed is not left hanging.
		cause = causeInDoubt
	} else if sat := (*client.SaturatedError)(nil); errors.As(err, &sat) {
		// A refusal that says when to come back: a saturated fleet's.
		after = sat.RetryAfter
	}
	r.mu.Lock()
	r.sum.SubmitErrors++
	r.mu.Unlock()
	r.log.Warn().Err(err).Str("request", a.id).Str("cause", cause).Msg("submit failed; resubmitting as a new job")
	r.abandon(a, cause, after)
}

// clientJob is attempt a as submitted: its tasks in index order, each
// with its preferences (Config.Prefer). Called with r.mu held.
func (r *runner) clientJob(a *attempt) client.Job {
	job := client.Job{RequestID: a.id, ProbeRatio: r.cfg.ProbeRatio, User: r.cfg.User, Constraints: r.cfg.Constraints}
	if t := r.cfg.Trace; t != nil && t.Estimates {
		job.TaskDuration, _ = scaled(a.job.meanS, t.Scale)
	}
	for id, t := range a.tasks {
		ct := client.Task{ID: id, Message: r.msg}
		if t.msg != nil {
			ct.Message = t.msg
		}
		if len(t.prefer) > 0 {
			ct.Nodes = t.prefer
			ct.DelayThreshold = r.cfg.Prefer.DelayThreshold
			ct.InputBytes = r.cfg.Prefer.InputBytes
		}
		job.Tasks = append(job.Tasks, ct)
	}
	slices.SortFunc(job.Tasks, func(x, y client.Task) int {
		xi, _ := strconv.Atoi(x.ID)
		yi, _ := strconv.Atoi(y.ID)
		return xi - yi
	})
	return job
}

// abandon gives up attempt a whole and queues its tasks that are not done,
// and whose current attempt it is, for resubmission (after at least
// after, if positive).
func (r *runner) abandon(a *attempt, cause string, after time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.abandonLocked(a, cause, after)
}

// abandonLocked is abandon with r.mu held.
func (r *runner) abandonLocked(a *attempt, cause string, after time.Duration) int {
	if a.abandoned {
		return 0
	}
	a.abandoned = true
	if a.job.failed {
		return 0
	}
	n := 0
	for id, t := range a.tasks {
		if t.done || t.current != a || a.gaveUp[id] {
			continue
		}
		r.redo = append(r.redo, resubmit{task: t, cause: cause, after: after})
		n++
	}
	if n > 0 {
		a.job.affected = true
		r.wake()
	}
	return n
}

// wake tells the resubmitter there is work; never blocks.
func (r *runner) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// resubmitter batches resubmissions per job: whatever is queued within a
// couple of milliseconds of the first (a lost node's tasks arrive as
// separate messages) goes out as one new job per original job, after that
// job's backoff delay, if the retry budget allows it; otherwise the job is
// failed.
func (r *runner) resubmitter(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		linger := time.NewTimer(2 * time.Millisecond)
		select {
		case <-ctx.Done():
			linger.Stop()
			return
		case <-linger.C:
		}
		byJob := map[*logicalJob][]resubmit{}
		var order []*logicalJob
		r.mu.Lock()
		batch := r.redo
		r.redo = nil
		failovers := r.pendingFO
		r.pendingFO = nil
		for _, x := range batch {
			t := x.task
			if t.done || t.job.failed || slices.ContainsFunc(byJob[t.job], func(y resubmit) bool { return y.task == t }) {
				continue
			}
			if _, ok := byJob[t.job]; !ok {
				order = append(order, t.job)
			}
			byJob[t.job] = append(byJob[t.job], x)
		}
		now := time.Now()
		type delayed struct {
			a     *attempt
			delay time.Duration
		}
		var atts []delayed
		var longest time.Duration
		for _, j := range order {
			xs := byJob[j]
			if !r.budget.TryRetry(now, len(xs)) {
				r.failByBudgetLocked(j, len(xs), now)
				continue
			}
			var suggested time.Duration
			tasks := make([]*logicalTask, 0, len(xs))
			for _, x := range xs {
				tasks = append(tasks, x.task)
				suggested = max(suggested, x.after)
				r.sum.ResubmittedTasks++
				r.sum.ResubmittedBy[x.cause]++
			}
			j.retries++
			delay := r.backoff.Delay(j.retries, suggested, jitter(r.cfg.Seed, j.n, j.retries))
			r.retryDelays = append(r.retryDelays, stats.Millis(delay))
			if delay > 0 {
				r.sum.RetriesDelayed++
			}
			if suggested > 0 {
				r.sum.RetryAfterHonoured++
			}
			longest = max(longest, delay)
			atts = append(atts, delayed{r.newAttempt(j, tasks), delay})
			r.sum.ResubmittedJobs++
		}
		r.checkAllDoneLocked()
		r.mu.Unlock()
		if len(failovers) == 0 {
			for _, d := range atts {
				r.submitAsync(ctx, d.a, d.delay, nil, false)
			}
			continue
		}
		// A failover's resubmissions: time how long relaunching takes
		// (the paper's "< 15 ms", here plus the backoff), from
		// reconnection until every resubmitted job has been accepted.
		// Timed aside, so that the next batch is not held up.
		var wg sync.WaitGroup
		for _, d := range atts {
			r.submitAsync(ctx, d.a, d.delay, &wg, false)
		}
		r.submitWG.Add(1)
		go func() {
			defer r.submitWG.Done()
			wg.Wait()
			now := time.Now()
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, i := range failovers {
				fo := &r.sum.Failovers[i]
				fo.ResubmittedAt = ts(now)
				fo.RelaunchBackoffMs = stats.Millis(longest)
				if rc, err := time.Parse(time.RFC3339Nano, fo.ReconnectedAt); err == nil {
					fo.RelaunchTookMs = stats.Millis(now.Sub(rc))
				}
			}
		}()
	}
}

// failByBudgetLocked fails job j, whose n tasks the retry budget refused
// to resubmit. Called with r.mu held.
func (r *runner) failByBudgetLocked(j *logicalJob, n int, now time.Time) {
	j.failed = true
	j.affected = true
	r.failedOpen++
	r.sum.JobsFailedByBudget++
	r.sum.TasksFailedByBudget += n
	if !r.sum.RetryBudgetExhausted {
		r.sum.RetryBudgetExhausted = true
		r.sum.RetryBudgetExhaustedAt = ts(now)
		// One line for the first; the summary counts the rest.
		r.log.Error().Int("job", j.n).Int("tasks", n).Int("used", r.budget.Used(now)).Int("limit", r.budget.Limit(now)).
			Msg("retry budget exhausted: failing jobs instead of resubmitting them (--retry-budget, --retry-window, --retry-budget-min)")
	}
}

// checkAllDoneLocked closes allDone once every job has completed or been
// failed by the budget. Called with r.mu held.
func (r *runner) checkAllDoneLocked() {
	if !r.allClosed && r.done+r.failedOpen == len(r.jobs) {
		r.allClosed = true
		close(r.allDone)
	}
}

func (r *runner) onMessage(m client.Message) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.attempts[m.Task.RequestID]
	if !ok {
		r.sum.UnknownReports++
		return
	}
	t, ok := a.tasks[m.Task.TaskID]
	if !ok {
		r.sum.UnknownReports++
		return
	}
	j := t.job
	switch m.Status {
	case client.StatusOK:
		r.sum.OKReports++
		if at, ok := LaunchTime(m.Body); ok {
			r.delays = append(r.delays, stats.Millis(at.Sub(a.created)))
			if r.rec != nil && !t.done {
				r.rec.Task(j.meanS, j.arrival.Seconds(), at.Sub(r.start).Seconds(), t.dur.Seconds())
			}
		}
		late := a.abandoned || a.gaveUp[m.Task.TaskID]
		if late {
			r.sum.LateOKReports++
		}
		if t.done {
			r.sum.DuplicateOKReports++
		}
		if (late || t.done) && len(r.sum.LateOK) < maxSamples {
			r.sum.LateOK = append(r.sum.LateOK, m.Task.RequestID+"/"+m.Task.TaskID+": "+lateWhy(a, m.Task.TaskID, t))
		}
		if !t.done {
			t.done = true
			j.left--
			if j.left == 0 {
				j.doneAt = now
				r.done++
				if j.failed {
					// Failed by the budget, then its lost task finished
					// late after all: the job is complete.
					j.failed = false
					r.failedOpen--
				}
				ms := stats.Millis(now.Sub(j.submitted))
				r.responses = append(r.responses, ms)
				if r.rec != nil {
					r.rec.Job(j.n, j.meanS, j.arrival.Seconds(), now.Sub(r.start).Seconds())
				}
				if j.affected {
					r.affResp = append(r.affResp, ms)
					if now.After(r.lastAff) {
						r.lastAff = now
					}
				}
				r.checkAllDoneLocked()
			}
		}
	default:
		cause := causeFailed
		switch m.Status {
		case client.StatusLost:
			r.sum.LostReports++
			cause = causeLost
			if r.firstLost.IsZero() {
				r.firstLost = now
			}
			r.lastLost = now
		case client.StatusFailed:
			r.sum.FailedReports++
			if r.firstFail.IsZero() {
				r.firstFail = now
			}
			r.lastFail = now
		default:
			r.sum.OtherReports++
		}
		if t.done || t.current != a || a.abandoned || a.gaveUp[m.Task.TaskID] || j.failed {
			r.sum.StaleReports++
			break
		}
		a.gaveUp[m.Task.TaskID] = true
		j.affected = true
		r.redo = append(r.redo, resubmit{task: t, cause: cause})
		r.wake()
		r.log.Info().Str("request", m.Task.RequestID).Str("task", m.Task.TaskID).Int32("status", m.Status).
			Str("body", string(m.Body)).Msg("task not done; resubmitting it as a new job")
	}
}

// lateWhy says why an OK message for task id of attempt a is late or a
// duplicate.
func lateWhy(a *attempt, id string, t *logicalTask) string {
	var why []string
	switch {
	case a.gaveUp[id]:
		why = append(why, "reported lost/failed earlier")
	case a.abandoned:
		why = append(why, "attempt given up (failover or failed submit)")
	}
	if t.done {
		why = append(why, "task already done by another attempt")
	}
	return strings.Join(why, "; ")
}

func (r *runner) onFailover(f client.Failover) {
	rec := FailoverRecord{
		From: f.From, To: f.To, DetectedAt: ts(f.DetectedAt), ReconnectedAt: ts(f.Reconnected),
		ReconnectMs: stats.Millis(f.Reconnected.Sub(f.DetectedAt)), InFlightJobs: len(f.InFlight),
	}
	if f.Err != nil {
		rec.Err = f.Err.Error()
	}
	var atts []*attempt
	r.mu.Lock()
	for _, j := range f.InFlight {
		if a, ok := r.attempts[j.RequestID]; ok {
			atts = append(atts, a)
			for id, t := range a.tasks {
				if !t.done && !a.gaveUp[id] {
					rec.InFlightTasks++
				}
			}
		}
	}
	r.sum.Failovers = append(r.sum.Failovers, rec)
	n := 0
	for _, a := range atts {
		n += r.abandonLocked(a, causeFailover, 0)
	}
	if n > 0 {
		// The resubmitter that sends these jobs times the relaunch.
		r.pendingFO = append(r.pendingFO, len(r.sum.Failovers)-1)
	}
	r.mu.Unlock()
	r.log.Warn().Str("from", f.From).Str("to", f.To).Int("in_flight", len(f.InFlight)).Int("resubmitting_tasks", n).
		Dur("reconnect", f.Reconnected.Sub(f.DetectedAt)).Msg("scheduler failover; resubmitting in-flight jobs")
}

// mark records a snapshot of what is in flight now.
func (r *runner) mark() Mark {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := Mark{At: ts(time.Now()), JobsSubmitted: r.sum.JobsSubmitted, JobsCompleted: r.done, Scheduler: r.fe.Scheduler()}
	for _, j := range r.jobs {
		if j.submitted.IsZero() || j.left == 0 {
			continue
		}
		m.JobsInFlight++
		m.TasksInFlight += j.left
	}
	r.sum.Marks = append(r.sum.Marks, m)
	return m
}

func (r *runner) progress(start time.Time, stop <-chan struct{}) {
	t := time.NewTicker(r.cfg.ProgressEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			r.printProgress(start)
			return
		case <-r.cfg.Marks:
			m := r.mark()
			if r.cfg.Progress != nil {
				fmt.Fprintf(r.cfg.Progress, "mark at=%s jobs_in_flight=%d tasks_in_flight=%d submitted=%d completed=%d scheduler=%s\n",
					m.At, m.JobsInFlight, m.TasksInFlight, m.JobsSubmitted, m.JobsCompleted, m.Scheduler)
			}
		case <-t.C:
			r.printProgress(start)
		}
	}
}

func (r *runner) printProgress(start time.Time) {
	if r.cfg.Progress == nil {
		return
	}
	r.mu.Lock()
	s := r.sum
	done := r.done
	inFlight := s.JobsSubmitted - done
	r.mu.Unlock()
	fmt.Fprintf(r.cfg.Progress, "progress t=%.1fs submitted=%d completed=%d in_flight=%d lost=%d failed=%d resubmitted=%d failovers=%d scheduler=%s retries_delayed=%d failed_by_budget=%d\n",
		time.Since(start).Seconds(), s.JobsSubmitted, done, inFlight, s.LostReports, s.FailedReports,
		s.ResubmittedJobs, len(s.Failovers), r.fe.Scheduler(), s.RetriesDelayed, s.JobsFailedByBudget)
}
