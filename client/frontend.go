package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Frontend defaults.
const (
	DefaultFrontendListen = ":50201"
	// DefaultTimeout is the failure-detection timeout for scheduler calls,
	// the paper's 100 ms.
	DefaultTimeout = 100 * time.Millisecond
	// DefaultHeartbeat is how often an idle frontend checks its scheduler.
	DefaultHeartbeat = 100 * time.Millisecond
	// DefaultSubmitTimeout bounds a submitJob call once sent: above the
	// scheduler's default longest hold on a saturated fleet (30 s), so
	// that a held call is answered, not taken for a failure.
	DefaultSubmitTimeout = 60 * time.Second
)

// ErrInDoubt wraps a submit whose scheduler failed after the job was sent:
// the job may or may not have been scheduled. It is also reported through
// OnFailover, so the application can decide whether to resubmit it.
var ErrInDoubt = errors.New("scheduler failed after the job was sent")

// ErrNoScheduler means no configured scheduler answered; the error that
// wraps it is an *UnreachableError.
var ErrNoScheduler = errors.New("no scheduler answered")

// Failover tells the application that the frontend moved to another
// scheduler. InFlight lists the jobs submitted through the failed
// scheduler whose tasks had not all reported back: the application decides
// whether to resubmit them (as new jobs), ignore them, or check them.
type Failover struct {
	From, To string
	InFlight []Job
	Err      error
	// DetectedAt is when the failure was detected; Reconnected when a new
	// scheduler accepted the registration.
	DetectedAt, Reconnected time.Time
}

// FrontendConfig configures a Frontend.
type FrontendConfig struct {
	App string
	// Schedulers are SchedulerService addresses, tried in order.
	Schedulers []string
	// Listen is where the FrontendService listens; AdvertiseHost replaces
	// a wildcard host in the address given to schedulers (default
	// 127.0.0.1).
	Listen        string
	AdvertiseHost string
	// Timeout bounds connecting to and calling a scheduler, except for
	// the answer to a submitted job; past it the scheduler is taken as
	// failed. Default 100 ms.
	Timeout time.Duration
	// SubmitTimeout bounds waiting for the answer to submitJob, which a
	// scheduler holds while its node monitors are full (connecting is
	// still bounded by Timeout, and heartbeats keep detecting a dead
	// scheduler within Timeout). Keep it above the schedulers'
	// --max-hold. Default DefaultSubmitTimeout.
	SubmitTimeout time.Duration
	// Heartbeat is how often the frontend sends an empty job, the
	// protocol's liveness check, so that a failure is noticed while idle.
	// Default 100 ms; negative disables it.
	Heartbeat time.Duration
	// OnMessage receives every task message. Required. It is called on the
	// RPC goroutine, so it should be quick.
	OnMessage func(Message)
	// OnFailover, if set, is called after each failover.
	OnFailover func(Failover)
	// Retry, if set, makes Submit submit a job again, with backoff,
	// jitter and a retry budget, while the fleet is saturated or no
	// scheduler answers (see RetryPolicy). Nil: Submit tries once.
	Retry *RetryPolicy
	RPC   RPCConfig
	Log   zerolog.Logger
}

// Frontend submits jobs for one app. A job is in flight from Submit until
// every one of its tasks has had at least one message, or Forget is called.
// Safe for concurrent use.
type Frontend struct {
	cfg  FrontendConfig
	addr string
	srv  *rpc.Server
	pool *rpc.Pool[*sparrowrpc.SchedulerServiceClient]
	// submits carries submitJob calls with jobs: same connect timeout
	// as pool, a read timeout of SubmitTimeout, so that a held call is
	// not a failure; heartbeats and registration stay on pool.
	submits *rpc.Pool[*sparrowrpc.SchedulerServiceClient]
	log     zerolog.Logger
	stop    chan struct{}
	done    sync.WaitGroup
	prefix  string

	mu       sync.Mutex
	current  int // index into cfg.Schedulers
	nextID   uint64
	inFlight map[string]*jobState
	// failing is non-nil while a failover is under way; it is closed when
	// it ends, so concurrent callers that saw the same failure wait for it
	// rather than each failing over.
	failing chan struct{}
	// draining holds the schedulers the frontend moved off while they
	// drained. The jobs they accepted are still theirs to finish; the
	// heartbeat pings each while it has jobs in flight and, once it stops
	// answering, reports those jobs as a failover would (watchDraining).
	draining map[string]bool

	retry *retrier // nil: no resubmission
}

type jobState struct {
	job       Job
	scheduler string
	pending   map[string]bool
}

// NewFrontend starts the FrontendService and registers with the first
// scheduler that answers.
func NewFrontend(ctx context.Context, cfg FrontendConfig) (*Frontend, error) {
	if cfg.App == "" {
		return nil, fmt.Errorf("frontend: missing app")
	}
	if len(cfg.Schedulers) == 0 {
		return nil, fmt.Errorf("frontend: no scheduler addresses")
	}
	if cfg.OnMessage == nil {
		return nil, fmt.Errorf("frontend: OnMessage is required")
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultFrontendListen
	}
	if cfg.AdvertiseHost == "" {
		cfg.AdvertiseHost = "127.0.0.1"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.SubmitTimeout <= 0 {
		cfg.SubmitTimeout = DefaultSubmitTimeout
	}
	var retry *retrier
	if cfg.Retry != nil {
		var err error
		if retry, err = newRetrier(*cfg.Retry); err != nil {
			return nil, fmt.Errorf("frontend: %w", err)
		}
	}
	callCfg := cfg.RPC.internal()
	callCfg.ConnectTimeout, callCfg.CallTimeout = cfg.Timeout, cfg.Timeout
	submitCfg := callCfg
	submitCfg.CallTimeout = max(cfg.SubmitTimeout, cfg.Timeout)
	srv, err := rpc.Listen(cfg.Listen, cfg.RPC.internal(), cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("frontend: %w", err)
	}
	var b [6]byte
	rand.Read(b[:])
	f := &Frontend{
		cfg:      cfg,
		addr:     rpc.Advertised(srv.Addr(), cfg.AdvertiseHost),
		srv:      srv,
		pool:     rpc.NewPool(callCfg, sparrowrpc.NewSchedulerServiceClient),
		submits:  rpc.NewPool(submitCfg, sparrowrpc.NewSchedulerServiceClient),
		log:      cfg.Log.With().Str("component", "frontend").Str("app", cfg.App).Logger(),
		stop:     make(chan struct{}),
		prefix:   hex.EncodeToString(b[:]),
		inFlight: make(map[string]*jobState),
		draining: make(map[string]bool),
		retry:    retry,
	}
	go srv.Serve(sparrowrpc.NewFrontendServiceProcessor((*frontendHandler)(f)))
	if _, err := f.connect(ctx, 0); err != nil {
		srv.Close()
		return nil, err
	}
	if cfg.Heartbeat > 0 {
		f.done.Add(1)
		go f.heartbeat()
	}
	return f, nil
}

// Addr returns the FrontendService address given to schedulers.
func (f *Frontend) Addr() string { return f.addr }

// Scheduler returns the scheduler the frontend currently uses.
func (f *Frontend) Scheduler() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg.Schedulers[f.current]
}

// connect registers with the first scheduler, starting at index start and
// wrapping around, that answers. It returns that scheduler's index.
func (f *Frontend) connect(ctx context.Context, start int) (int, error) {
	var errs []error
	n := len(f.cfg.Schedulers)
	for k := 0; k < n; k++ {
		i := (start + k) % n
		addr := f.cfg.Schedulers[i]
		err := f.pool.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			ok, err := c.RegisterFrontend(ctx, f.cfg.App, f.addr)
			if err == nil && !ok {
				err = fmt.Errorf("scheduler refused registration")
			}
			return err
		})
		if err == nil {
			f.mu.Lock()
			f.current = i
			f.mu.Unlock()
			f.log.Info().Str("scheduler", addr).Msg("registered with scheduler")
			return i, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return 0, &UnreachableError{Schedulers: f.cfg.Schedulers, Err: errors.Join(errs...)}
}

// Submit sends job to the current scheduler and returns its request id.
// If the scheduler cannot be reached the frontend fails over and submits
// to the next one. If it fails after the job was sent, Submit fails over
// and returns ErrInDoubt; the job is then reported in the Failover's
// InFlight list along with the others. A refused job returns a typed
// error: *SaturatedError (with the scheduler's suggested RetryAfter),
// *UnknownAppError, *UnplaceableError or *InvalidRequestError; no
// scheduler answering returns *UnreachableError. A scheduler may hold the
// call while its node monitors are full: Submit then waits, up to
// SubmitTimeout, and a slow answer is not a failover. A scheduler that
// is shutting down refuses new jobs (SaturatedError.SchedulerDraining):
// Submit then moves to the next scheduler and submits there, without
// reporting the draining scheduler's jobs, which it still finishes. With
// FrontendConfig.Retry, a saturated or unreachable fleet's refusal is
// retried under the same request id before Submit returns.
func (f *Frontend) Submit(ctx context.Context, job Job) (string, error) {
	if len(job.Tasks) == 0 {
		return "", &InvalidRequestError{Refusal{RequestID: job.RequestID, Message: "job has no tasks"}}
	}
	f.mu.Lock()
	if job.RequestID == "" {
		f.nextID++
		job.RequestID = fmt.Sprintf("%s-%s-%d", f.cfg.App, f.prefix, f.nextID)
	}
	if _, dup := f.inFlight[job.RequestID]; dup {
		f.mu.Unlock()
		return "", &InvalidRequestError{Refusal{RequestID: job.RequestID, Message: "request id is already in flight"}}
	}
	f.mu.Unlock()
	req := job.wire(f.cfg.App)
	submit := func() error { return f.submitOnce(ctx, job, req) }
	var err error
	if f.retry != nil {
		err = f.retry.do(ctx, len(job.Tasks), submit)
	} else {
		err = submit()
	}
	if err != nil {
		return "", err
	}
	return job.RequestID, nil
}

// submitOnce sends req, job on the wire, failing over while schedulers
// cannot be reached.
func (f *Frontend) submitOnce(ctx context.Context, job Job, req *sparrowrpc.TSchedulingRequest) error {
	for attempt := 0; attempt < len(f.cfg.Schedulers); attempt++ {
		sched := f.Scheduler()
		// Track before sending: messages can arrive before submitJob returns.
		f.track(job, sched)
		err := f.submits.Call(ctx, sched, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.SubmitJob(ctx, req)
		})
		if err == nil {
			return nil
		}
		if errors.Is(err, rpc.ErrBusy) {
			// Every connection to the scheduler is busy with our own calls:
			// we are overloading it, which is not a failure to fail over for.
			f.Forget(job.RequestID)
			return fmt.Errorf("submit %s: %w", job.RequestID, err)
		}
		var refused *sparrowrpc.IncompleteRequestException
		if errors.As(err, &refused) {
			f.Forget(job.RequestID)
			rerr := refusalError(sched, job.RequestID, f.cfg.App, refused)
			var sat *SaturatedError
			if errors.As(rerr, &sat) && sat.SchedulerDraining && attempt+1 < len(f.cfg.Schedulers) {
				// Nothing of the job was accepted; the jobs the draining
				// scheduler did accept stay its to finish.
				if merr := f.moveOff(ctx, sched, rerr, false); merr == nil {
					continue
				}
			}
			return rerr
		}
		var dial *rpc.DialError
		if errors.As(err, &dial) {
			f.Forget(job.RequestID)
			if ferr := f.failover(ctx, sched, err); ferr != nil {
				var un *UnreachableError
				if errors.As(ferr, &un) {
					un.RequestID = job.RequestID
				}
				return ferr
			}
			continue
		}
		// Sent, then failed: the failover reports this job with the rest.
		f.failover(ctx, sched, err)
		return fmt.Errorf("submit %s to %s: %w: %w", job.RequestID, sched, ErrInDoubt, err)
	}
	return &UnreachableError{RequestID: job.RequestID, Schedulers: f.cfg.Schedulers}
}

func (f *Frontend) track(job Job, sched string) {
	st := &jobState{job: job, scheduler: sched, pending: make(map[string]bool, len(job.Tasks))}
	for _, t := range job.Tasks {
		st.pending[t.ID] = true
	}
	f.mu.Lock()
	f.inFlight[job.RequestID] = st
	f.mu.Unlock()
}

// Forget stops tracking a job, e.g. once the application knows it is done.
func (f *Frontend) Forget(requestID string) {
	f.mu.Lock()
	delete(f.inFlight, requestID)
	f.mu.Unlock()
}

// InFlight returns the request ids of the jobs still in flight.
func (f *Frontend) InFlight() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.inFlight))
	for id := range f.inFlight {
		out = append(out, id)
	}
	return out
}

// failover moves off failed, unless another goroutine already did or is
// doing so, and reports the jobs in flight on it.
func (f *Frontend) failover(ctx context.Context, failed string, cause error) error {
	return f.moveOff(ctx, failed, cause, true)
}

// moveOff makes the next scheduler that accepts the frontend's
// registration the current one, unless another goroutine already moved
// off from or is moving off from `from`. With failed, `from` is taken as
// dead: its jobs in flight are reported to OnFailover for resubmission.
// Without, `from` is draining and still finishes the jobs it accepted;
// nothing is reported.
func (f *Frontend) moveOff(ctx context.Context, from string, cause error, failed bool) error {
	detected := time.Now()
	f.mu.Lock()
	if f.failing != nil {
		wait := f.failing
		f.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	if f.cfg.Schedulers[f.current] != from {
		f.mu.Unlock()
		return nil
	}
	f.failing = make(chan struct{})
	start := (f.current + 1) % len(f.cfg.Schedulers)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		close(f.failing)
		f.failing = nil
		f.mu.Unlock()
	}()
	if !failed {
		f.log.Info().Err(cause).Str("scheduler", from).Msg("scheduler draining; moving to the next")
		idx, err := f.connect(ctx, start)
		if err == nil && f.cfg.Schedulers[idx] != from {
			f.mu.Lock()
			f.draining[from] = true
			f.mu.Unlock()
		}
		return err
	}
	f.log.Warn().Err(cause).Str("scheduler", from).Msg("scheduler failed; failing over")
	idx, err := f.connect(ctx, start)
	if err != nil {
		return err
	}
	f.reportGone(from, f.cfg.Schedulers[idx], cause, detected)
	return nil
}

// reportGone tells OnFailover that scheduler from is gone, with the jobs
// still in flight through it, which stop being tracked; to is the
// scheduler the frontend uses now.
func (f *Frontend) reportGone(from, to string, cause error, detected time.Time) {
	f.pool.Forget(from)
	f.submits.Forget(from)
	ev := Failover{From: from, To: to, Err: cause, DetectedAt: detected, Reconnected: time.Now()}
	f.mu.Lock()
	delete(f.draining, from)
	for id, st := range f.inFlight {
		if st.scheduler == from {
			ev.InFlight = append(ev.InFlight, st.job)
			delete(f.inFlight, id)
		}
	}
	f.mu.Unlock()
	if f.cfg.OnFailover != nil {
		f.cfg.OnFailover(ev)
	}
}

// watchDraining pings each scheduler the frontend moved off while it
// drained. One with no job in flight any more is forgotten; one that no
// longer answers has left before finishing its jobs (its drain timed out),
// and they are reported as a failover reports a failed scheduler's.
func (f *Frontend) watchDraining(ping func(sched string) error) {
	f.mu.Lock()
	var watch []string
	for sched := range f.draining {
		busy := false
		for _, st := range f.inFlight {
			if st.scheduler == sched {
				busy = true
				break
			}
		}
		if busy {
			watch = append(watch, sched)
		} else {
			delete(f.draining, sched)
		}
	}
	f.mu.Unlock()
	for _, sched := range watch {
		if err := ping(sched); err != nil && !errors.Is(err, rpc.ErrBusy) {
			f.log.Warn().Err(err).Str("scheduler", sched).Msg("a draining scheduler left with jobs in flight")
			f.reportGone(sched, f.Scheduler(), err, time.Now())
		}
	}
}

func (f *Frontend) heartbeat() {
	defer f.done.Done()
	t := time.NewTicker(f.cfg.Heartbeat)
	defer t.Stop()
	ping := &sparrowrpc.TSchedulingRequest{App: f.cfg.App, Tasks: []*sparrowrpc.TTaskSpec{}}
	call := func(sched string) error {
		return f.pool.Call(context.Background(), sched, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.SubmitJob(ctx, ping)
		})
	}
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		sched := f.Scheduler()
		if err := call(sched); err != nil && !errors.Is(err, rpc.ErrBusy) {
			if ferr := f.failover(context.Background(), sched, err); ferr != nil {
				f.log.Error().Err(ferr).Msg("no scheduler available; will keep trying")
			}
		}
		f.watchDraining(call)
	}
}

// Close stops the heartbeat and the FrontendService.
func (f *Frontend) Close() error {
	close(f.stop)
	f.done.Wait()
	f.pool.Close()
	f.submits.Close()
	return f.srv.Close()
}

// frontendHandler serves FrontendService for a Frontend.
type frontendHandler Frontend

func (h *frontendHandler) FrontendMessage(ctx context.Context, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	f := (*Frontend)(h)
	msg := Message{Task: refFromWire(taskID), Status: status, Body: message}
	f.mu.Lock()
	if st, ok := f.inFlight[msg.Task.RequestID]; ok {
		delete(st.pending, msg.Task.TaskID)
		if len(st.pending) == 0 {
			delete(f.inFlight, msg.Task.RequestID)
		}
	}
	f.mu.Unlock()
	f.cfg.OnMessage(msg)
	return nil
}
