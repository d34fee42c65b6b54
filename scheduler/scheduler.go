package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// DefaultProbeRatio is d when neither the request nor the config sets it.
const DefaultProbeRatio = 2.0

// DefaultNodeLostGrace is how long a scheduler waits, after gossip
// declares a node monitor dead, before it reports the tasks running there
// lost (Config.NodeLostGrace).
const DefaultNodeLostGrace = time.Second

// DefaultReservationTimeout bounds how long a request's reservations may go
// unanswered before more are placed.
const DefaultReservationTimeout = 30 * time.Second

// maxReprobes bounds how many times one request re-places reservations
// after enqueues fail, so that a request cannot loop over a failing fleet.
const maxReprobes = 8

// Config configures a Scheduler.
type Config struct {
	// Address is this scheduler's advertised SchedulerService "host:port".
	// Node monitors send frontend messages there and name it in task ids.
	Address string
	// ProbeRatio is the default d; 0 means DefaultProbeRatio.
	ProbeRatio float64
	// ConstrainedProbeRatio is the default d for jobs with constraints or
	// placement preferences; 0 means ProbeRatio.
	ConstrainedProbeRatio float64
	// NoCancel disables cancelling leftover reservations once a request's
	// tasks have all launched.
	NoCancel bool
	// NoOffers sends every reservation plain, for a getTask to fetch its
	// task, as original Sparrow does. By default a new job's first
	// reservations each carry a task, for an idle node monitor to launch
	// at once (offer.go, which says what that trades).
	NoOffers bool
	// Seed seeds placement randomness; 0 draws a random seed.
	Seed uint64
	// SteerAfter, when > 0, steers a user's new jobs away from node
	// monitors that have held one of that user's reservations this long
	// without serving any (placement.Steer): under coordinator guidance
	// that gives the user nothing on their machine type, its jobs' tasks
	// would wait there while its own nodes idle. 0 turns it off.
	SteerAfter time.Duration
	// ReservationTimeout is how long a request may wait with unlaunched
	// tasks before it gets extra reservations elsewhere (old ones stay, so
	// no node loses its queue position). 0 means DefaultReservationTimeout;
	// negative disables it.
	ReservationTimeout time.Duration
	// NodeLostGrace is how long the daemon waits, after gossip declares a
	// node monitor dead, before reporting its running tasks lost; a node
	// monitor back by then as the same process (membership.Meta.Boot) was
	// never dead, and its tasks are kept. Its queued reservations are
	// placed elsewhere at once either way. 0 means DefaultNodeLostGrace;
	// negative reports at once.
	NodeLostGrace time.Duration
	// LocalityStale is how long the coordinator's prices guide relaxable
	// tasks after they arrive (locality.go); 0 means DefaultLocalityStale.
	LocalityStale time.Duration
	// LocalityInputBytes is a relaxable task's input size when its
	// request gives none; 0 means DefaultLocalityInputBytes.
	LocalityInputBytes int64
	// MaxHeldJobs bounds the submitJob calls held on a saturated fleet
	// (hold.go); 0 disables holding: submitJob answers once the
	// reservations are on their way, and refused ones are re-placed and
	// at worst reported failed later, as before.
	MaxHeldJobs int
	// MaxHold bounds how long one call is held; 0 means DefaultMaxHold.
	MaxHold time.Duration
	// MaxQueueWait, when > 0, holds a job at submission while the
	// expected queue wait of its best candidates exceeds it
	// (admission.go); 0 disables admission by expected wait.
	MaxQueueWait time.Duration
	// LoadStale is how long a node monitor's load report counts; 0 means
	// DefaultLoadStale.
	LoadStale time.Duration
	// FrontendMaxInflight bounds the messages in flight to one frontend
	// (frontendlink.go); a message past it waits up to the call timeout
	// for a slot and is then dropped and counted. 0 means
	// DefaultFrontendMaxInflight.
	FrontendMaxInflight int
	// FrontendDeadAfter is how long a frontend may stay unreachable
	// before its apps are deregistered; 0 means
	// DefaultFrontendDeadAfter, negative never deregisters.
	FrontendDeadAfter time.Duration
	// RPC bounds the scheduler's outgoing calls.
	RPC rpc.Config
	Log zerolog.Logger
}

// Scheduler implements SchedulerService and GetTaskService. Safe for
// concurrent use: one mutex guards the placement state, and no RPC is made
// while it is held.
type Scheduler struct {
	cfg  Config
	self *sparrowrpc.THostPort
	view NodeView
	log  zerolog.Logger

	nodes  *rpc.Pool[*sparrowrpc.InternalServiceClient]
	fronts *rpc.Pool[*sparrowrpc.FrontendServiceClient]

	mu        sync.Mutex
	rng       *mrand.Rand
	sampler   placement.Sampler
	steer     placement.Steer
	requests  map[string]*request
	frontends map[string]string // app -> FrontendService address
	nextID    uint64
	idPrefix  string
	running   map[string]map[runningTask]int64 // node addr -> its tasks -> the fetch that handed each out (0: none)
	// fetches holds the fetchTask fetches being answered, and those that
	// handed out a task still tracked in running, to answer a node monitor
	// that asks again (fetch.go).
	fetches map[fetchKey]fetched
	tracked int     // entries in running
	lost    lostSet // tasks reported lost
	// noOffer marks node monitors that answered an offer UNKNOWN_METHOD
	// (older versions): they get plain reservations (offer.go).
	noOffer map[string]bool
	// guidedUntil holds, for node monitors that declined an offer because
	// a coordinator guides their queues, when to offer them tasks again.
	guidedUntil map[string]time.Time
	// noOfferQuery marks node monitors that answered offerOutcome
	// UNKNOWN_METHOD: an offer in doubt there is counted launched.
	noOfferQuery map[string]bool
	// offerBoot holds each node monitor's start nonce from its latest
	// answer to an offer or a question about one.
	offerBoot map[string]string
	// doubts holds, by node monitor, the offers whose calls failed after
	// they were sent, until the node monitor says whether it took them
	// (offer.go, resolveOffer).
	doubts map[string]map[offerDoubt]struct{}
	// offerWaitHook, if set, is called (with s.mu held) when a getTask
	// starts waiting for offers' answers; tests use it.
	offerWaitHook func()

	// Relaxation of placement preferences (locality.go).
	now        func() time.Time // the clock; tests replace it
	relaxQ     relaxHeap
	relaxWake  chan struct{}
	prices     locality.Prices
	pricesAt   time.Time
	havePrices bool
	repriceDue bool        // newer prices arrived since the last Relax
	rackIdx    rackIndexes // per app, over the view's current candidates

	hold holdBook // held submitJob calls (hold.go)
	// lastFull is when a node monitor last refused reservations as full.
	lastFull time.Time
	adm      admissionBook // node loads for admission (admission.go)

	links linkBook // links to frontends (frontendlink.go); see linkBook()

	stats Stats
}

// request is a submitted job's state while any task is unlaunched.
type request struct {
	*placement.Request
	app     string
	cons    []placement.Constraint
	user    *sparrowrpc.TUserGroupInfo
	specs   []*sparrowrpc.TTaskSpec
	ratio   float64
	failed  map[string]bool // nodes whose enqueue failed or that were lost
	reprobe int
	// deadline is when unlaunched tasks get extra reservations elsewhere,
	// in case a node monitor holds its reservation but never asks.
	deadline time.Time
	// steered is when r was placed or last given reservations by
	// steerStranded (steer.go).
	steered time.Time
	// loc is the state of tasks that may relax their preferences, nil
	// if none may.
	loc *relaxState
	// hold is the submitJob call waiting for the reservations to be
	// placed (hold.go), nil when holding is disabled. Set before r is
	// published and never replaced, so it may be read without s.mu.
	hold *holdState
	// offerWake, if set, is closed when one of the tasks offered with
	// reservations is answered (offer.go).
	offerWake chan struct{}
	// offerBoot holds, by offered task, the start nonce its node monitor
	// last gave before the offer was sent ("" if none), to judge an
	// "unseen" answer about it (offer.go, resolveOffer).
	offerBoot map[int]string
	// doubted counts r's offers in doubt (offer.go, doubt).
	doubted int
	// gaveUp is why re-placement gave up and reported the unlaunched
	// tasks failed; set when r is dropped so.
	gaveUp error
	// backup holds the reservations kept back while every task is
	// offered, sent only if an offer is declined (offer.go).
	backup []placement.Probe
}

// Stats counts what a scheduler has done; read with Stats().
type Stats struct {
	JobsSubmitted   uint64
	TasksSubmitted  uint64
	TasksLaunched   uint64
	EmptyGetTasks   uint64
	Reservations    uint64
	EnqueueFailures uint64
	// EnqueueBusy counts enqueues put off because every connection of
	// the scheduler's own pool to the node was in use; they are sent
	// again, not counted as failures.
	EnqueueBusy   uint64
	Cancellations uint64
	Reprobes      uint64 // rounds of extra reservations placed
	// Steered counts reservations added on node monitors serving a
	// request's user while its others sat elsewhere (Config.SteerAfter).
	Steered uint64
	// SweepsSaturated counts requests past their reservation timeout
	// given no extra reservations because the fleet was saturated.
	SweepsSaturated uint64
	TasksLost       uint64 // running tasks reported lost with their node
	LateDropped     uint64 // messages about tasks already reported lost
	Untracked       uint64 // launches not tracked: the tracking bound was hit
	// OffersMade counts tasks offered with reservations; OffersTaken
	// those launched at once by the node monitor (or whose answer was
	// lost after sending and counted launched there). OffersInDoubt
	// counts offers whose calls failed after they were sent, and
	// DoubtsDeclined those the node monitor then said it had not taken.
	OffersMade, OffersTaken       uint64
	OffersInDoubt, DoubtsDeclined uint64
	// FetchesAskedAgain counts fetchTask calls asking again about a fetch
	// already answered (the node monitor did not get the answer).
	FetchesAskedAgain uint64
	// BackupsSent counts backup reservations kept back while a job's
	// every task was offered and sent when an offer was declined; those
	// never sent are not counted anywhere.
	BackupsSent    uint64
	ActiveRequests int
	RunningTracked int
	// Locality counts preference relaxation and launch locality.
	Locality LocalityStats
	// Hold counts submitJob calls held on a saturated fleet.
	Hold HoldStats
	// Frontend counts messages to frontends, dropped ones by reason.
	Frontend FrontendStats
}

// New returns a Scheduler that samples node monitors from view.
func New(cfg Config, view NodeView) (*Scheduler, error) {
	if cfg.ProbeRatio == 0 {
		cfg.ProbeRatio = DefaultProbeRatio
	}
	if cfg.NodeLostGrace == 0 {
		cfg.NodeLostGrace = DefaultNodeLostGrace
	}
	if cfg.ReservationTimeout == 0 {
		cfg.ReservationTimeout = DefaultReservationTimeout
	}
	if cfg.LocalityStale <= 0 {
		cfg.LocalityStale = DefaultLocalityStale
	}
	if cfg.LocalityInputBytes <= 0 {
		cfg.LocalityInputBytes = DefaultLocalityInputBytes
	}
	if cfg.MaxHold <= 0 {
		cfg.MaxHold = DefaultMaxHold
	}
	if cfg.LoadStale <= 0 {
		cfg.LoadStale = DefaultLoadStale
	}
	if err := placement.CheckProbeRatio(cfg.ProbeRatio); err != nil {
		return nil, fmt.Errorf("default %w", err)
	}
	if cfg.ConstrainedProbeRatio == 0 {
		cfg.ConstrainedProbeRatio = cfg.ProbeRatio
	}
	if err := placement.CheckProbeRatio(cfg.ConstrainedProbeRatio); err != nil {
		return nil, fmt.Errorf("default constrained %w", err)
	}
	self, err := rpc.ParseHostPort(cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("scheduler address: %w", err)
	}
	seed := cfg.Seed
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("seed randomness: %w", err)
	}
	if seed == 0 {
		seed = binary.LittleEndian.Uint64(b[:8])
	}
	return &Scheduler{
		cfg:          cfg,
		self:         self,
		view:         view,
		log:          cfg.Log.With().Str("component", "scheduler").Logger(),
		nodes:        rpc.NewPool(cfg.RPC, sparrowrpc.NewInternalServiceClient),
		fronts:       rpc.NewPool(cfg.RPC, sparrowrpc.NewFrontendServiceClient),
		rng:          mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		steer:        placement.Steer{After: cfg.SteerAfter},
		requests:     make(map[string]*request),
		frontends:    make(map[string]string),
		running:      make(map[string]map[runningTask]int64),
		fetches:      make(map[fetchKey]fetched),
		noOffer:      make(map[string]bool),
		guidedUntil:  make(map[string]time.Time),
		noOfferQuery: make(map[string]bool),
		offerBoot:    make(map[string]string),
		doubts:       make(map[string]map[offerDoubt]struct{}),
		idPrefix:     hex.EncodeToString(b[8:14]),
		now:          time.Now,
		relaxWake:    make(chan struct{}, 1),
	}, nil
}

// Close releases the scheduler's connections.
func (s *Scheduler) Close() {
	s.nodes.Close()
	s.fronts.Close()
}

// Stats returns a snapshot of the scheduler's counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.ActiveRequests = len(s.requests)
	st.RunningTracked = s.tracked
	st.Locality.PricesVersion = s.prices.Version
	st.Locality.PricesFresh = s.pricesFresh(s.now())
	st.Locality.Relaxing = len(s.relaxQ)
	st.Hold = s.hold.stats
	st.Hold.Held = s.hold.held
	st.Hold.Seconds.Buckets = append([]uint64(nil), s.hold.stats.Seconds.Buckets...)
	st.Frontend = s.links.snapshot(len(s.frontends))
	return st
}

func incomplete(format string, args ...any) error {
	return &sparrowrpc.IncompleteRequestException{Message: fmt.Sprintf(format, args...)}
}

// SubmitJob implements SchedulerService. It validates the request, places
// ceil(d·m) reservations and returns once they are on their way, or, with
// Config.MaxHeldJobs > 0, once node monitors have accepted them (a
// saturated fleet holds the call: hold.go); tasks are then handed out by
// GetTask. A bad request is refused whole with an
// IncompleteRequestException naming the fault, and so is a job the
// saturated fleet could not place within the hold's bounds. With
// Config.MaxQueueWait it is first held, unplaced, while the expected
// queue wait of its candidates is too long (admission.go).
func (s *Scheduler) SubmitJob(ctx context.Context, req *sparrowrpc.TSchedulingRequest) error {
	job, err := ParseRequest(req, Ratios{Default: s.cfg.ProbeRatio, Constrained: s.cfg.ConstrainedProbeRatio})
	if err != nil {
		s.log.Info().Err(err).Msg("refused scheduling request")
		return incomplete("%v", err)
	}
	if len(job.Tasks) == 0 {
		return nil
	}
	candidates := s.view.Candidates(job.App)
	if len(candidates) == 0 {
		return incomplete("no live node monitor hosts app %q", job.App)
	}
	if candidates, err = placement.Filter(candidates, job.Constraints); err != nil {
		return incomplete("app %q: %v", job.App, err)
	}

	s.mu.Lock()
	if candidates, err = s.admit(ctx, job.App, job.Constraints, candidates, len(job.Tasks)); err != nil {
		s.mu.Unlock()
		return err
	}
	id := job.RequestID
	if id == "" {
		// A frontend may have chosen an id that looks like ours; skip it.
		for id == "" || s.requests[id] != nil {
			s.nextID++
			id = fmt.Sprintf("%s-%d", s.idPrefix, s.nextID)
		}
	} else if _, dup := s.requests[id]; dup {
		s.mu.Unlock()
		return incomplete("request id %q is already in use", id)
	}
	steerAt := time.Now()
	candidates = s.steer.Candidates(s.rng, job.User.User, candidates, steerAt)
	probes, err := s.sampler.Plan(s.rng, candidates, job.Tasks, job.ProbeRatio)
	if err != nil {
		s.mu.Unlock()
		return incomplete("app %q: %v", job.App, err)
	}
	r := &request{
		Request: placement.NewRequest(id, job.Tasks),
		app:     job.App, cons: job.Constraints, user: job.User, specs: job.Specs, ratio: job.ProbeRatio,
	}
	if s.cfg.ReservationTimeout > 0 {
		r.deadline = time.Now().Add(s.cfg.ReservationTimeout)
	}
	if s.cfg.MaxHeldJobs > 0 {
		r.hold = newHoldState(time.Now())
	}
	var now time.Time
	if len(job.Relax) > 0 {
		now = s.now()
		r.loc = newRelaxState(job, now, s.cfg.LocalityInputBytes)
	}
	probes, r.backup = s.splitBackups(r, probes)
	r.steered = steerAt
	if s.cfg.SteerAfter > 0 {
		for _, p := range probes {
			s.steer.Probed(job.User.User, p.Node.Addr, steerAt)
		}
	}
	r.AddProbes(probes)
	s.admitted(probes)
	counted := countHeld(r, probes)
	s.requests[id] = r
	offers := s.planOffers(r, probes)
	var relaxed []placement.Probe
	if r.loc != nil {
		if s.pricesFresh(now) {
			relaxed = s.relaxLocked(r, now, true)
		}
		s.scheduleRelax(r, now)
	}
	s.stats.JobsSubmitted++
	s.stats.TasksSubmitted += uint64(len(job.Tasks))
	s.mu.Unlock()

	s.log.Debug().Str("request", id).Str("app", job.App).Int("tasks", len(job.Tasks)).
		Int("nodes", len(probes)+len(relaxed)).Msg("job submitted")
	s.enqueueOffers(r, probes, offers, counted)
	s.enqueue(r, relaxed)
	if r.hold != nil {
		return s.await(ctx, r)
	}
	return nil
}

// busyRetry is the least pause before an enqueue our own pool could not
// send is sent again; the pause is drawn from [busyRetry, 2·busyRetry).
const busyRetry = 10 * time.Millisecond

// enqueue sends each probe's reservations to its node monitor, in
// parallel. A held call (hold.go) does not wait for their answers.
func (s *Scheduler) enqueue(r *request, probes []placement.Probe) {
	s.enqueueAs(r, probes, false)
}

// enqueueOne sends p, with task offer offered if it is not -1; counted
// says r's held call waits for the answer.
func (s *Scheduler) enqueueOne(r *request, p placement.Probe, counted bool, offer int) {
	msg := &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: r.app, User: r.user, RequestId: r.ID, SchedulerAddress: s.self, NumTasks: int32(p.Count),
	}
	var accepted, launched, guided bool
	var boot string
	var err error
	if offer >= 0 {
		accepted, launched, guided, boot, err = s.offerCall(r, msg, p.Node.Addr, offer)
	} else {
		err = s.nodes.Call(context.Background(), p.Node.Addr, func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
			var err error
			accepted, err = c.EnqueueTaskReservations(ctx, msg)
			return err
		})
	}
	s.mu.Lock()
	if guided {
		s.guidedUntil[p.Node.Addr] = time.Now().Add(guidedOfferPause)
	}
	if boot != "" {
		s.offerBoot[p.Node.Addr] = boot
	}
	if offer >= 0 && s.offerAnswered(r, p.Node.Addr, offer, launched, err) {
		s.mu.Unlock()
		s.enqueueOne(r, p, counted, -1)
		return
	}
	if errors.Is(err, rpc.ErrBusy) && s.requests[r.ID] == r {
		// The call never left: every connection of our own pool to the
		// node was in use. That says nothing about the node, so it is not
		// struck off for the request (a task whose preferred nodes were
		// all struck off so would fail): the same probe is sent again
		// after a short jittered pause, while the request lives.
		s.stats.EnqueueBusy++
		pause := busyRetry + time.Duration(s.rng.Int64N(int64(busyRetry)))
		s.mu.Unlock()
		time.AfterFunc(pause, func() { s.enqueueOne(r, p, counted, -1) })
		return
	}
	s.stats.Reservations += uint64(p.Count)
	if err == nil && !accepted {
		s.lastFull = s.now() // the fleet is saturated (sweep.go)
	}
	if handled, withdraw := s.enqueued(r, p, counted, accepted, err); handled {
		if withdraw {
			s.stats.Cancellations++
		}
		s.mu.Unlock()
		if withdraw {
			s.cancel(r.ID, p.Node.Addr)
		}
		return
	}
	if err == nil && accepted {
		s.mu.Unlock()
		return
	}
	s.stats.EnqueueFailures++
	s.log.Warn().Err(err).Bool("refused", err == nil).Str("request", r.ID).Str("node", p.Node.Addr).
		Msg("enqueue failed; re-placing its reservations")
	s.replace(r, p.Node.Addr)
}

// replace drops addr's reservations for r, if addr is not empty, and
// probes again for the tasks left without one. Called with s.mu held;
// releases it.
func (s *Scheduler) replace(r *request, addr string) {
	if s.requests[r.ID] != r {
		s.mu.Unlock()
		return
	}
	if addr != "" {
		r.DropNode(addr)
		if r.failed == nil {
			r.failed = make(map[string]bool)
		}
		r.failed[addr] = true
	}
	s.reprobe(r, r.Uncovered())
}

// reprobe places reservations for tasks on live nodes that have not failed
// for r. If that is impossible, or r has been re-probed too often, its
// unlaunched tasks are reported failed and r is dropped. Called with s.mu
// held; releases it.
func (s *Scheduler) reprobe(r *request, tasks []placement.Task) {
	if len(tasks) == 0 {
		s.mu.Unlock()
		return
	}
	var candidates []placement.Node
	for _, n := range s.view.Candidates(r.app) {
		if !r.failed[n.Addr] {
			candidates = append(candidates, n)
		}
	}
	// Constraints are re-checked; when none match, Plan reports no candidates.
	candidates, _ = placement.Filter(candidates, r.cons)
	r.reprobe++
	s.stats.Reprobes++
	var probes []placement.Probe
	var err error
	if r.reprobe > maxReprobes {
		err = fmt.Errorf("gave up after %d rounds of re-placing reservations", maxReprobes)
	} else {
		probes, err = s.sampler.Plan(s.rng, candidates, tasks, r.ratio)
	}
	if err != nil {
		delete(s.requests, r.ID)
		s.unrelax(r)
		r.gaveUp = err
		if s.failHeld(r, err) {
			s.mu.Unlock() // the held call refuses the job with err
			return
		}
		s.mu.Unlock()
		s.log.Error().Err(err).Str("request", r.ID).Int("unlaunched", r.Unlaunched()).
			Msg("cannot place the request's remaining tasks; reporting them failed to the frontend")
		s.failUnlaunched(r, err)
		return
	}
	r.AddProbes(probes)
	counted := countHeld(r, probes)
	s.mu.Unlock()
	s.enqueueAs(r, probes, counted)
}

// failUnlaunched tells the frontend that r's unlaunched tasks will not run.
// A task offered and not yet answered is reported when its offer is
// declined (offerDeclined), and not at all if it is taken.
func (s *Scheduler) failUnlaunched(r *request, cause error) {
	var fail []*sparrowrpc.TTaskSpec
	s.mu.Lock()
	for i, spec := range r.specs {
		if !r.IsLaunched(i) && !r.IsOffered(i) {
			fail = append(fail, spec)
		}
	}
	s.mu.Unlock()
	for _, spec := range fail {
		id := &sparrowrpc.TFullTaskId{TaskId: spec.TaskId, RequestId: r.ID, AppId: r.app, SchedulerAddress: s.self}
		_ = s.deliver(r.app, id, sparrowrpc.STATUS_TASK_FAILED, []byte(cause.Error())) // deliver counts failures
	}
}

// GetTask implements GetTaskService: late binding. The first node monitors
// to ask get the request's tasks; later ones get an empty list. Once every
// task has launched, the request is forgotten and its leftover reservations
// are cancelled.
func (s *Scheduler) GetTask(ctx context.Context, requestID string, nm *sparrowrpc.THostPort) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	return s.getTask(requestID, rpc.HostPortString(nm), 0), nil
}

// getTask answers node monitor addr's getTask, or its fetchTask fetch
// (0: a getTask), which it records in s.fetches with the task handed out.
func (s *Scheduler) getTask(requestID, addr string, fetch int64) []*sparrowrpc.TTaskLaunchSpec {
	s.mu.Lock()
	r, ok := s.requests[requestID]
	if ok && awaiting(r) > 0 {
		s.awaitOffers(r)
		r, ok = s.requests[requestID]
	}
	if !ok {
		s.stats.EmptyGetTasks++
		s.heldGetTask(nil)
		s.fetchAnswered(addr, fetch, runningTask{}, nil)
		s.mu.Unlock()
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	var spec *sparrowrpc.TTaskLaunchSpec
	var task runningTask
	idx, got := r.Assign(addr)
	if got {
		s.launched(r, idx, addr, fetch)
		spec = &sparrowrpc.TTaskLaunchSpec{TaskId: r.specs[idx].TaskId, Message: r.specs[idx].Message}
		task = runningTask{app: r.app, request: r.ID, task: spec.TaskId}
	} else {
		s.stats.EmptyGetTasks++
	}
	s.fetchAnswered(addr, fetch, task, spec)
	// Sharing probes across constrained tasks can use up the last
	// reservation another constrained task could run on; that task must be
	// probed for again or the job would never finish.
	var strand []placement.Task
	if !r.Launched() && r.HasConstrained() && !r.Holds(addr) {
		strand = r.Uncovered()
	}
	cancel := s.forgetLaunched(r)
	s.heldGetTask(r)
	s.mu.Unlock()

	for _, p := range cancel {
		go s.cancel(requestID, p.Node.Addr)
	}
	if len(strand) > 0 {
		s.mu.Lock()
		if s.requests[requestID] == r {
			s.reprobe(r, r.Uncovered())
		} else {
			s.mu.Unlock()
		}
	}
	if !got {
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	return []*sparrowrpc.TTaskLaunchSpec{spec}
}

// launched records task idx of r handed to addr, by getTask (of fetch, 0
// for none) or a taken offer: tracked as running there, and counted.
// Called with s.mu held.
func (s *Scheduler) launched(r *request, idx int, addr string, fetch int64) {
	if s.cfg.SteerAfter > 0 {
		s.steer.Served(r.user.User, addr, time.Now())
	}
	s.track(addr, runningTask{app: r.app, request: r.ID, task: r.specs[idx].TaskId}, fetch)
	s.countLaunch(r, idx, addr)
	s.stats.TasksLaunched++
}

// forgetLaunched drops r once every task has launched, and returns the
// leftover reservations to cancel (none with NoCancel). Called with s.mu
// held.
func (s *Scheduler) forgetLaunched(r *request) []placement.Probe {
	if !r.Launched() || s.requests[r.ID] != r {
		return nil
	}
	delete(s.requests, r.ID)
	s.unrelax(r)
	if s.cfg.NoCancel {
		return nil
	}
	cancel := r.Outstanding()
	s.stats.Cancellations += uint64(len(cancel))
	return cancel
}

func (s *Scheduler) cancel(requestID, addr string) {
	err := s.nodes.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
		return c.CancelTaskReservations(ctx, &sparrowrpc.TCancelTaskReservationsRequest{RequestId: requestID})
	})
	if err != nil {
		// Harmless: the node's getTask for this request will get nothing.
		s.log.Debug().Err(err).Str("request", requestID).Str("node", addr).Msg("cancel failed")
	}
}
