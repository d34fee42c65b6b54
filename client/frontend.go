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

// maxDrainingSwitches bounds how many other connections a submit behind a
// single scheduler address tries after draining schedulers' refusals.
const maxDrainingSwitches = 4

// ErrInDoubt wraps a submit whose scheduler failed after the job was sent:
// the job may or may not have been scheduled. It is also reported through
// OnFailover, so the application can decide whether to resubmit it.
var ErrInDoubt = errors.New("scheduler failed after the job was sent")

// ErrNoScheduler means no configured scheduler answered; the error that
// wraps it is an *UnreachableError.
var ErrNoScheduler = errors.New("no scheduler answered")

// Failover tells the application that a scheduler it submitted jobs
// through failed. From is that scheduler's configured address and To the
// one the frontend submits to now: another one when the current
// scheduler failed and the frontend moved on, the same one behind a load
// balancer (a new connection reaches another scheduler), or the current
// one when an earlier scheduler the frontend had moved off failed later.
// InFlight lists the jobs submitted through the failed scheduler whose
// tasks had not all reported back (see Frontend for how the frontend
// tells, per connection, which those are): the application decides
// whether to resubmit them (as new jobs), ignore them, or check them.
type Failover struct {
	From, To string
	InFlight []Job
	Err      error
	// DetectedAt is when the failure was detected; Reconnected when a
	// scheduler accepted the registration again, or when the jobs were
	// reported if the frontend did not need to move.
	DetectedAt, Reconnected time.Time
}

// FrontendConfig configures a Frontend.
type FrontendConfig struct {
	App string
	// Schedulers are SchedulerService addresses, tried in order. One
	// may be a load balancer (a Kubernetes Service, IPVS, any L4
	// balancer) in front of many schedulers: see Frontend.
	Schedulers []string
	// Listen is where the FrontendService listens. AdvertiseHost replaces
	// a wildcard host in the address given to schedulers, which call it
	// back with task messages. "auto" (AdvertiseAuto), and the default
	// when it is empty, is 127.0.0.1 when every scheduler address is on
	// loopback, else the local address of the interface that routes to
	// the first scheduler not on loopback (AutoAdvertiseHost); so a
	// frontend of remote schedulers never advertises 127.0.0.1 unless
	// told to. Set it when schedulers reach this machine by another
	// address than the one it routes from (NAT, a pod's Service).
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
	// protocol's liveness check, to the current scheduler, so that a
	// failure is noticed while idle, and to each connection with jobs in
	// flight that has not answered for as long (see Frontend). Default
	// 100 ms; negative disables both.
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
//
// Every job names the frontend's address (TSchedulingRequest's
// frontendAddress), so the scheduler that runs it reports its task
// messages here even if the app never registered with that scheduler.
// The frontend also registers on every new connection before its first
// call, for schedulers that ignore that field (an older release, or
// during a rolling update from one).
//
// Each connection to a scheduler address is a session (sessions.go): a
// job is in flight on the session its submitJob was sent on, and each
// session with jobs in flight is checked on its own connection. Behind a
// load balancer, where every new connection may reach another scheduler,
// that is what tells which jobs a failed scheduler took with it: a
// session that fails its check, or whose connection closed, is reported
// with its jobs through OnFailover; the other sessions' jobs stay in
// flight. When the current scheduler address fails (its heartbeat, a
// submit, or one of its sessions), the frontend registers with the next
// address that answers (the same one, through a new connection, when only
// one is configured), and reports in one Failover the jobs of that
// address not on a session that answers a check then: those on sessions
// gone, failing, or busy with another call, and those still being
// submitted.
type Frontend struct {
	cfg  FrontendConfig
	addr string
	srv  *rpc.Server
	// conns carries every call to schedulers; each connection is a
	// session, registered when it opens. Calls are bounded by Timeout,
	// the answer to a submitted job by SubmitTimeout, so that a held
	// call is not a failure.
	conns  *rpc.Pool[*sparrowrpc.SchedulerServiceClient]
	log    zerolog.Logger
	stop   chan struct{}
	done   sync.WaitGroup
	prefix string
	ping   *sparrowrpc.TSchedulingRequest // the empty job

	mu       sync.Mutex
	current  int // index into cfg.Schedulers
	nextID   uint64
	inFlight map[string]*jobState
	sessions sessionBook // the sessions with jobs in flight
	// failing is non-nil while a failover is under way; it is closed when
	// it ends, so concurrent callers that saw the same failure wait for it
	// rather than each failing over.
	failing chan struct{}

	retry *retrier // nil: no resubmission
}

type jobState struct {
	job       Job
	scheduler string
	session   rpc.ConnID // the connection its submitJob was sent on; 0 before
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
	callCfg := cfg.RPC.dialing(&cfg.Log)
	callCfg.ConnectTimeout, callCfg.CallTimeout = cfg.Timeout, cfg.Timeout
	cfg.SubmitTimeout = max(cfg.SubmitTimeout, cfg.Timeout)
	srv, err := rpc.Listen(cfg.Listen, cfg.RPC.internal(), cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("frontend: %w", err)
	}
	addr, err := advertisedAddr(ctx, srv.Addr(), cfg.AdvertiseHost, cfg.Schedulers)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("frontend: %w", err)
	}
	var b [6]byte
	rand.Read(b[:])
	f := &Frontend{
		cfg:      cfg,
		addr:     addr,
		srv:      srv,
		conns:    rpc.NewPool(callCfg, sparrowrpc.NewSchedulerServiceClient),
		log:      cfg.Log.With().Str("component", "frontend").Str("app", cfg.App).Logger(),
		stop:     make(chan struct{}),
		prefix:   hex.EncodeToString(b[:]),
		ping:     &sparrowrpc.TSchedulingRequest{App: cfg.App, Tasks: []*sparrowrpc.TTaskSpec{}},
		inFlight: make(map[string]*jobState),
		sessions: newSessionBook(),
		retry:    retry,
	}
	f.conns.OnOpen(f.register)
	go srv.Serve(sparrowrpc.NewExtendedFrontendServiceProcessor((*frontendHandler)(f)))
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

// register registers the frontend on c, a connection to scheduler
// address sched.
func (f *Frontend) register(ctx context.Context, sched string, c *sparrowrpc.SchedulerServiceClient) error {
	ok, err := c.RegisterFrontend(ctx, f.cfg.App, f.addr)
	if err == nil && !ok {
		err = fmt.Errorf("scheduler %s refused the registration", sched)
	}
	return err
}

// connect registers with the first scheduler, starting at index start and
// wrapping around, that answers. It returns that scheduler's index.
func (f *Frontend) connect(ctx context.Context, start int) (int, error) {
	var errs []error
	n := len(f.cfg.Schedulers)
	for k := 0; k < n; k++ {
		i := (start + k) % n
		addr := f.cfg.Schedulers[i]
		err := f.conns.CallWith(ctx, addr, rpc.CallOptions{}, func(ctx context.Context, id rpc.ConnID, c *sparrowrpc.SchedulerServiceClient) error {
			err := f.register(ctx, addr, c)
			if err == nil {
				f.answered(id)
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
	req.FrontendAddress = &f.addr
	req.FrontendFeatures = &frontendFeatures
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
//
// Each scheduler is tried once, and after a failover one more attempt
// is made, so that a single balanced address gets a second connection.
// Behind a single address, a draining scheduler's refusal is tried again
// on other connections, up to maxDrainingSwitches times.
func (f *Frontend) submitOnce(ctx context.Context, job Job, req *sparrowrpc.TSchedulingRequest) error {
	switches := 0
	for attempt := 0; attempt <= len(f.cfg.Schedulers); attempt++ {
		sched := f.Scheduler()
		// Track before sending: messages can arrive before submitJob returns.
		st := f.track(job, sched)
		opts := rpc.CallOptions{Timeout: f.cfg.SubmitTimeout}
		err := f.conns.CallWith(ctx, sched, opts, func(ctx context.Context, id rpc.ConnID, c *sparrowrpc.SchedulerServiceClient) error {
			f.sentOn(st, id)
			err := c.SubmitJob(ctx, req)
			if err == nil {
				f.answered(id)
			}
			return err
		})
		if err == nil {
			return nil
		}
		if errors.Is(err, rpc.ErrBusy) {
			// Every connection to the scheduler is busy with our own calls:
			// we are overloading it, which is not a failure to fail over for.
			f.untrack(st)
			return fmt.Errorf("submit %s: %w", job.RequestID, err)
		}
		var refused *sparrowrpc.IncompleteRequestException
		if errors.As(err, &refused) {
			f.untrack(st)
			rerr := refusalError(sched, job.RequestID, f.cfg.App, refused)
			var sat *SaturatedError
			if errors.As(rerr, &sat) && sat.SchedulerDraining {
				// Nothing of the job was accepted; the jobs the draining
				// scheduler did accept stay its to finish, checked on
				// their connection, which carries nothing else from now
				// on: behind a load balancer, the next call goes on a
				// connection to another scheduler.
				f.conns.Park(sched, st.session)
				switch {
				case len(f.cfg.Schedulers) == 1 && switches < maxDrainingSwitches:
					switches++
					attempt-- // a switch of connection is not an attempt
					continue
				case attempt+1 < len(f.cfg.Schedulers):
					if merr := f.moveOff(ctx, sched, rerr, false); merr == nil {
						continue
					}
				}
			}
			return rerr
		}
		var dial *rpc.DialError
		if errors.As(err, &dial) {
			f.untrack(st)
			if ferr := f.failover(ctx, sched, err); ferr != nil {
				var un *UnreachableError
				if errors.As(ferr, &un) {
					un.RequestID = job.RequestID
				}
				return ferr
			}
			continue
		}
		// Sent, then failed: the failover reports this job with the rest,
		// or, if it had ended before this job was tracked, alone.
		detected := time.Now()
		if f.failover(ctx, sched, err) == nil {
			f.reportIfTracked(st, err, detected)
		}
		return fmt.Errorf("submit %s to %s: %w: %w", job.RequestID, sched, ErrInDoubt, err)
	}
	return &UnreachableError{RequestID: job.RequestID, Schedulers: f.cfg.Schedulers}
}

func (f *Frontend) track(job Job, sched string) *jobState {
	st := &jobState{job: job, scheduler: sched, pending: make(map[string]bool, len(job.Tasks))}
	for _, t := range job.Tasks {
		st.pending[t.ID] = true
	}
	f.mu.Lock()
	if old, ok := f.inFlight[job.RequestID]; ok {
		f.dropLocked(job.RequestID, old)
	}
	f.inFlight[job.RequestID] = st
	f.mu.Unlock()
	return st
}

// sentOn records st's submitJob going out on session id, unless st is no
// longer tracked (reported, or already done).
func (f *Frontend) sentOn(st *jobState, id rpc.ConnID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inFlight[st.job.RequestID] != st {
		return
	}
	if st.session != 0 {
		f.sessions.detach(st.session)
	}
	st.session = id
	f.sessions.attach(id, st.scheduler, time.Now())
}

// answered records a call session id answered.
func (f *Frontend) answered(id rpc.ConnID) {
	f.mu.Lock()
	f.sessions.answered(id, time.Now())
	f.mu.Unlock()
}

// untrack stops tracking st, if it still is.
func (f *Frontend) untrack(st *jobState) {
	f.mu.Lock()
	if f.inFlight[st.job.RequestID] == st {
		f.dropLocked(st.job.RequestID, st)
	}
	f.mu.Unlock()
}

// dropLocked stops tracking job id, st. Called with mu held.
func (f *Frontend) dropLocked(id string, st *jobState) {
	delete(f.inFlight, id)
	if st.session != 0 {
		f.sessions.detach(st.session)
	}
}

// Forget stops tracking a job, e.g. once the application knows it is done.
func (f *Frontend) Forget(requestID string) {
	f.mu.Lock()
	if st, ok := f.inFlight[requestID]; ok {
		f.dropLocked(requestID, st)
	}
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
		// The draining scheduler's jobs stay in flight on their sessions,
		// checked as every session is until they are done.
		f.log.Info().Err(cause).Str("scheduler", from).Msg("scheduler draining; moving to the next")
		_, err := f.connect(ctx, start)
		return err
	}
	f.log.Warn().Err(cause).Str("scheduler", from).Msg("scheduler failed; failing over")
	idx, err := f.connect(ctx, start)
	if err != nil {
		return err
	}
	f.reportFailed(from, f.cfg.Schedulers[idx], cause, detected)
	return nil
}

// reportFailed tells OnFailover that scheduler address from failed, with
// its jobs in flight that are not on a session answering a check now;
// those stop being tracked. to is the scheduler the frontend uses now.
func (f *Frontend) reportFailed(from, to string, cause error, detected time.Time) {
	ev := Failover{From: from, To: to, Err: cause, DetectedAt: detected, Reconnected: time.Now()}
	f.mu.Lock()
	refs := f.sessions.on(from)
	f.mu.Unlock()
	alive := make(map[rpc.ConnID]bool, len(refs))
	for ref, err := range f.check(refs) {
		alive[ref.id] = err == nil
	}
	f.mu.Lock()
	for id, st := range f.inFlight {
		if st.scheduler == from && !alive[st.session] {
			ev.InFlight = append(ev.InFlight, st.job)
			f.dropLocked(id, st)
		}
	}
	f.mu.Unlock()
	if f.cfg.OnFailover != nil {
		f.cfg.OnFailover(ev)
	}
}

// reportIfTracked reports st alone, failed with cause, if it is still
// tracked.
func (f *Frontend) reportIfTracked(st *jobState, cause error, detected time.Time) {
	f.mu.Lock()
	if f.inFlight[st.job.RequestID] != st {
		f.mu.Unlock()
		return
	}
	f.dropLocked(st.job.RequestID, st)
	f.mu.Unlock()
	if f.cfg.OnFailover != nil {
		f.cfg.OnFailover(Failover{From: st.scheduler, To: f.Scheduler(), InFlight: []Job{st.job}, Err: cause,
			DetectedAt: detected, Reconnected: time.Now()})
	}
}

// check sends the empty job on each session of refs, on its own
// connection, at once, and returns each one's outcome: nil if it
// answered, rpc.ErrConnBusy (wrapped) if it carried another call for
// Timeout, any other error if it failed or its connection is closed.
func (f *Frontend) check(refs []sessionRef) map[sessionRef]error {
	out := make(map[sessionRef]error, len(refs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := f.call(ref.addr, rpc.CallOptions{Conn: ref.id, Timeout: f.cfg.Timeout})
			mu.Lock()
			out[ref] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// call sends the empty job, the protocol's liveness check, to sched with
// opts.
func (f *Frontend) call(sched string, opts rpc.CallOptions) error {
	return f.conns.CallWith(context.Background(), sched, opts, func(ctx context.Context, id rpc.ConnID, c *sparrowrpc.SchedulerServiceClient) error {
		err := c.SubmitJob(ctx, f.ping)
		if err == nil {
			f.answered(id)
		}
		return err
	})
}

// checkSessions checks the sessions due a check (sessionBook.due). A
// failed one of the current scheduler address fails it over (which
// reports its jobs); the jobs of a failed one of another address (one
// the frontend moved off) are reported at once. A session carrying
// another call is checked later.
func (f *Frontend) checkSessions() {
	f.mu.Lock()
	refs := f.sessions.due(time.Now(), f.cfg.Heartbeat)
	f.mu.Unlock()
	if len(refs) == 0 {
		return
	}
	detected := time.Now()
	failed := make(map[string]map[rpc.ConnID]bool)
	causes := make(map[string]error)
	for ref, err := range f.check(refs) {
		if err == nil || errors.Is(err, rpc.ErrConnBusy) {
			continue
		}
		if failed[ref.addr] == nil {
			failed[ref.addr] = make(map[rpc.ConnID]bool)
			causes[ref.addr] = err
		}
		failed[ref.addr][ref.id] = true
	}
	current := f.Scheduler()
	for addr, ids := range failed {
		if addr == current {
			if err := f.failover(context.Background(), addr, causes[addr]); err != nil {
				f.log.Error().Err(err).Msg("no scheduler available; will keep trying")
			}
			continue
		}
		f.log.Warn().Err(causes[addr]).Str("scheduler", addr).Int("sessions", len(ids)).
			Msg("a scheduler the frontend moved off failed with jobs in flight")
		ev := Failover{From: addr, To: current, Err: causes[addr], DetectedAt: detected, Reconnected: time.Now()}
		f.mu.Lock()
		for id, st := range f.inFlight {
			if st.scheduler == addr && ids[st.session] {
				ev.InFlight = append(ev.InFlight, st.job)
				f.dropLocked(id, st)
			}
		}
		f.mu.Unlock()
		if len(ev.InFlight) > 0 && f.cfg.OnFailover != nil {
			f.cfg.OnFailover(ev)
		}
	}
}

func (f *Frontend) heartbeat() {
	defer f.done.Done()
	t := time.NewTicker(f.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		sched := f.Scheduler()
		if err := f.call(sched, rpc.CallOptions{}); err != nil && !errors.Is(err, rpc.ErrBusy) {
			if ferr := f.failover(context.Background(), sched, err); ferr != nil {
				f.log.Error().Err(ferr).Msg("no scheduler available; will keep trying")
			}
		}
		f.checkSessions()
	}
}

// Close stops the heartbeat and the FrontendService.
func (f *Frontend) Close() error {
	close(f.stop)
	f.done.Wait()
	f.conns.Close()
	return f.srv.Close()
}

// frontendHandler serves FrontendService for a Frontend.
type frontendHandler Frontend

// frontendFeatures are the FrontendService extensions a Frontend serves,
// sent with every job (TSchedulingRequest.frontendFeatures). Read-only.
var frontendFeatures = int32(sparrowrpc.FRONTEND_MESSAGES)

func (h *frontendHandler) FrontendMessage(ctx context.Context, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	h.receive(taskID, status, message)
	return nil
}

// FrontendMessages implements FrontendService's extension: the messages
// are handled in order, each as FrontendMessage handles one.
func (h *frontendHandler) FrontendMessages(ctx context.Context, messages []*sparrowrpc.TFrontendMessage) error {
	for _, m := range messages {
		if m != nil {
			h.receive(m.TaskId, m.Status, m.Message)
		}
	}
	return nil
}

// receive hands one message to OnMessage, after forgetting the task's
// job once every task of it has reported.
func (h *frontendHandler) receive(taskID *sparrowrpc.TFullTaskId, status int32, message []byte) {
	f := (*Frontend)(h)
	msg := Message{Task: refFromWire(taskID), Status: status, Body: message}
	f.mu.Lock()
	if st, ok := f.inFlight[msg.Task.RequestID]; ok {
		delete(st.pending, msg.Task.TaskID)
		if len(st.pending) == 0 {
			f.dropLocked(msg.Task.RequestID, st)
		}
	}
	f.mu.Unlock()
	f.cfg.OnMessage(msg)
}
